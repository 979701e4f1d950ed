"""The Registry: specs, candidate kernels, their evaluations, promoted versions, runs and LLM calls.

One Registry per process and database file. Every public method runs in its
own short transaction and returns plain rows (see registry.rows), so results
stay valid after the session that produced them is gone.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from opforge.registry import batch, history, kernels, promoted, reviews, runs, specs
from opforge.registry.db import make_engine, migrate, run_write, write_engine
from opforge.registry.errors import RegistryError
from opforge.registry.models import Candidate, Evaluation, Run, Spec, Version
from opforge.registry.rows import CandidateDetail, EvaluationRow, KernelRow, OpSummary, ReviewRow, RunRow, VersionRow
from opforge.registry.specs import sha256_text
from opforge.registry.validation import (
    check_verdict,
    evaluation_columns,
    require_count,
    require_json,
    require_row,
    require_text,
)

T = TypeVar("T")

ENV_VAR = "OPFORGE_DB"
DEFAULT_DB = Path(".opforge") / "opforge.db"


def resolve_db_path(cli_value: str | None) -> Path:
    """`--db PATH`, else $OPFORGE_DB, else ./.opforge/opforge.db; made absolute.

    Absolute so that error messages and child processes (which may chdir)
    agree on which file is meant. Empty values count as unset.
    """
    chosen = cli_value or os.environ.get(ENV_VAR) or str(DEFAULT_DB)
    return Path(chosen).expanduser().absolute()


class Registry:
    """Handle on one registry database; migrates it to the current schema on open."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path).expanduser().absolute()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RegistryError(f"cannot create directory for {self.path}: {exc}") from exc
        self._engine = make_engine(self.path)
        try:
            migrate(self._engine, self.path)
        except DBAPIError as exc:
            self._engine.dispose()
            raise RegistryError(f"cannot open registry {self.path}: {exc.orig}") from exc
        except BaseException:
            self._engine.dispose()
            raise
        self._reader: sessionmaker[Session] = sessionmaker(self._engine)
        self._writer: sessionmaker[Session] = sessionmaker(write_engine(self._engine))
        self._closed = False

    # -- lifecycle ---------------------------------------------------------

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._engine.dispose()

    def __enter__(self) -> Registry:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Registry({str(self.path)!r})"

    def _write(self, work: Callable[[Session], T]) -> T:
        self._check_open()
        return run_write(self._writer, work)

    def _read(self, work: Callable[[Session], T]) -> T:
        self._check_open()
        try:
            with self._reader() as session, session.begin():
                return work(session)
        except OperationalError as exc:
            raise RegistryError(f"database error: {exc.orig}") from exc

    def _check_open(self) -> None:
        if self._closed:
            raise RegistryError(f"registry {self.path} is closed")

    # -- recording ---------------------------------------------------------

    def record_spec(self, name: str, path: str, source: str) -> int:
        """Store an op spec; the same source (by sha256) returns the existing id."""
        require_text("name", name)
        require_text("path", str(path))
        if not isinstance(source, str):
            raise RegistryError(f"source must be a string, got {type(source).__name__}")
        return self._write(lambda s: specs.spec_id(s, name, path, source))

    def record_candidate(
        self,
        spec_id: int,
        source: str,
        backend: str,
        drafter: str,
        parent_id: int | None = None,
        meta: dict[str, Any] | None = None,
        *,
        run_id: int | None = None,
        round: int | None = None,
    ) -> int:
        """Store a kernel candidate; the same (spec, source, backend) returns the existing id.

        `run_id` and `round` say where a new candidate was drafted. A source
        that already exists keeps the run that first drafted it: a candidate
        belongs to one run, however many runs rediscover it.
        """
        if not isinstance(source, str) or not source:
            raise RegistryError("candidate source must be a non-empty string")
        require_text("backend", backend)
        require_text("drafter", drafter)
        if meta is not None and not isinstance(meta, dict):
            raise RegistryError(f"meta must be a dict or None, got {type(meta).__name__}")
        require_json("meta", meta)
        if round is not None:
            require_count("round", round)
        digest = sha256_text(source)

        def work(s: Session) -> int:
            require_row(s, Spec, spec_id, "spec")
            require_row(s, Candidate, parent_id, "parent candidate")
            require_row(s, Run, run_id, "run")
            key = (Candidate.spec_id == spec_id, Candidate.sha256 == digest, Candidate.backend == backend)
            existing = s.scalar(select(Candidate.id).where(*key))
            if existing is not None:
                return existing
            cand = Candidate(
                spec_id=spec_id, source=source, sha256=digest, backend=backend,
                drafter=drafter, parent_id=parent_id, meta=meta, run_id=run_id, round=round,
            )
            s.add(cand)
            s.flush()
            return cand.id

        return self._write(work)

    def record_evaluation(
        self, candidate_id: int, hardware: str, hardware_info: dict[str, Any], verdict: dict[str, Any]
    ) -> int:
        """Store one harness verdict for a candidate on one hardware fingerprint."""
        require_text("hardware", hardware)
        if not isinstance(hardware_info, dict):
            raise RegistryError(f"hardware_info must be a dict, got {type(hardware_info).__name__}")
        require_json("hardware_info", hardware_info)
        columns = evaluation_columns(check_verdict(verdict))

        def work(s: Session) -> int:
            if s.get(Candidate, candidate_id) is None:
                raise RegistryError(f"candidate {candidate_id} does not exist")
            ev = Evaluation(candidate_id=candidate_id, hardware=hardware, hardware_info=hardware_info, **columns)
            s.add(ev)
            s.flush()
            return ev.id

        return self._write(work)

    # -- queries -----------------------------------------------------------

    def list_kernels(self, op: str | None = None, limit: int = 200) -> list[KernelRow]:
        """Candidates, newest first, each with its latest evaluation (if any)."""
        require_count("limit", limit, minimum=1)
        stmt = kernels.kernel_select().order_by(Candidate.id.desc()).limit(limit)
        if op is not None:
            stmt = stmt.where(Spec.name == op)
        rows = self._read(lambda s: s.execute(stmt).all())
        return [kernels.kernel_row(r) for r in rows]

    def get_candidate(self, candidate_id: int) -> CandidateDetail | None:
        """A candidate with its source, spec and every evaluation; None if unknown."""

        def work(s: Session) -> CandidateDetail | None:
            cand = s.get(Candidate, candidate_id)
            if cand is None:
                return None
            spec = s.get_one(Spec, cand.spec_id)
            evals = s.scalars(
                select(Evaluation).where(Evaluation.candidate_id == candidate_id).order_by(Evaluation.id)
            ).all()
            return CandidateDetail(
                id=cand.id, spec_id=spec.id, op=spec.name, spec_path=spec.path,
                source=cand.source, sha256=cand.sha256, backend=cand.backend,
                drafter=cand.drafter, parent_id=cand.parent_id, meta=cand.meta,
                created_at=cand.created_at,
                evaluations=tuple(EvaluationRow.from_orm(e) for e in evals),
                run_id=cand.run_id, round=cand.round,
            )

        return self._read(work)

    def latest_evaluation(self, candidate_id: int) -> EvaluationRow | None:
        """The candidate's most recent evaluation; None if it has none (or does not exist)."""
        return self._read(lambda s: kernels.latest_evaluation(s, candidate_id))

    # -- versions ----------------------------------------------------------

    def promote(self, candidate_id: int, note: str | None = None, force: bool = False) -> VersionRow:
        """Make the candidate the active version of (op, backend, hardware).

        The policy (registry.promoted) applies to the candidate's latest evaluation on each
        hardware: the newest one that is correct, at a promotable level and, where timed, faster
        than eager (`force` waives the speed rule only) gives the key's hardware. Promoting the
        candidate that is already active returns its version unchanged; promoting an older one
        again adds a new number (a rollback is a new version, so history stays append-only).
        """
        if note is not None and not isinstance(note, str):
            raise RegistryError(f"note must be a string or None, got {type(note).__name__}")
        return self._write(lambda s: kernels.promote(s, candidate_id, note, force))

    def promote_auto(self, op: str | None = None, note: str = "auto policy") -> list[VersionRow]:
        """Promote the best promotable candidate of every (op, backend, hardware) — the fastest
        where timed, else the newest correct — unless it is already the active version."""
        def work(s: Session) -> list[VersionRow]:
            return [kernels.promote(s, cid, note) for cid in promoted.best_promotable(s, op)]

        return self._write(work)

    def promoted_kernels(self, backend: str | None = None) -> list[promoted.PromotedKernel]:
        """The active versions with their kernel source, evaluation and spec, for the exporter."""
        return self._read(lambda s: promoted.promoted_kernels(s, backend))

    def versions(self, op: str | None = None) -> list[VersionRow]:
        """Promotion history, newest first."""
        stmt = select(Version).order_by(Version.id.desc())
        if op is not None:
            stmt = stmt.where(Version.op == op)
        return self._read(lambda s: [VersionRow.from_orm(v) for v in s.scalars(stmt)])

    def active_versions(self) -> list[VersionRow]:
        """The active version of every (op, backend, hardware), sorted by key."""
        stmt = (
            select(Version)
            .where(Version.active.is_(True))
            .order_by(Version.op, Version.backend, Version.hardware)
        )
        return self._read(lambda s: [VersionRow.from_orm(v) for v in s.scalars(stmt)])


    # -- runs and LLM calls ------------------------------------------------

    new_run_key = staticmethod(runs.new_run_key)

    def create_run(self, run_key: str, op: str, spec_id: int, backend: str, drafter: str,
                   hardware: str, config: dict[str, Any]) -> RunRow:
        """Start a run (status "running"); a run_key already in use is refused."""
        return self._write(runs.create_run(run_key, op, spec_id, backend, drafter, hardware, config))

    def get_run(self, run_key: str) -> RunRow | None:
        """The run with this key; None if unknown."""
        return self._read(runs.get_run(run_key))

    def update_run(self, run_key: str, *, status: str | None = None,
                   best_candidate_id: int | None = None, stop_reason: str | None = None,
                   error: str | None = None, add_tokens: int = 0, if_status: str | None = None) -> RunRow:
        """Change what is given (None leaves a field as it is) and add to the token count.

        Leaving "running" stamps finished_at; going back to "running" (a resume)
        clears finished_at, stop_reason and error. The best candidate must be
        a kernel of the run's spec. `if_status`: change nothing and raise
        RegistryError unless the run has that status, checked in the same transaction.
        """
        work = runs.update_run(run_key, status, best_candidate_id, stop_reason, error, add_tokens, if_status)
        return self._write(work)

    def list_runs(self, op: str | None = None, limit: int = 50) -> list[RunRow]:
        """Runs, newest first."""
        return self._read(runs.list_runs(op, limit))

    def run_candidates(self, run_key: str) -> list[KernelRow]:
        """The candidates first drafted in the run, oldest first, with their latest evaluation."""

        def work(s: Session) -> list[KernelRow]:
            run = runs.run_by_key(s, run_key)
            stmt = kernels.kernel_select().where(Candidate.run_id == run.id).order_by(Candidate.id)
            return [kernels.kernel_row(r) for r in s.execute(stmt)]

        return self._read(work)

    def record_llm_call(self, run_id: int | None, candidate_id: int | None, round: int | None,
                        call: runs.LLMCallLike) -> int:
        """Store one chat completion (any object with LLMCall's attributes); returns its id.

        Tokens are not added to the run here: update_run(add_tokens=...) does that.
        """
        return self._write(runs.record_llm_call(run_id, candidate_id, round, call))

    def link_llm_call(self, call_id: int, candidate_id: int) -> None:
        """Attach a call to the candidate its reply became, once that candidate is recorded."""
        self._write(runs.link_llm_call(call_id, candidate_id))

    def trajectories(self, op: str | None = None, with_verdict: bool = False) -> list[dict[str, Any]]:
        """Every LLM call with the verdict on what it drafted, for `opforge export-dataset` (with
        `with_verdict`: the whole verdict and the candidate's backend too)."""
        return self._read(lambda s: history.trajectories(s, op, with_verdict))

    # -- reviews and the workbench's overview --------------------------------

    def review(self, candidate_id: int, decision: str, comment: str | None = None,
               reviewer: str | None = None) -> ReviewRow:
        """Record "approved" or "rejected" (a rejection needs a comment); the latest review counts."""
        return self._write(reviews.add_review(candidate_id, decision, comment, reviewer))

    def reviews(self, candidate_id: int) -> list[ReviewRow]:
        """The candidate's reviews, newest first."""
        return self._read(reviews.reviews(candidate_id))

    def llm_calls(self, candidate_id: int) -> list[dict[str, Any]]:
        """The LLM conversation(s) whose reply became this candidate, oldest first."""
        return self._read(reviews.llm_calls(candidate_id))

    def op_summaries(self) -> list[OpSummary]:
        """Every op with candidates: counts, verified, best speedup, active versions."""
        return self._read(reviews.op_summaries)

    def verified_examples(self, limit: int = 20, exclude_spec_sha: str | None = None,
                          backend: str | None = None) -> list[history.Example]:
        """(op, spec source, kernel source, speedup_eager) of correct kernels, fastest first (only
        `backend`'s when given)."""
        require_count("limit", limit, minimum=1)
        return self._read(lambda s: history.verified_examples(s, limit, exclude_spec_sha, backend))

    # -- batch runs (registry.batch) ---------------------------------------

    def verified_candidate(self, spec_sha256: str, backend: str, hardware: str) -> int | None:
        """The newest candidate verified on `hardware` for the spec with this source hash."""
        return self._read(batch.verified_candidate(spec_sha256, backend, hardware))

    def open_run(self, spec_sha256: str, backend: str, hardware: str) -> RunRow | None:
        """The newest run of that spec still "running" (interrupted or killed), to resume."""
        return self._read(batch.open_run(spec_sha256, backend, hardware))

    def export_run(self, run_key: str) -> dict[str, Any]:
        """A run with its spec, candidates, evaluations, LLM calls and promotions, as plain data."""
        return self._read(batch.export_run(run_key))

    def import_run(self, bundle: dict[str, Any], spec_path: str | None = None) -> RunRow:
        """Replay export_run's data from another registry (a Ray worker's) in one transaction."""
        return self._write(batch.import_run(bundle, spec_path))
