"""Queries over candidates and versions: kernel listings with their latest evaluation, promotion.

Functions here take an open Session and return plain rows; registry.store runs
them inside its transactions.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ScalarSelect, Select, exists, func, select
from sqlalchemy.orm import Session

from opforge.registry.errors import RegistryError
from opforge.registry.models import Candidate, Evaluation, Spec, Version
from opforge.registry.promoted import why_not_promotable
from opforge.registry.rows import EvaluationRow, KernelRow, VersionRow


def latest_evaluation_id() -> ScalarSelect[Any]:
    """The id of the latest evaluation of `Candidate`, correlated to the enclosing query."""
    # max(id) per candidate walks ix_evaluations_candidate_id_id, so cost
    # grows with the rows returned, not with the evaluation count.
    return (
        select(func.max(Evaluation.id))
        .where(Evaluation.candidate_id == Candidate.id)
        .correlate(Candidate)
        .scalar_subquery()
    )


def kernel_select() -> Select[Any]:
    """Candidates joined to their spec, latest evaluation and active flag; add where/order/limit."""
    is_active = (
        exists()
        .where(Version.candidate_id == Candidate.id, Version.active.is_(True))
        .correlate(Candidate)
    )
    return (
        select(
            Candidate.id, Candidate.spec_id, Spec.name, Candidate.backend, Candidate.drafter,
            Candidate.parent_id, Candidate.created_at, Evaluation.id, Evaluation.correct,
            Evaluation.failed_step, Evaluation.failed_check, Evaluation.hardware, Evaluation.kernel_ms,
            Evaluation.speedup_eager, Evaluation.reasons, is_active.label("active"),
            Candidate.run_id, Candidate.round, Evaluation.level, Evaluation.verified_on,
        )
        .join(Spec, Spec.id == Candidate.spec_id)
        .outerjoin(Evaluation, Evaluation.id == latest_evaluation_id())
    )


def kernel_row(r: Any) -> KernelRow:
    (cand_id, spec_id, op, backend, drafter, parent_id, created_at, ev_id, correct, failed_step,
     failed_check, hardware, kernel_ms, speedup, reasons, active, run_id, round_, level, verified_on) = r
    failed = correct is False
    return KernelRow(
        candidate_id=cand_id, spec_id=spec_id, op=op, backend=backend, drafter=drafter,
        parent_id=parent_id, created_at=created_at, evaluation_id=ev_id, correct=correct,
        failed_step=failed_step, failed_check=failed_check, hardware=hardware, kernel_ms=kernel_ms,
        speedup_eager=speedup,
        first_reason=reasons[0] if failed and reasons else None, active=bool(active),
        run_id=run_id, round=round_, level=level, verified_on=verified_on,
    )


def latest_evaluation(s: Session, candidate_id: int) -> EvaluationRow | None:
    ev = s.scalars(
        select(Evaluation)
        .where(Evaluation.candidate_id == candidate_id)
        .order_by(Evaluation.id.desc())
        .limit(1)
    ).first()
    return None if ev is None else EvaluationRow.from_orm(ev)


def promote(s: Session, candidate_id: int, note: str | None, force: bool = False) -> VersionRow:
    cand = s.get(Candidate, candidate_id)
    if cand is None:
        raise RegistryError(f"candidate {candidate_id} does not exist")
    ev = _promotable_evaluation(s, candidate_id, force)
    op = s.get_one(Spec, cand.spec_id).name
    key = (Version.op == op, Version.backend == cand.backend, Version.hardware == ev.hardware)
    current = s.scalars(select(Version).where(*key, Version.active.is_(True))).first()
    if current is not None and current.candidate_id == candidate_id:
        return VersionRow.from_orm(current)
    number = (s.scalar(select(func.max(Version.number)).where(*key)) or 0) + 1
    if current is not None:
        current.active = False
        # Flush now: the partial unique index allows one active row per key,
        # so the old one must be inactive before the new one is inserted.
        s.flush()
    version = Version(
        op=op, backend=cand.backend, hardware=ev.hardware, number=number,
        candidate_id=candidate_id, evaluation_id=ev.id, active=True, note=note,
    )
    s.add(version)
    s.flush()
    return VersionRow.from_orm(version)


def _promotable_evaluation(s: Session, candidate_id: int, force: bool) -> Evaluation:
    """The newest of the candidate's latest-per-hardware evaluations that the policy accepts
    (`force` waives the speed rule, never correctness or the level); RegistryError with the
    policy's reason if there is none."""
    evals = s.scalars(select(Evaluation).where(Evaluation.candidate_id == candidate_id)
                      .order_by(Evaluation.id.desc())).all()
    latest: dict[str, Evaluation] = {}
    for ev in evals:
        latest.setdefault(ev.hardware, ev)
    reasons = []
    for ev in latest.values():  # newest first
        reason = why_not_promotable(ev.correct, None if force else ev.speedup_eager, ev.level)
        if reason is None:
            return ev
        reasons.append(f"on {ev.hardware}: {reason}")
    if not latest:
        raise RegistryError(f"candidate {candidate_id} is not promotable: it has no evaluation")
    # The hint only where --force would change the answer: the speed rule is all that refused.
    waivable = any(why_not_promotable(ev.correct, None, ev.level) is None for ev in latest.values())
    hint = " (--force waives the speed rule)" if waivable and not force else ""
    raise RegistryError(f"candidate {candidate_id} is not promotable: {'; '.join(reasons)}{hint}")
