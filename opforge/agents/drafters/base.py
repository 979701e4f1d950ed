"""The drafter interface: a request describing the op and what was tried, drafts back.

A drafter never raises for a bad reply: a reply without a usable `ModelNew` becomes a Draft with
`source=None`, a `problem` that goes into the next prompt as feedback and, in `rejected`, what it
held instead (the broken code, else the reply's text), which the loop keeps as a candidate whose
verdict's failed step is UNUSABLE_STEP, never run, and quotes back to the model. Configuration problems
(wrong key, missing model, unreachable endpoint) raise DrafterError: the run cannot go on."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from opforge.harness.errors import OpforgeError
from opforge.harness.ladder import DRAFT
from opforge.knowledge import KnowledgeItem

Mode = Literal["explore", "repair"]
# The failed step of a reply that never became a runnable candidate (no code, no ModelNew, a syntax
# error): its verdict says why, the harness never runs it and it can never be promoted.
UNUSABLE_STEP = DRAFT


class DrafterError(OpforgeError):
    """The drafter cannot work at all (bad endpoint, key or model): one clear line for the user."""


@dataclass(frozen=True)
class Attempt:
    """A previous candidate with the exact feedback its evaluation produced."""

    candidate_id: int | None
    source: str | None
    correct: bool
    failed_step: str | None  # None when correct (harness/ladder.py: the step that failed)
    feedback: str  # the reflect node's text: build errors, mismatch numbers, anti-cheat reasons, timings
    speedup: float | None = None
    line: int | None = None  # failed step UNUSABLE_STEP: the line of `source` where parsing stopped


@dataclass(frozen=True)
class DraftRequest:
    op: str
    spec_source: str
    backend: str
    hardware: str  # fingerprint, e.g. "cpu/x86_64/triton-interpreter" or "cuda/NVIDIA H200/sm_90"
    knowledge: tuple[KnowledgeItem, ...] = ()
    attempts: tuple[Attempt, ...] = ()  # oldest first
    mode: Mode = "explore"
    n: int = 1  # how many candidates are wanted
    round: int = 0
    sizes: dict = field(default_factory=dict)  # the size constants the harness verifies with


@dataclass(frozen=True)
class LLMCall:
    """One chat completion, as recorded in the registry (prompt, reply, tokens, latency, cost)."""

    model: str
    temperature: float
    messages: tuple[dict, ...]
    reply: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = None
    error: str | None = None


@dataclass(frozen=True)
class Draft:
    source: str | None
    drafter: str
    problem: str | None = None  # why there is no usable source (feedback for the next round)
    meta: dict = field(default_factory=dict)  # e.g. model, temperature, tuning config
    call: LLMCall | None = None
    rejected: str | None = None  # no usable source: the code that failed, else the reply's text
    line: int | None = None  # the line of `rejected` where parsing stopped, when it did not parse


class Drafter(Protocol):
    name: str

    def describe(self) -> str:
        """One line for the user: which drafter, which model or endpoint."""

    def draft(self, request: DraftRequest) -> list[Draft]:
        """`request.n` drafts (fewer only when the drafter has nothing more to offer)."""
