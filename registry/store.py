"""The Registry: specs, candidate kernels, their evaluations and promoted versions.

One Registry per process and database file. Every public method runs in its
own short transaction and returns plain rows (see registry.rows), so results
stay valid after the session that produced them is gone.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from sqlalchemy import exists, func, select
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from registry.db import make_engine, migrate, run_write, write_engine
from registry.errors import RegistryError
from registry.models import Candidate, Evaluation, Spec, Version
from registry.rows import CandidateDetail, EvaluationRow, KernelRow, VersionRow
from registry.validation import check_verdict, finite_number, require_json, require_text

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


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
        digest = sha256_text(source)

        def work(s: Session) -> int:
            existing = s.scalar(select(Spec.id).where(Spec.sha256 == digest))
            if existing is not None:
                return existing
            spec = Spec(name=name, path=str(path), sha256=digest, source=source)
            s.add(spec)
            s.flush()
            return spec.id

        return self._write(work)

    def record_candidate(
        self,
        spec_id: int,
        source: str,
        backend: str,
        drafter: str,
        parent_id: int | None = None,
        meta: dict[str, Any] | None = None,
    ) -> int:
        """Store a kernel candidate; the same (spec, source, backend) returns the existing id."""
        if not isinstance(source, str) or not source:
            raise RegistryError("candidate source must be a non-empty string")
        require_text("backend", backend)
        require_text("drafter", drafter)
        if meta is not None and not isinstance(meta, dict):
            raise RegistryError(f"meta must be a dict or None, got {type(meta).__name__}")
        require_json("meta", meta)
        digest = sha256_text(source)

        def work(s: Session) -> int:
            if s.get(Spec, spec_id) is None:
                raise RegistryError(f"spec {spec_id} does not exist")
            if parent_id is not None and s.get(Candidate, parent_id) is None:
                raise RegistryError(f"parent candidate {parent_id} does not exist")
            key = (Candidate.spec_id == spec_id, Candidate.sha256 == digest, Candidate.backend == backend)
            existing = s.scalar(select(Candidate.id).where(*key))
            if existing is not None:
                return existing
            cand = Candidate(
                spec_id=spec_id, source=source, sha256=digest, backend=backend,
                drafter=drafter, parent_id=parent_id, meta=meta,
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
        check_verdict(verdict)
        timings = verdict.get("timings")

        def work(s: Session) -> int:
            if s.get(Candidate, candidate_id) is None:
                raise RegistryError(f"candidate {candidate_id} does not exist")
            ev = Evaluation(
                candidate_id=candidate_id,
                hardware=hardware,
                hardware_info=hardware_info,
                correct=verdict["correct"],
                stage=verdict["stage"],
                reasons=list(verdict["reasons"]),
                verdict=verdict,
                timings=timings,
                kernel_ms=finite_number((timings or {}).get("kernel_ms")),
                speedup_eager=finite_number((timings or {}).get("speedup_eager")),
            )
            s.add(ev)
            s.flush()
            return ev.id

        return self._write(work)

    # -- queries -----------------------------------------------------------

    def list_kernels(self, op: str | None = None, limit: int = 200) -> list[KernelRow]:
        """Candidates, newest first, each with its latest evaluation (if any)."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise RegistryError(f"limit must be a positive integer, got {limit!r}")
        # Correlated max(id) per candidate walks ix_evaluations_candidate_id_id,
        # so cost grows with the rows returned, not with the evaluation count.
        latest_id = (
            select(func.max(Evaluation.id))
            .where(Evaluation.candidate_id == Candidate.id)
            .correlate(Candidate)
            .scalar_subquery()
        )
        is_active = (
            exists()
            .where(Version.candidate_id == Candidate.id, Version.active.is_(True))
            .correlate(Candidate)
        )
        stmt = (
            select(
                Candidate.id, Candidate.spec_id, Spec.name, Candidate.backend, Candidate.drafter,
                Candidate.parent_id, Candidate.created_at, Evaluation.id, Evaluation.correct,
                Evaluation.stage, Evaluation.hardware, Evaluation.kernel_ms,
                Evaluation.speedup_eager, Evaluation.reasons, is_active.label("active"),
            )
            .join(Spec, Spec.id == Candidate.spec_id)
            .outerjoin(Evaluation, Evaluation.id == latest_id)
            .order_by(Candidate.id.desc())
            .limit(limit)
        )
        if op is not None:
            stmt = stmt.where(Spec.name == op)
        rows = self._read(lambda s: s.execute(stmt).all())
        return [_kernel_row(r) for r in rows]

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
            )

        return self._read(work)

    # -- versions ----------------------------------------------------------

    def promote(self, candidate_id: int, note: str | None = None) -> VersionRow:
        """Make the candidate the active version of (op, backend, hardware).

        The key's hardware is that of the candidate's latest correct evaluation.
        Promoting the candidate that is already active returns its version
        unchanged; promoting an older one again adds a new number (a rollback
        is a new version, so history stays append-only).
        """
        if note is not None and not isinstance(note, str):
            raise RegistryError(f"note must be a string or None, got {type(note).__name__}")
        return self._write(lambda s: _promote(s, candidate_id, note))

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


def _kernel_row(r: Any) -> KernelRow:
    (cand_id, spec_id, op, backend, drafter, parent_id, created_at, ev_id, correct,
     stage, hardware, kernel_ms, speedup, reasons, active) = r
    failed = correct is False
    return KernelRow(
        candidate_id=cand_id, spec_id=spec_id, op=op, backend=backend, drafter=drafter,
        parent_id=parent_id, created_at=created_at, evaluation_id=ev_id, correct=correct,
        stage=stage, hardware=hardware, kernel_ms=kernel_ms, speedup_eager=speedup,
        first_reason=reasons[0] if failed and reasons else None, active=bool(active),
    )


def _promote(s: Session, candidate_id: int, note: str | None) -> VersionRow:
    cand = s.get(Candidate, candidate_id)
    if cand is None:
        raise RegistryError(f"candidate {candidate_id} does not exist")
    ev = s.scalars(
        select(Evaluation)
        .where(Evaluation.candidate_id == candidate_id, Evaluation.correct.is_(True))
        .order_by(Evaluation.id.desc())
        .limit(1)
    ).first()
    if ev is None:
        raise RegistryError(f"candidate {candidate_id} has no correct evaluation")
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
