"""What batch runs need from the registry: lookups by spec hash (an op already verified, a run left
running by an interrupted batch) and moving one run between registries.

A Ray worker runs the agent loop against a throwaway registry on its own disk and returns
`export_run`'s plain data; the driver replays it into the real registry with `import_run`, in one
transaction, so no SQLite file is ever shared over a network and a half-imported run cannot exist.
Functions here take arguments and return transaction bodies (or take an open Session), as in
registry.runs; registry.store runs them.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from opforge.registry import kernels, runs, specs
from opforge.registry.errors import RegistryError
from opforge.registry.models import Candidate, Evaluation, LLMCall, Run, Spec, Version, utcnow
from opforge.registry.rows import RunRow
from opforge.registry.validation import check_verdict, evaluation_columns, require_json, require_text

T = TypeVar("T")
Work = Callable[[Session], T]


# -- lookups by spec hash ------------------------------------------------------------------------


def verified_candidate(spec_sha256: str, backend: str, hardware: str) -> Work[int | None]:
    """The newest candidate of the spec with this source hash whose latest evaluation on
    `hardware` is correct; None when the op has no verified kernel there yet."""

    def work(s: Session) -> int | None:
        latest = (select(Evaluation.id).where(Evaluation.candidate_id == Candidate.id,
                                                Evaluation.hardware == hardware)
                  .order_by(Evaluation.id.desc()).limit(1).correlate(Candidate).scalar_subquery())
        stmt = (select(Candidate.id)
                .join(Spec, Spec.id == Candidate.spec_id)
                .join(Evaluation, Evaluation.id == latest)
                .where(Spec.sha256 == spec_sha256, Candidate.backend == backend, Evaluation.correct.is_(True))
                .order_by(Candidate.id.desc()).limit(1))
        return s.scalar(stmt)

    return work


def open_run(spec_sha256: str, backend: str, hardware: str) -> Work[RunRow | None]:
    """The newest run of the spec with this source hash still marked "running" (its process was
    killed) or "interrupted" (stopped by a signal) for this backend and hardware; None if there is none."""

    def work(s: Session) -> RunRow | None:
        stmt = (select(Run).join(Spec, Spec.id == Run.spec_id)
                .where(Spec.sha256 == spec_sha256, Run.backend == backend, Run.hardware == hardware,
                       Run.status.in_(("running", "interrupted")))
                .order_by(Run.id.desc()).limit(1))
        run = s.scalars(stmt).first()
        return None if run is None else RunRow.from_orm(run)

    return work


# -- export ----------------------------------------------------------------------------------------

RUN_FIELDS = ("run_key", "op", "backend", "drafter", "hardware", "status", "config", "best_candidate_id",
              "stop_reason", "error", "tokens", "started_at", "finished_at")


def export_run(run_key: str) -> Work[dict[str, Any]]:
    """Everything one run produced, as JSON-ready data: its spec, the run row, the candidates it
    drafted with every evaluation, its LLM calls and the promotions of its candidates."""

    def work(s: Session) -> dict[str, Any]:
        run = runs.run_by_key(s, run_key)
        spec = s.get_one(Spec, run.spec_id)
        cands = s.scalars(select(Candidate).where(Candidate.run_id == run.id).order_by(Candidate.id)).all()
        ids = [c.id for c in cands]
        calls = s.scalars(select(LLMCall).where(LLMCall.run_id == run.id).order_by(LLMCall.id)).all()
        promos = s.scalars(select(Version).where(Version.candidate_id.in_(ids)).order_by(Version.id)).all()
        return {
            "spec": {"name": spec.name, "path": spec.path, "source": spec.source},
            "run": {f: _plain(getattr(run, f)) for f in RUN_FIELDS},
            "candidates": [_candidate(s, c) for c in cands],
            "llm_calls": [{f: _plain(getattr(c, f)) for f in (*runs.CALL_FIELDS, "candidate_id", "round")}
                          for c in calls],
            "promotions": [{"candidate_id": v.candidate_id, "note": v.note} for v in promos],
        }

    return work


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def _candidate(s: Session, c: Candidate) -> dict[str, Any]:
    evals = s.scalars(select(Evaluation).where(Evaluation.candidate_id == c.id).order_by(Evaluation.id)).all()
    return {"id": c.id, "source": c.source, "backend": c.backend, "drafter": c.drafter,
            "parent_id": c.parent_id, "meta": c.meta, "round": c.round, "created_at": _plain(c.created_at),
            "evaluations": [{"hardware": e.hardware, "hardware_info": e.hardware_info, "verdict": e.verdict,
                             "created_at": _plain(e.created_at)} for e in evals]}


# -- import ----------------------------------------------------------------------------------------


def import_run(bundle: dict[str, Any], spec_path: str | None = None) -> Work[RunRow]:
    """Replay `export_run`'s data: the spec and candidates are deduplicated as record_spec and
    record_candidate do, evaluations and LLM calls are appended, the run keeps its key, and the
    run's promotions are repeated. `spec_path` overrides the path the worker saw."""
    try:
        spec, run_data = bundle["spec"], bundle["run"]
        require_text("run_key", run_data["run_key"])
        cands, calls = list(bundle["candidates"]), list(bundle["llm_calls"])
    except (KeyError, TypeError) as exc:
        raise RegistryError(f"not an exported run: missing {exc}") from exc
    for cand in cands:
        for ev in cand.get("evaluations", []):
            check_verdict(ev["verdict"])
    require_json("bundle", bundle)

    def work(s: Session) -> RunRow:
        spec_id = specs.spec_id(s, spec["name"], spec_path or spec["path"], spec["source"])
        run = _import_run_row(s, run_data, spec_id, spec_path)
        id_map: dict[int, int] = {}
        for cand in cands:
            id_map[cand["id"]] = _import_candidate(s, cand, spec_id, run.id, id_map)
        for call in calls:
            fields = {k: call[k] for k in runs.CALL_FIELDS}
            s.add(LLMCall(run_id=run.id, candidate_id=id_map.get(call.get("candidate_id")),
                          round=call.get("round"), **fields))
        run.best_candidate_id = id_map.get(run_data.get("best_candidate_id"))
        s.flush()
        for promo in bundle.get("promotions", []):
            if promo["candidate_id"] in id_map:
                kernels.promote(s, id_map[promo["candidate_id"]], promo.get("note"))
        s.refresh(run)
        return RunRow.from_orm(run)

    return work


