"""record: close the run in the registry and promote its best kernel when the registry's policy
allows (registry.promoted: verified and, where it was timed, faster than PyTorch eager)."""
from __future__ import annotations

from langgraph.runtime import Runtime

from opforge.agents.state import RunContext, RunState
from opforge.registry import RegistryError


def record(state: RunState, runtime: Runtime[RunContext]) -> dict:
    ctx = runtime.context
    best = state.get("best")
    promoted, refused = None, None
    if best:
        try:
            version = ctx.registry.promote(best["candidate_id"], note=f"run {state['run_key']}")
            promoted = {"op": version.op, "number": version.number, "candidate_id": version.candidate_id}
        except RegistryError as exc:  # the policy said no (e.g. slower than eager): the run still succeeded
            refused = str(exc)
    status = "done" if best else "failed"
    try:  # a cancel that landed while this run was finishing stands
        ctx.registry.update_run(state["run_key"], status=status, stop_reason=state.get("stop_reason"), if_status="running")
    except RegistryError:
        status = ctx.registry.get_run(state["run_key"]).status
    message = f"run {state['run_key']} {status}"
    if promoted:
        message += f"; promoted {promoted['op']} v{promoted['number']} = candidate #{promoted['candidate_id']}"
    elif refused:
        message += f"; not promoted: {refused}"
    ctx.emit({"node": "record", "message": message})
    return {"promoted": promoted}
