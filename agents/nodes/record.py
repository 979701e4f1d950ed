"""record: close the run in the registry and promote its best kernel when the policy allows:
verified and, where it was timed, faster than PyTorch eager on this hardware."""
from __future__ import annotations

from langgraph.runtime import Runtime

from agents.state import RunContext, RunState


def promotable(best: dict | None, timed: bool) -> bool:
    return bool(best) and (not timed or (best.get("score") or 0.0) > 1.0)


def record(state: RunState, runtime: Runtime[RunContext]) -> dict:
    ctx = runtime.context
    best = state.get("best")
    promoted = None
    if promotable(best, timed=best is not None and best.get("kernel_ms") is not None):
        version = ctx.registry.promote(best["candidate_id"], note=f"run {state['run_key']}")
        promoted = {"op": version.op, "number": version.number, "candidate_id": version.candidate_id}
    status = "done" if best else "failed"
    ctx.registry.update_run(state["run_key"], status=status, stop_reason=state.get("stop_reason"))
    ctx.emit({"node": "record", "message": f"run {state['run_key']} {status}"
              + (f"; promoted {promoted['op']} v{promoted['number']} = candidate #{promoted['candidate_id']}"
                 if promoted else "")})
    return {"promoted": promoted}