def _when(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def _stamp(value: str | None) -> datetime:
    return _when(value) or utcnow()


def _import_run_row(s: Session, data: dict[str, Any], spec_id: int, spec_path: str | None) -> Run:
    if s.scalar(select(Run.id).where(Run.run_key == data["run_key"])) is not None:
        raise RegistryError(f"run {data['run_key']} already exists")
    config = dict(data["config"]) | ({"spec_path": spec_path} if spec_path else {})
    run = Run(run_key=data["run_key"], op=data["op"], spec_id=spec_id, backend=data["backend"],
              drafter=data["drafter"], hardware=data["hardware"], status=data["status"], config=config,
              stop_reason=data.get("stop_reason"), error=data.get("error"), tokens=int(data.get("tokens") or 0),
              started_at=_stamp(data.get("started_at")), finished_at=_when(data.get("finished_at")))
    s.add(run)
    s.flush()
    return run


def _import_candidate(s: Session, data: dict[str, Any], spec_id: int, run_id: int, id_map: dict[int, int]) -> int:
    digest = specs.sha256_text(data["source"])
    key = (Candidate.spec_id == spec_id, Candidate.sha256 == digest, Candidate.backend == data["backend"])
    cand_id = s.scalar(select(Candidate.id).where(*key))
    if cand_id is None:  # a source the registry already holds keeps the run that first drafted it
        cand = Candidate(spec_id=spec_id, source=data["source"], sha256=digest, backend=data["backend"],
                         drafter=data["drafter"], parent_id=id_map.get(data.get("parent_id")),
                         meta=data.get("meta"), run_id=run_id, round=data.get("round"),
                         created_at=_stamp(data.get("created_at")))
        s.add(cand)
        s.flush()
        cand_id = cand.id
    for ev in data.get("evaluations", []):
        s.add(Evaluation(candidate_id=cand_id, hardware=ev["hardware"], hardware_info=ev["hardware_info"],
                         created_at=_stamp(ev.get("created_at")), **evaluation_columns(ev["verdict"])))
    s.flush()
    return cand_id
