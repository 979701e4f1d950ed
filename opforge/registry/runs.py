"""Runs of the agent loop and the LLM calls they make.

Each function checks its arguments at once, raising RegistryError, and returns
the body of the transaction for registry.store to run. Bodies touch only the
session, because a write that meets a lock is re-run from scratch.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Protocol, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from opforge.registry.errors import RegistryError
from opforge.registry.models import RUN_STATUSES, Candidate, LLMCall, Run, Spec, utcnow
from opforge.registry.rows import RunRow
from opforge.registry.validation import (
    finite_number,
    optional_text,
    require_count,
    require_json,
    require_row,
    require_text,
)

T = TypeVar("T")
Work = Callable[[Session], T]

RUN_KEY_MAX = 64  # runs.run_key is String(64)


class LLMCallLike(Protocol):
    """What record_llm_call reads; agents.drafters.base.LLMCall is one.

    Read-only properties, so that frozen dataclasses satisfy the protocol.
    """

    @property
    def model(self) -> str: ...
    @property
    def temperature(self) -> float: ...
    @property
    def messages(self) -> Sequence[dict[str, Any]]: ...
    @property
    def reply(self) -> str: ...
    @property
    def prompt_tokens(self) -> int: ...
    @property
    def completion_tokens(self) -> int: ...
    @property
    def latency_s(self) -> float: ...
    @property
    def cost_usd(self) -> float | None: ...
    @property
    def error(self) -> str | None: ...


def new_run_key(now: datetime | None = None) -> str:
    """A short id to type after --resume: r-YYYYMMDD-xxxxxx.

    24 random bits: two keys of one day collide with odds ~n²/3.4e7 (3e-4 at
    100 runs a day); create_run refuses the duplicate rather than merging.
    """
    return f"r-{(now or utcnow()):%Y%m%d}-{secrets.token_hex(3)}"


def run_by_key(s: Session, run_key: str) -> Run:
    run = s.scalars(select(Run).where(Run.run_key == run_key)).first()
    if run is None:
        raise RegistryError(f"run {run_key} does not exist")
    return run


# -- runs -----------------------------------------------------------------------


def create_run(run_key: str, op: str, spec_id: int, backend: str, drafter: str, hardware: str,
               config: dict[str, Any]) -> Work[RunRow]:
    for field, value in (("run_key", run_key), ("op", op), ("backend", backend),
                         ("drafter", drafter), ("hardware", hardware)):
        require_text(field, value)
    if len(run_key) > RUN_KEY_MAX:
        raise RegistryError(f"run_key must be at most {RUN_KEY_MAX} characters, got {run_key!r}")
    if not isinstance(config, dict):
        raise RegistryError(f"config must be a dict, got {type(config).__name__}")
    require_json("config", config)

    def work(s: Session) -> RunRow:
        require_row(s, Spec, spec_id, "spec")
        if s.scalar(select(Run.id).where(Run.run_key == run_key)) is not None:
            raise RegistryError(f"run {run_key} already exists")
        run = Run(run_key=run_key, op=op, spec_id=spec_id, backend=backend, drafter=drafter,
                  hardware=hardware, status="running", config=config, tokens=0)
        s.add(run)
        s.flush()
        s.refresh(run)  # the config as stored (NaN becomes null), not the caller's dict
        return RunRow.from_orm(run)

    return work


def get_run(run_key: str) -> Work[RunRow | None]:
    def work(s: Session) -> RunRow | None:
        run = s.scalars(select(Run).where(Run.run_key == run_key)).first()
        return None if run is None else RunRow.from_orm(run)

    return work


def update_run(run_key: str, status: str | None, best_candidate_id: int | None,
               stop_reason: str | None, error: str | None, add_tokens: int,
               if_status: str | None = None) -> Work[RunRow]:
    if status is not None and status not in RUN_STATUSES:
        raise RegistryError(f"status must be one of {', '.join(RUN_STATUSES)}, got {status!r}")
    optional_text("stop_reason", stop_reason)
    optional_text("error", error)
    require_count("add_tokens", add_tokens)

    def work(s: Session) -> RunRow:
        run = run_by_key(s, run_key)
        if if_status is not None and run.status != if_status:
            raise RegistryError(f"run {run_key} is {run.status}, not {if_status}")
        if best_candidate_id is not None:
            _require_candidate_of(s, run, best_candidate_id)
            run.best_candidate_id = best_candidate_id
        if status is not None:
            _set_status(run, status)
        run.stop_reason = stop_reason if stop_reason is not None else run.stop_reason
        run.error = error if error is not None else run.error
        run.tokens += add_tokens
        s.flush()
        return RunRow.from_orm(run)

    return work


def _require_candidate_of(s: Session, run: Run, candidate_id: int) -> None:
    cand = s.get(Candidate, candidate_id)
    if cand is None:
        raise RegistryError(f"candidate {candidate_id} does not exist")
    if cand.spec_id != run.spec_id:
        raise RegistryError(f"candidate {candidate_id} is not a kernel of run {run.run_key}'s spec")


def _set_status(run: Run, status: str) -> None:
    if status == "running":
        # Resumed: how the run ended no longer describes it.
        run.finished_at = run.stop_reason = run.error = None
    elif run.status == "running" or run.finished_at is None:
        run.finished_at = utcnow()
    run.status = status


def list_runs(op: str | None, limit: int) -> Work[list[RunRow]]:
    require_count("limit", limit, minimum=1)
    stmt = select(Run).order_by(Run.id.desc()).limit(limit)
    if op is not None:
        stmt = stmt.where(Run.op == op)
    return lambda s: [RunRow.from_orm(r) for r in s.scalars(stmt)]


# -- LLM calls ------------------------------------------------------------------

CALL_FIELDS = ("model", "temperature", "messages", "reply", "prompt_tokens", "completion_tokens",
               "latency_s", "cost_usd", "error")


def record_llm_call(run_id: int | None, candidate_id: int | None, round_: int | None,
                    call: LLMCallLike) -> Work[int]:
    if round_ is not None:
        require_count("round", round_)
    fields = _call_fields(call)

    def work(s: Session) -> int:
        require_row(s, Run, run_id, "run")
        require_row(s, Candidate, candidate_id, "candidate")
        row = LLMCall(run_id=run_id, candidate_id=candidate_id, round=round_, **fields)
        s.add(row)
        s.flush()
        return row.id

    return work


def link_llm_call(call_id: int, candidate_id: int) -> Work[None]:
    def work(s: Session) -> None:
        row = s.get(LLMCall, call_id)
        if row is None:
            raise RegistryError(f"LLM call {call_id} does not exist")
        require_row(s, Candidate, candidate_id, "candidate")
        row.candidate_id = candidate_id

    return work


def _call_fields(call: object) -> dict[str, Any]:
    missing = [name for name in CALL_FIELDS if not hasattr(call, name)]
    if missing:
        raise RegistryError(f"LLM call lacks {', '.join(missing)}")
    fields = {name: getattr(call, name) for name in CALL_FIELDS}
    require_text("call.model", fields["model"])
    for name in ("temperature", "latency_s"):
        value = finite_number(fields[name])
        if value is None or value < 0:
            raise RegistryError(f"call.{name} must be a finite number >= 0, got {fields[name]!r}")
        fields[name] = value
    if fields["cost_usd"] is not None and finite_number(fields["cost_usd"]) is None:
        raise RegistryError(f"call.cost_usd must be a finite number or None, got {fields['cost_usd']!r}")
    if not isinstance(fields["reply"], str):
        raise RegistryError(f"call.reply must be a string, got {type(fields['reply']).__name__}")
    require_count("call.prompt_tokens", fields["prompt_tokens"])
    require_count("call.completion_tokens", fields["completion_tokens"])
    optional_text("call.error", fields["error"])
    fields["messages"] = _messages(fields["messages"])
    return fields


def _messages(messages: object) -> list[dict[str, Any]]:
    if not isinstance(messages, (list, tuple)):
        raise RegistryError(f"call.messages must be a list of dicts, got {type(messages).__name__}")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str) or "content" not in m:
            raise RegistryError(f"call.messages[{i}] must be a dict with a role and a content")
    copied = [dict(m) for m in messages]
    require_json("call.messages", copied)
    return copied
