"""The graph's state: plain JSON-like values only, so LangGraph's SQLite checkpointer can persist
every step (a killed run resumes from its last completed node). Live objects — the registry, the
drafter, the sandbox — travel in `RunContext`, which is rebuilt on resume and never checkpointed."""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Annotated, Any, Callable, TypedDict

from opforge.agents.config import Budget
from opforge.backends import DEFAULT


class RunState(TypedDict, total=False):
    run_key: str
    round: int  # the round being drafted/evaluated, from 0
    started_at: float  # time.time() when the run began (wall budget survives a resume)
    knowledge: list[dict]  # KnowledgeItem fields
    attempts: Annotated[list[dict], operator.add]  # Attempt fields, oldest first
    pending: list[int]  # candidate ids drafted this round, not yet evaluated
    evaluated: list[dict]  # this round's verdict summaries, for reflect
    best: dict | None  # {"candidate_id", "speedup", "kernel_ms", "round"}
    round_best: Annotated[list[float], operator.add]  # best score after each round (plateau rule)
    tokens: int
    drafted_nothing: bool  # the drafter had nothing (more) to offer
    drafter_note: str | None  # why, when it said (e.g. "unsupported: aten.gather")
    stop_reason: str | None
    promoted: dict | None


@dataclass
class RunContext:
    registry: Any  # registry.Registry
    drafter: Any  # agents.drafters.base.Drafter
    sandbox: Any  # sandbox.Sandbox, kept warm for the whole run
    spec: Any  # harness.spec.OpSpec
    spec_id: int
    run_id: int
    hardware: Any  # harness.hardware.Hardware
    verify_options: Any  # harness.verify.VerifyOptions
    budget: Budget
    backend: str = DEFAULT
    on_event: Callable[[dict], None] | None = None  # progress inside long nodes (e.g. each evaluation)

    def emit(self, event: dict) -> None:
        if self.on_event:
            self.on_event(event)
