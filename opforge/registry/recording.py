"""Recording one verification: spec, candidate and evaluation in one call, used by the CLI and the agents."""
from __future__ import annotations

from typing import Any, Protocol

from opforge.backends import DEFAULT
from opforge.registry.store import Registry


class _Spec(Protocol):
    name: str
    path: Any
    source: str


class _Hardware(Protocol):
    fingerprint: str

    def info(self) -> dict: ...


def record_verification(reg: Registry, spec: _Spec, source: str, verdict: dict, hardware: _Hardware,
                        drafter: str, parent_id: int | None = None, meta: dict | None = None, *,
                        run_id: int | None = None, round: int | None = None) -> tuple[int, int]:
    """Store the spec (deduplicated), the candidate (deduplicated; `run_id` and `round` only mark a
    new one) and this verdict; returns (candidate id, evaluation id)."""
    spec_id = reg.record_spec(spec.name, str(spec.path), spec.source)
    candidate_id = reg.record_candidate(spec_id, source, verdict.get("backend", DEFAULT), drafter,
                                        parent_id=parent_id, meta=meta, run_id=run_id, round=round)
    evaluation_id = reg.record_evaluation(candidate_id, hardware.fingerprint, hardware.info(), verdict)
    return candidate_id, evaluation_id
