"""decide: stop or iterate. Stop rules, first match wins: a correct kernel with no GPU timings to
improve on; no kernel of the backend can be verified here (AscendC without CANN: after one round,
whose static verdicts are recorded); the target speedup reached; the drafter has nothing more; rounds, wall time or tokens
spent; no improvement for `plateau_rounds` rounds."""
from __future__ import annotations

import time
from typing import Literal

from langgraph.runtime import Runtime

from opforge.agents.state import RunContext, RunState


def stop_reason(state: RunState, ctx: RunContext) -> str | None:
    budget, best, done = ctx.budget, state.get("best"), state.get("round", 0) + 1
    history = state.get("round_best", [])
    if best and ctx.hardware.device == "cpu":
        return "verified; no GPU here, so there are no timings to improve on"
    if not best and state.get("attempts") and (why := _numerics_unavailable(ctx.backend)):
        return f"no candidate can be verified on this machine: {why}"
    if best and budget.target_speedup and best["score"] >= budget.target_speedup:
        return f"target speedup {budget.target_speedup:g}x reached"
    if state.get("drafted_nothing"):
        note = state.get("drafter_note")
        return "the drafter has nothing more to offer" + (f" ({note})" if note else "")
    if done >= budget.rounds:
        return f"round budget spent ({budget.rounds})"
    if time.time() - state["started_at"] >= budget.wall_s:
        return f"wall-time budget spent ({budget.wall_s:g} s)"
    if state.get("tokens", 0) >= budget.tokens:
        return f"token budget spent ({state.get('tokens', 0)} of {budget.tokens})"
    window = budget.plateau_rounds
    if best and len(history) > window and max(history[-window:]) <= max(history[:-window]):
        return f"no improvement in {window} rounds"
    return None


def _numerics_unavailable(backend: str) -> str | None:
    from opforge.backends import BACKENDS

    row = BACKENDS.get(backend)
    return row.plugin().numerics_unavailable() if row is not None and row.module else None


def decide(state: RunState, runtime: Runtime[RunContext]) -> dict:
    reason = stop_reason(state, runtime.context)
    if reason:
        runtime.context.emit({"node": "decide", "message": f"stop: {reason}"})
        return {"stop_reason": reason}
    return {"round": state.get("round", 0) + 1}


def route(state: RunState) -> Literal["draft", "record"]:
    return "record" if state.get("stop_reason") else "draft"
