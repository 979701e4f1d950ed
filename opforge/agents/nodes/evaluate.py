"""evaluate: verify each pending candidate in the run's sandbox and record the verdict.

A candidate that already has a verdict on this hardware (an identical source drafted before, or a
run resumed after a kill) is not evaluated again."""
from __future__ import annotations

from langgraph.runtime import Runtime

from opforge.agents.state import RunContext, RunState
from opforge.harness.ladder import failed_check
from opforge.harness.verify import verify_source
from opforge.registry.levels import failure_label


def summary(candidate_id: int | None, verdict: dict, reused: bool) -> dict:
    """What the reflect node reads of a verdict (feedback_text); the RL reward's next prompt reads the same."""
    return {"candidate_id": candidate_id, "correct": verdict["correct"], "failed_step": verdict["failed_step"],
            "failed_check": failed_check(verdict), "reasons": verdict["reasons"], "variants": verdict.get("variants", []),
            "build": verdict.get("build"), "timings": verdict.get("timings"), "reused": reused}


def evaluate_one(ctx: RunContext, candidate_id: int) -> dict:
    previous = ctx.registry.latest_evaluation(candidate_id)
    if previous is not None and previous.hardware == ctx.hardware.fingerprint:
        return summary(candidate_id, previous.verdict, reused=True)
    source = ctx.registry.get_candidate(candidate_id).source
    verdict = verify_source(ctx.spec, ctx.hardware, source, ctx.verify_options, sandbox=ctx.sandbox)
    ctx.registry.record_evaluation(candidate_id, ctx.hardware.fingerprint, ctx.hardware.info(), verdict)
    return summary(candidate_id, verdict, reused=False)


def evaluate(state: RunState, runtime: Runtime[RunContext]) -> dict:
    ctx = runtime.context
    results = []
    for candidate_id in state.get("pending", []):
        result = evaluate_one(ctx, candidate_id)
        results.append(result)
        failure = failure_label(result["failed_step"], result["failed_check"]) if result["failed_step"] \
            else "not verifiable here"
        status = "correct" if result["correct"] else f"{failure}: {(result['reasons'] or [''])[0][:100]}"
        ctx.emit({"node": "evaluate", "round": state.get("round", 0), "candidate_id": candidate_id,
                  "correct": result["correct"], "message": f"candidate #{candidate_id}: {status}"
                  + (" (verdict reused)" if result["reused"] else "")})
    return {"evaluated": results, "pending": []}
