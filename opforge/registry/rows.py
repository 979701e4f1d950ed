"""Plain, frozen result rows returned by the Registry.

The registry never hands out ORM objects: its sessions close before it
returns, and a detached ORM object fails on the first lazy attribute access.
JSON fields (dicts, lists) are fresh copies owned by the caller.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from opforge.registry.models import Evaluation, Review, Run, Version


@dataclass(frozen=True)
class EvaluationRow:
    id: int
    candidate_id: int
    hardware: str
    hardware_info: dict[str, Any]
    correct: bool
    failed_step: str | None  # the step that failed and the check inside it (harness/ladder.py)
    failed_check: str | None
    reasons: list[str]
    verdict: dict[str, Any]
    timings: dict[str, Any] | None
    kernel_ms: float | None
    speedup_eager: float | None
    created_at: datetime
    level: str | None = None  # the ladder's rung (harness.ladder.LEVELS); None: a verdict from before it
    verified_on: str | None = None  # where its numerics ran: "cpu:triton-interpreter-3.5.0", "nvidia-h200"

    @classmethod
    def from_orm(cls, ev: Evaluation) -> EvaluationRow:
        return cls(
            id=ev.id,
            candidate_id=ev.candidate_id,
            hardware=ev.hardware,
            hardware_info=copy.deepcopy(ev.hardware_info),
            correct=ev.correct,
            failed_step=ev.failed_step,
            failed_check=ev.failed_check,
            reasons=list(ev.reasons),
            verdict=copy.deepcopy(ev.verdict),
            timings=copy.deepcopy(ev.timings),
            kernel_ms=ev.kernel_ms,
            speedup_eager=ev.speedup_eager,
            created_at=ev.created_at,
            level=ev.level,
            verified_on=ev.verified_on,
        )


@dataclass(frozen=True)
class KernelRow:
    """One candidate with the outcome of its latest evaluation (None if never evaluated)."""

    candidate_id: int
    spec_id: int
    op: str
    backend: str
    drafter: str
    parent_id: int | None
    created_at: datetime
    evaluation_id: int | None
    correct: bool | None
    failed_step: str | None  # None when no step failed (or never evaluated)
    failed_check: str | None
    hardware: str | None
    kernel_ms: float | None
    speedup_eager: float | None
    first_reason: str | None
    active: bool
    run_id: int | None = None  # the run that first drafted it, and in which round
    round: int | None = None
    level: str | None = None  # the latest evaluation's rung of the verification ladder
    verified_on: str | None = None


@dataclass(frozen=True)
class CandidateDetail:
    id: int
    spec_id: int
    op: str
    spec_path: str
    source: str
    sha256: str
    backend: str
    drafter: str
    parent_id: int | None
    meta: dict[str, Any] | None
    created_at: datetime
    evaluations: tuple[EvaluationRow, ...]  # oldest first
    run_id: int | None = None
    round: int | None = None


@dataclass(frozen=True)
class VersionRow:
    id: int
    op: str
    backend: str
    hardware: str
    number: int
    candidate_id: int
    evaluation_id: int
    promoted_at: datetime
    active: bool
    note: str | None

    @classmethod
    def from_orm(cls, v: Version) -> VersionRow:
        return cls(
            id=v.id,
            op=v.op,
            backend=v.backend,
            hardware=v.hardware,
            number=v.number,
            candidate_id=v.candidate_id,
            evaluation_id=v.evaluation_id,
            promoted_at=v.promoted_at,
            active=v.active,
            note=v.note,
        )


@dataclass(frozen=True)
class RunRow:
    id: int
    run_key: str
    op: str
    spec_id: int
    backend: str
    drafter: str
    hardware: str
    status: str  # one of registry.models.RUN_STATUSES
    config: dict[str, Any]
    best_candidate_id: int | None
    stop_reason: str | None
    error: str | None
    tokens: int
    started_at: datetime
    finished_at: datetime | None  # None while running

    @classmethod
    def from_orm(cls, r: Run) -> RunRow:
        return cls(
            id=r.id,
            run_key=r.run_key,
            op=r.op,
            spec_id=r.spec_id,
            backend=r.backend,
            drafter=r.drafter,
            hardware=r.hardware,
            status=r.status,
            config=copy.deepcopy(r.config),
            best_candidate_id=r.best_candidate_id,
            stop_reason=r.stop_reason,
            error=r.error,
            tokens=r.tokens,
            started_at=r.started_at,
            finished_at=r.finished_at,
        )


@dataclass(frozen=True)
class ReviewRow:
    id: int
    candidate_id: int
    decision: str  # one of registry.models.REVIEW_DECISIONS
    comment: str | None
    reviewer: str | None
    created_at: datetime

    @classmethod
    def from_orm(cls, r: Review) -> ReviewRow:
        return cls(id=r.id, candidate_id=r.candidate_id, decision=r.decision, comment=r.comment,
                   reviewer=r.reviewer, created_at=r.created_at)


@dataclass(frozen=True)
class OpSummary:
    """One op in the registry: how many candidates, how many verified, its best speedup."""

    op: str
    candidates: int
    verified: int  # candidates whose latest evaluation is correct
    best_speedup_eager: float | None
    active_versions: int  # (backend, hardware) keys with an active version
    last_activity: datetime
