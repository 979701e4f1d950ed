"""SQLAlchemy 2 models of the kernel registry.

The schema here must always match `alembic upgrade head`; tests compare the
two, and any change needs a new file under migrations/versions/.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class UTCDateTime(TypeDecorator[datetime]):
    """Stores naive UTC, returns aware UTC.

    SQLite has no timezone-aware timestamp type, so values are normalised to
    UTC on the way in and re-tagged on the way out; callers never see naive
    datetimes whose zone they would have to guess.
    """

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(timezone.utc).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        return None if value is None else value.replace(tzinfo=timezone.utc)


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


# Named constraints: SQLite batch migrations recreate tables and can only
# drop or alter constraints that they can refer to by name.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    # none_as_null: a missing `meta` or `timings` is SQL NULL, not the JSON
    # text 'null', so "IS NULL" and json_type() behave as readers expect.
    type_annotation_map = {
        datetime: UTCDateTime(),
        dict[str, Any]: JSON(none_as_null=True),
        list[str]: JSON(none_as_null=True),
        list[dict[str, Any]]: JSON(none_as_null=True),
    }

# The lifecycle of a run; the database refuses any other value (ck_runs_status). "interrupted": stopped
# by a signal, its job ended with it; resumable like a "running" run whose process died.
RUN_STATUSES = ("running", "done", "failed", "cancelled", "interrupted")
# A person's decision on a candidate (ck_reviews_decision).
REVIEW_DECISIONS = ("approved", "rejected")


class Spec(Base):
    __tablename__ = "specs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), index=True)
    path: Mapped[str] = mapped_column(String(1000))
    sha256: Mapped[str] = mapped_column(String(64), unique=True)
    source: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Candidate(Base):
    __tablename__ = "candidates"
    __table_args__ = (
        # Also serves "candidates of a spec": spec_id is its leading column.
        UniqueConstraint("spec_id", "sha256", "backend", name="uq_candidates_spec_sha_backend"),
        Index("ix_candidates_parent_id", "parent_id"),
        Index("ix_candidates_run_id", "run_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    spec_id: Mapped[int] = mapped_column(ForeignKey("specs.id"))
    source: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    backend: Mapped[str] = mapped_column(String(50))
    drafter: Mapped[str] = mapped_column(String(50))
    parent_id: Mapped[int | None] = mapped_column(ForeignKey("candidates.id"))
    meta: Mapped[dict[str, Any] | None]
    # The run that first drafted this source (a later run re-drafting it
    # finds the existing row and leaves these alone), and in which round.
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id"))
    round: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Evaluation(Base):
    __tablename__ = "evaluations"
    __table_args__ = (
        # "Latest evaluation of each candidate" is max(id) per candidate_id:
        # answered from this index alone, without touching the verdict blobs.
        Index("ix_evaluations_candidate_id_id", "candidate_id", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    candidate_id: Mapped[int] = mapped_column(ForeignKey("candidates.id"))
    hardware: Mapped[str] = mapped_column(String(200))
    hardware_info: Mapped[dict[str, Any]]
    correct: Mapped[bool] = mapped_column(Boolean)
    # Copied out of the verdict: the step that failed and the check inside it (harness/ladder.py);
    # NULL when no step failed.
    failed_step: Mapped[str | None] = mapped_column(String(50))
    failed_check: Mapped[str | None] = mapped_column(String(50))
    reasons: Mapped[list[str]]
    verdict: Mapped[dict[str, Any]]
    timings: Mapped[dict[str, Any] | None]
    # Copied out of `timings` so listings can sort and filter without JSON parsing.
    kernel_ms: Mapped[float | None] = mapped_column(Float)
    speedup_eager: Mapped[float | None] = mapped_column(Float)
    # Copied out of the verdict: the highest rung of the verification ladder it reached and
    # where its numerics ran. NULL for a verdict from before the ladder that told too little.
    level: Mapped[str | None] = mapped_column(String(50))
    verified_on: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Version(Base):
    __tablename__ = "versions"
    __table_args__ = (
        UniqueConstraint("op", "backend", "hardware", "number", name="uq_versions_key_number"),
        # Partial unique index: the database itself refuses a second active
        # version for a key, even if two promoters race.
        Index(
            "uq_versions_one_active",
            "op",
            "backend",
            "hardware",
            unique=True,
            sqlite_where=text("active = 1"),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    op: Mapped[str] = mapped_column(String(200))
    backend: Mapped[str] = mapped_column(String(50))
    hardware: Mapped[str] = mapped_column(String(200))
    number: Mapped[int] = mapped_column(Integer)
    candidate_id: Mapped[int] = mapped_column(ForeignKey("candidates.id"), index=True)
    evaluation_id: Mapped[int] = mapped_column(ForeignKey("evaluations.id"))
    promoted_at: Mapped[datetime] = mapped_column(default=utcnow)
    active: Mapped[bool] = mapped_column(Boolean)
    note: Mapped[str | None] = mapped_column(String(2000))


class Run(Base):
    """One `opforge run` of the agent loop for an op: its settings, progress and outcome."""

    __tablename__ = "runs"
    __table_args__ = (
        CheckConstraint(
            "status IN (" + ", ".join(f"'{s}'" for s in RUN_STATUSES) + ")", name="status"
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_key: Mapped[str] = mapped_column(String(64), unique=True)
    op: Mapped[str] = mapped_column(String(200))
    spec_id: Mapped[int] = mapped_column(ForeignKey("specs.id"))
    backend: Mapped[str] = mapped_column(String(50))
    drafter: Mapped[str] = mapped_column(String(50))
    hardware: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(20))
    config: Mapped[dict[str, Any]]
    # runs and candidates refer to each other; use_alter names this side as
    # the one to break the cycle when SQLAlchemy sorts tables by dependency.
    best_candidate_id: Mapped[int | None] = mapped_column(
        ForeignKey("candidates.id", use_alter=True)
    )
    stop_reason: Mapped[str | None] = mapped_column(String(200))
    error: Mapped[str | None] = mapped_column(Text)
    tokens: Mapped[int] = mapped_column(Integer, default=0)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]


class LLMCall(Base):
    """One chat completion made while drafting: the prompt, the reply and what it cost."""

    __tablename__ = "llm_calls"
    __table_args__ = (Index("ix_llm_calls_run_id", "run_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id"))
    candidate_id: Mapped[int | None] = mapped_column(ForeignKey("candidates.id"))
    round: Mapped[int | None] = mapped_column(Integer)
    model: Mapped[str] = mapped_column(String(200))
    temperature: Mapped[float] = mapped_column(Float)
    messages: Mapped[list[dict[str, Any]]]
    reply: Mapped[str] = mapped_column(Text)
    prompt_tokens: Mapped[int] = mapped_column(Integer)
    completion_tokens: Mapped[int] = mapped_column(Integer)
    latency_s: Mapped[float] = mapped_column(Float)
    cost_usd: Mapped[float | None] = mapped_column(Float)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Review(Base):
    """A person's approve/reject decision on a candidate; the latest row per candidate counts."""

    __tablename__ = "reviews"
    __table_args__ = (
        CheckConstraint(
            "decision IN (" + ", ".join(f"'{d}'" for d in REVIEW_DECISIONS) + ")", name="decision"
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    candidate_id: Mapped[int] = mapped_column(ForeignKey("candidates.id"), index=True)
    decision: Mapped[str] = mapped_column(String(20))
    comment: Mapped[str | None] = mapped_column(Text)
    reviewer: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
