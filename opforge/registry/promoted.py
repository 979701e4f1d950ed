"""The promotion policy and the promoted kernels as the exporter reads them.

Policy: a candidate is promotable when its latest evaluation on the key's hardware is correct, its
numerics were checked (its ladder level is one of harness.ladder.PROMOTABLE: emulated, device,
profiled) and, where that evaluation was timed, the kernel beat PyTorch eager there. An evaluation
with no level was recorded before the ladder, when `correct` always meant the numerics ran (the
harness had no other way to be correct), so it counts by `correct` alone. `opforge promote`
applies the policy (`--force` waives the speed rule only), the agent loop applies it to a run's
best, and `opforge promote --auto` picks the best promotable candidate of every (op, backend,
hardware) that has one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from opforge.harness.ladder import PROMOTABLE
from opforge.registry.models import Candidate, Evaluation, Spec, Version
from opforge.registry.rows import EvaluationRow, VersionRow


def why_not_promotable(correct: bool | None, speedup_eager: float | None, level: str | None = None) -> str | None:
    """None when promotable, else the reason in a few words (naming the level where it has one)."""
    rule = f"only {', '.join(PROMOTABLE[:-1])} or {PROMOTABLE[-1]} is promotable"
    if not correct:
        return "its latest evaluation is not correct" + (f" (level {level}; {rule})" if level else "")
    if level is not None and level not in PROMOTABLE:
        return f"its latest evaluation reached only level {level} ({rule})"
    if speedup_eager is not None and speedup_eager <= 1.0:
        return f"it was timed at {speedup_eager:.2f}x PyTorch eager (needs > 1x)"
    return None


def current_spec_ids() -> Select:
    """The newest spec of each op name: kernels verified against an older revision are stale."""
    return select(func.max(Spec.id)).group_by(Spec.name)


def latest_evaluations(s: Session, op: str | None) -> list[tuple[Candidate, Evaluation, str]]:
    """(candidate, its latest evaluation per hardware, op name) for every evaluated candidate of
    each op's current spec."""
    # The latest evaluation of a candidate on each hardware: max(id) per (candidate, hardware).
    ids = select(func.max(Evaluation.id)).group_by(Evaluation.candidate_id, Evaluation.hardware)
    stmt = (
        select(Candidate, Evaluation, Spec.name)
        .join(Evaluation, Evaluation.candidate_id == Candidate.id)
        .join(Spec, Spec.id == Candidate.spec_id)
        .where(Evaluation.id.in_(ids.scalar_subquery()), Spec.id.in_(current_spec_ids().scalar_subquery()))
        .order_by(Candidate.id)
    )
    if op is not None:
        stmt = stmt.where(Spec.name == op)
    return [(c, e, name) for c, e, name in s.execute(stmt)]


def best_promotable(s: Session, op: str | None) -> list[int]:
    """Per (op, backend, hardware): the promotable candidate to make active — the fastest where
    timed, else the newest correct one. Keys whose active version is already it are left out."""
    best: dict[tuple[str, str, str], tuple[tuple, int]] = {}
    for cand, ev, name in latest_evaluations(s, op):
        if why_not_promotable(ev.correct, ev.speedup_eager, ev.level) is not None:
            continue
        rank = (ev.speedup_eager is not None, ev.speedup_eager or 0.0, cand.id)
        key = (name, cand.backend, ev.hardware)
        if key not in best or rank > best[key][0]:
            best[key] = (rank, cand.id)
    chosen = []
    for (name, backend, hardware), (_, cand_id) in sorted(best.items()):
        active = s.scalars(select(Version.candidate_id).where(
            Version.op == name, Version.backend == backend, Version.hardware == hardware,
            Version.active.is_(True))).first()
        if active != cand_id:
            chosen.append(cand_id)
    return chosen


@dataclass(frozen=True)
class PromotedKernel:
    """An active version with everything an export needs: its kernel, evaluation and spec."""

    version: VersionRow
    source: str
    candidate_sha256: str
    drafter: str
    meta: dict[str, Any] | None
    evaluation: EvaluationRow
    spec_name: str
    spec_source: str
    spec_sha256: str
    problem: str | None  # why it should not ship any more (re-verified incorrect, spec revised), or None


def promoted_kernels(s: Session, backend: str | None) -> list[PromotedKernel]:
    """Every active version (optionally of one backend), sorted by op, backend and hardware."""
    stmt = select(Version).where(Version.active.is_(True)).order_by(Version.op, Version.backend, Version.hardware)
    if backend is not None:
        stmt = stmt.where(Version.backend == backend)
    rows = []
    current = set(s.scalars(current_spec_ids()))
    for v in s.scalars(stmt):
        cand = s.get_one(Candidate, v.candidate_id)
        spec = s.get_one(Spec, cand.spec_id)
        ev = s.get_one(Evaluation, v.evaluation_id)
        latest = s.scalars(select(Evaluation).where(Evaluation.candidate_id == cand.id, Evaluation.hardware == v.hardware)
                           .order_by(Evaluation.id.desc()).limit(1)).one()
        problem = ("its spec has been revised since it was verified" if spec.id not in current
                   else f"re-verified incorrect on {v.hardware} (evaluation #{latest.id})" if not latest.correct else None)
        rows.append(PromotedKernel(
            version=VersionRow.from_orm(v), source=cand.source, candidate_sha256=cand.sha256,
            drafter=cand.drafter, meta=dict(cand.meta) if cand.meta else None,
            evaluation=EvaluationRow.from_orm(ev), spec_name=spec.name, spec_source=spec.source,
            spec_sha256=spec.sha256, problem=problem,
        ))
    return rows
