"""What the workbench's review page asks of the registry: people's reviews of candidates, the LLM
conversation behind a candidate, and a per-op overview that stays fast on thousands of candidates.

Functions here check their arguments at once and return transaction bodies (or take an open
Session), like registry.runs; registry.store runs them.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, TypeVar

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from opforge.registry.errors import RegistryError
from opforge.registry.kernels import latest_evaluation_id
from opforge.registry.models import REVIEW_DECISIONS, Candidate, Evaluation, LLMCall, Review, Spec, Version
from opforge.registry.rows import OpSummary, ReviewRow
from opforge.registry.validation import optional_text, require_row

T = TypeVar("T")
Work = Callable[[Session], T]


def add_review(candidate_id: int, decision: str, comment: str | None, reviewer: str | None) -> Work[ReviewRow]:
    if decision not in REVIEW_DECISIONS:
        raise RegistryError(f"decision must be one of {', '.join(REVIEW_DECISIONS)}, got {decision!r}")
    optional_text("comment", comment)
    optional_text("reviewer", reviewer)
    if decision == "rejected" and not (comment or "").strip():
        raise RegistryError("a rejection needs a comment saying why")

    def work(s: Session) -> ReviewRow:
        require_row(s, Candidate, candidate_id, "candidate")
        row = Review(candidate_id=candidate_id, decision=decision, comment=comment or None, reviewer=reviewer)
        s.add(row)
        s.flush()
        return ReviewRow.from_orm(row)

    return work


def reviews(candidate_id: int) -> Work[list[ReviewRow]]:
    stmt = select(Review).where(Review.candidate_id == candidate_id).order_by(Review.id.desc())
    return lambda s: [ReviewRow.from_orm(r) for r in s.scalars(stmt)]


def llm_calls(candidate_id: int) -> Work[list[dict[str, Any]]]:
    """The chat completions whose reply became this candidate, oldest first."""
    stmt = select(LLMCall).where(LLMCall.candidate_id == candidate_id).order_by(LLMCall.id)
    fields = ("id", "round", "model", "temperature", "messages", "reply", "prompt_tokens",
              "completion_tokens", "latency_s", "cost_usd", "error", "created_at")
    return lambda s: [{f: getattr(c, f) for f in fields} for c in s.scalars(stmt)]


def op_summaries(s: Session) -> list[OpSummary]:
    """Every op with candidates, most recently active first (one grouped query)."""
    latest = (select(Evaluation.correct, Evaluation.speedup_eager)
              .where(Evaluation.id == latest_evaluation_id()))
    correct = latest.with_only_columns(Evaluation.correct).scalar_subquery()
    speedup = latest.with_only_columns(Evaluation.speedup_eager).scalar_subquery()
    per_candidate = (select(Spec.name.label("op"), Candidate.created_at.label("created_at"),
                            correct.label("correct"), speedup.label("speedup"))
                     .join(Spec, Spec.id == Candidate.spec_id).subquery())
    stmt = (select(per_candidate.c.op, func.count(), func.sum(func.coalesce(per_candidate.c.correct, 0)),
                   func.max(per_candidate.c.speedup), func.max(per_candidate.c.created_at))
            .group_by(per_candidate.c.op).order_by(func.max(per_candidate.c.created_at).desc()))
    active = dict(s.execute(select(Version.op, func.count()).where(Version.active.is_(True))
                            .group_by(Version.op)).all())
    return [OpSummary(op=op, candidates=n, verified=int(ok or 0), best_speedup_eager=best,
                      active_versions=active.get(op, 0), last_activity=_utc(last))
            for op, n, ok, best, last in s.execute(stmt)]


def _utc(value: Any) -> datetime | None:
    # max() over a UTCDateTime column comes back as the raw stored value (naive UTC, or text).
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=timezone.utc) if value is not None else None
