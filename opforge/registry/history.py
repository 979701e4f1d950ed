"""What past runs teach: LLM trajectories for fine-tuning, verified kernels as prompt examples.

Functions here take an open Session and return plain values; registry.store
runs them inside its read transactions.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from opforge.registry.kernels import latest_evaluation_id
from opforge.registry.models import Candidate, Evaluation, LLMCall, Run, Spec

Example = tuple[str, str, str, float | None]  # (op, spec source, kernel source, speedup_eager)


def trajectories(s: Session, op: str | None, with_verdict: bool = False) -> list[dict[str, Any]]:
    """One dict per LLM call with its candidate's latest evaluation; by run, then call id. With
    `with_verdict`, each also holds that evaluation's whole `verdict` (None without one) and the
    candidate's `backend`: what a reward is computed from (opforge/reward/dataset.py)."""
    # A call outside any run still has an op when it drafted a candidate.
    call_op = func.coalesce(Run.op, Spec.name)
    extra = (Evaluation.verdict, Candidate.backend) if with_verdict else ()
    stmt = (
        select(LLMCall, Run.run_key, call_op, Evaluation.id, Evaluation.reasons,
               Evaluation.correct, Evaluation.failed_step, Evaluation.failed_check, Evaluation.speedup_eager, *extra)
        .outerjoin(Run, Run.id == LLMCall.run_id)
        .outerjoin(Candidate, Candidate.id == LLMCall.candidate_id)
        .outerjoin(Spec, Spec.id == Candidate.spec_id)
        .outerjoin(Evaluation, Evaluation.id == latest_evaluation_id())
        .order_by(Run.id.is_(None), Run.id, LLMCall.id)
    )
    if op is not None:
        stmt = stmt.where(call_op == op)
    rows = []
    for row in s.execute(stmt):
        rows.append(_trajectory(*row[:9]))
        if with_verdict:
            rows[-1].update(verdict=row[9], backend=row[10])
    return rows


def _trajectory(call: LLMCall, run_key: str | None, op: str | None, ev_id: int | None,
                reasons: list[str] | None, correct: bool | None, failed_step: str | None,
                failed_check: str | None, speedup: float | None) -> dict[str, Any]:
    if ev_id is not None:
        feedback = list(reasons or [])
    else:
        # No evaluation: the reply never became a kernel, and the error says why.
        feedback = [call.error] if call.error else []
    return {
        "run": run_key, "op": op, "round": call.round, "model": call.model,
        "temperature": call.temperature, "messages": call.messages, "reply": call.reply,
        "candidate_id": call.candidate_id, "feedback": feedback, "correct": correct,
        "failed_step": failed_step, "failed_check": failed_check, "speedup_eager": speedup, "prompt_tokens": call.prompt_tokens,
        "completion_tokens": call.completion_tokens,
    }


def verified_examples(s: Session, limit: int, exclude_spec_sha: str | None,
                      backend: str | None = None) -> list[Example]:
    """Candidates whose latest evaluation is correct, each once with its best correct speedup; only
    `backend`'s when one is named (a Triton kernel is no example for Triton-Ascend or AscendC).

    A kernel that a later, stricter check rejected is no example to learn from. Fastest first;
    candidates never timed come after every timed one, newest first.
    """
    best = func.max(Evaluation.speedup_eager)
    latest_correct = select(Evaluation.correct).where(Evaluation.id == latest_evaluation_id()).scalar_subquery()
    stmt = (
        select(Spec.name, Spec.source, Candidate.source, best)
        .join(Candidate, Candidate.spec_id == Spec.id)
        .join(Evaluation, Evaluation.candidate_id == Candidate.id)
        .where(Evaluation.correct.is_(True), latest_correct.is_(True))
        .group_by(Candidate.id, Spec.id)
        .order_by(best.is_(None), best.desc(), Candidate.id.desc())
        .limit(limit)
    )
    if exclude_spec_sha is not None:
        stmt = stmt.where(Spec.sha256 != exclude_spec_sha)
    if backend is not None:
        stmt = stmt.where(Candidate.backend == backend)
    return [(op, spec_src, kernel_src, speedup) for op, spec_src, kernel_src, speedup in s.execute(stmt)]
