"""draft: ask the drafter for this round's candidates, record each candidate and LLM call.

A reply that gave no usable source is kept too: what it held (the broken code, else its text) is a
candidate with one verdict whose failed step is `draft`, saying why, never evaluated by the harness (it is not
pending) and never promotable (not correct), so the dataset shows it and the next prompt quotes it."""
from __future__ import annotations

from dataclasses import replace

from langgraph.runtime import Runtime

from opforge.agents.drafters.base import UNUSABLE_STEP, Attempt, Draft, DraftRequest
from opforge.agents.state import RunContext, RunState
from opforge.harness.ladder import step
from opforge.knowledge import KnowledgeItem

ATTEMPTS_IN_PROMPT = 6  # the newest attempts carry the most useful feedback; older ones cost tokens


def build_request(state: RunState, ctx: RunContext) -> DraftRequest:
    attempts = tuple(Attempt(**_attempt(a)) for a in state.get("attempts", [])[-ATTEMPTS_IN_PROMPT:])
    # Until something is correct, repair the latest failure; once it is, explore for speed.
    mode = "repair" if attempts and not state.get("best") else "explore"
    return DraftRequest(op=ctx.spec.name, spec_source=ctx.spec.source, backend=ctx.backend,
                        hardware=ctx.hardware.fingerprint,
                        knowledge=tuple(KnowledgeItem(**k) for k in state.get("knowledge", [])),
                        attempts=attempts, mode=mode, n=ctx.budget.candidates, round=state.get("round", 0),
                        sizes=dict(ctx.spec.sizes_used))


def _attempt(saved: dict) -> dict:
    """An attempt as the state holds it; one checkpointed before `failed_step` had `stage` instead."""
    if "stage" not in saved:
        return saved
    return {k: v for k, v in saved.items() if k != "stage"} | {"failed_step": None if saved["correct"] else saved["stage"]}


def draft(state: RunState, runtime: Runtime[RunContext]) -> dict:
    ctx = runtime.context
    request = build_request(state, ctx)
    drafts = ctx.drafter.draft(request)
    pending, problems, tokens = [], [], 0
    parent = (state.get("best") or {}).get("candidate_id")
    for item in drafts:
        if item.source:
            candidate_id = ctx.registry.record_candidate(
                ctx.spec_id, item.source, ctx.backend, item.drafter, parent_id=parent, meta=item.meta or None,
                run_id=ctx.run_id, round=request.round)
            if candidate_id not in pending:
                pending.append(candidate_id)
        else:
            candidate_id = _record_unusable(ctx, item, parent, request.round)
            problems.append({"candidate_id": candidate_id, "source": item.rejected if candidate_id else None,
                             "correct": False, "failed_step": UNUSABLE_STEP, "line": item.line,
                             "feedback": f"your reply could not be used: {item.problem}", "speedup": None})
        if item.call:  # an unusable reply is recorded with its problem, so the dataset shows why
            call = item.call if item.source else replace(item.call, error=item.call.error or item.problem)
            ctx.registry.record_llm_call(ctx.run_id, candidate_id, request.round, call)
            tokens += item.call.prompt_tokens + item.call.completion_tokens
    if tokens:
        ctx.registry.update_run(state["run_key"], add_tokens=tokens)
    ctx.emit({"node": "draft", "round": request.round, "message":
              f"round {request.round}: {len(pending)} candidate(s) drafted ({request.mode})"
              + (f", {len(problems)} unusable" if problems else "")})
    exhausted = not drafts or all(d.meta.get("exhausted") for d in drafts)
    return {"pending": pending, "attempts": problems, "tokens": state.get("tokens", 0) + tokens,
            "drafted_nothing": exhausted, "drafter_note": next((d.problem for d in drafts if d.problem), None)}


def _record_unusable(ctx: RunContext, item: Draft, parent: int | None, round: int) -> int | None:
    """The candidate holding an unusable reply's code or text, with its `draft` verdict; None when
    the reply held nothing (an empty reply, an offline drafter's refusal)."""
    if not (item.rejected or "").strip():
        return None
    candidate_id = ctx.registry.record_candidate(
        ctx.spec_id, item.rejected, ctx.backend, item.drafter, parent_id=parent, meta=item.meta or None,
        run_id=ctx.run_id, round=round)
    if ctx.registry.latest_evaluation(candidate_id) is None:  # the same text again keeps its first verdict
        verdict = {"correct": False, "failed_step": UNUSABLE_STEP, "reasons": [item.problem], "backend": ctx.backend,
                   "steps": {UNUSABLE_STEP: step("failed", reason=item.problem, check="reply")}, "level": None,
                   "note": "the reply gave no usable candidate: recorded for the dataset, never run"}
        ctx.registry.record_evaluation(candidate_id, ctx.hardware.fingerprint, ctx.hardware.info(), verdict)
    return candidate_id
