"""The prompt of a task, and of its next turn: the same chat messages the agent loop's LLM drafter
sends (agents/prompts: the backend's system contract, the spec, the sizes it is verified at,
retrieved knowledge), so a policy trained on them drafts for the workbench as it will be used.

A turn after a scored answer carries that answer and its verdict's feedback (agents/nodes/reflect.py:
the harness's exact reasons, failing shapes, the check's hint) as an attempt, the way the loop's
repair round does."""
from __future__ import annotations

from opforge.agents.drafters.base import UNUSABLE_STEP, Attempt, DraftRequest
from opforge.agents.nodes import evaluate
from opforge.agents.nodes.reflect import feedback_text
from opforge.agents.prompts.render import render_messages
from opforge.backends import DEFAULT
from opforge.knowledge import KnowledgeItem
from opforge.knowledge.retrieve import MAX_CODE, SAME_OP_BONUS, retrieve

KNOWLEDGE_K = 4  # retrieved notes and examples per prompt (the loop's default is 6; a training prompt is shorter)
CPU_HARDWARE = "cpu/x86_64/triton-interpreter"  # what the prompt says the kernel is verified on, before a scorer says


def knowledge(task, k: int = KNOWLEDGE_K) -> tuple[KnowledgeItem, ...]:
    """The k best items the loop would retrieve for this spec and backend (none with k=0), less the
    task's own answer: a kernel of the same op or spec (retrieval's SAME_OP_BONUS: the suite's
    known-good kernel for a suite task) is the solution to copy, not knowledge to train with."""
    if k <= 0:
        return ()
    items = retrieve(task.spec_source, task.backend, k=k + MAX_CODE)
    return tuple([item for item in items if item.kind == "note" or item.score < SAME_OP_BONUS][:k])


def attempt(answer_source: str | None, reward: dict) -> Attempt:
    """A scored answer as the next prompt's attempt: its kernel (or the unusable text) and feedback."""
    summary = evaluate.summary(None, reward.get("verdict") or reward, reused=False)  # as the loop's reflect reads it
    failed = summary["failed_step"]
    return Attempt(candidate_id=None, source=answer_source, correct=summary["correct"],
                   failed_step=None if summary["correct"] else (failed or UNUSABLE_STEP),
                   feedback=feedback_text(summary, reward.get("backend") or DEFAULT),
                   speedup=(summary["timings"] or {}).get("speedup_eager"))


def messages(task, attempts: tuple[Attempt, ...] = (), knowledge_items: tuple[KnowledgeItem, ...] = (),
             hardware: str = CPU_HARDWARE, sizes: dict | None = None) -> list[dict]:
    """[{"role": "system", ...}, {"role": "user", ...}]: the task's prompt, with earlier attempts."""
    request = DraftRequest(op=task.op, spec_source=task.spec_source, backend=task.backend, hardware=hardware,
                           knowledge=tuple(knowledge_items), attempts=tuple(attempts),
                           mode="repair" if attempts and not any(a.correct for a in attempts) else "explore",
                           n=1, round=len(attempts), sizes=dict(sizes or {}))
    return render_messages(request)
