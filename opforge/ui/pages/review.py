"""Review an op: every version and candidate; a candidate's source, a diff against any other, its
level badge, verification table and ladder steps, compile metrics, timings against input size,
the LLM conversation that produced it; approve, reject with a comment, promote."""
from __future__ import annotations

import streamlit as st

from opforge.ui import views
from opforge.ui.state import registry, user_errors


def _as_id(text: str | None) -> int | None:
    """A candidate id from the URL, or None for anything else ("²", "1e9", 30 digits)."""
    if not text or not text.isascii() or not text.isdecimal() or len(text) > 18:
        return None
    return int(text)


def pick_op() -> str | None:
    summaries = registry().op_summaries()
    if not summaries:
        st.info("The registry has no kernels yet. Request one on **Request a kernel**, or record one with "
                "`opforge verify SPEC KERNEL`.", icon=":material/info:")
        st.page_link("ui/pages/request.py", label="Request a kernel", icon=":material/edit_note:")
        return None
    ops = [s.op for s in summaries]
    wanted = st.query_params.get("op")
    cand = st.query_params.get("candidate")
    if _as_id(cand) is not None and (detail := registry().get_candidate(_as_id(cand))) is not None:
        wanted = detail.op
    by_op = {s.op: s for s in summaries}
    op = st.selectbox("Op", ops, index=ops.index(wanted) if wanted in ops else 0, format_func=lambda o: (
        f"{o} — {by_op[o].verified}/{by_op[o].candidates} verified" + (" ★" if by_op[o].active_versions else "")))
    st.query_params["op"] = op
    return op


def versions_and_candidates(op: str) -> int | None:
    versions = registry().versions(op)
    if versions:
        st.subheader("Versions")
        st.dataframe([{"version": f"v{v.number}", "active": "★" if v.active else "", "candidate": v.candidate_id,
                       "backend": v.backend, "hardware": v.hardware, "promoted": v.promoted_at, "note": v.note or ""}
                      for v in versions], hide_index=True, width="stretch")
    else:
        st.caption("No promoted version yet.")
    rows = registry().list_kernels(op, limit=500)
    st.subheader(f"Candidates ({len(rows)}{'+' if len(rows) == 500 else ''})")
    st.dataframe(views.kernel_table(rows), hide_index=True, width="stretch", height="auto" if len(rows) < 9 else 320)
    ids = [r.candidate_id for r in rows]
    wanted = st.query_params.get("candidate")
    default = _as_id(wanted) if _as_id(wanted) in ids else (
        next((r.candidate_id for r in rows if r.active), ids[0] if ids else None))
    if default is None:
        return None
    chosen = st.selectbox("Candidate", ids, index=ids.index(default), format_func=lambda i: f"#{i}")
    st.query_params["candidate"] = str(chosen)
    return chosen


def candidate_tabs(candidate_id: int, others: list[int]) -> None:
    detail = registry().get_candidate(candidate_id)
    latest = detail.evaluations[-1] if detail.evaluations else None
    st.markdown(f"### Candidate #{detail.id} — {views.evaluation_label(latest)}")
    _badge(latest.level if latest else None, latest.verified_on if latest else None)
    st.caption(f"{detail.backend}, drafted by **{detail.drafter}**"
               + (f", parent #{detail.parent_id}" if detail.parent_id else "")
               + (f", round {detail.round}" if detail.round is not None else "") + f", spec `{detail.spec_path}`")
    tabs = st.tabs(["Source", "Diff", "Verification", "Compile metrics", "Timings", "LLM conversation"])
    with tabs[0]:
        st.code(detail.source, language="python", line_numbers=True)
        if detail.meta:
            st.caption("Drafter metadata (e.g. the tuning configuration drafted)")
            st.json(detail.meta, expanded=False)
    with tabs[1]:
        diff_tab(detail, others)
    with tabs[2]:
        verification_tab(detail)
    with tabs[3]:
        compile_tab(latest)
    with tabs[4]:
        timings_tab(detail)
    with tabs[5]:
        conversation_tab(detail.id)


def diff_tab(detail, others: list[int]) -> None:
    choices = [i for i in others if i != detail.id]
    if not choices:
        st.info("This op has only one candidate: nothing to compare with.")
        return
    other = st.selectbox("Compare with", choices, format_func=lambda i: f"#{i}",
                         index=choices.index(detail.parent_id) if detail.parent_id in choices else 0)
    base = registry().get_candidate(other)
    st.code(views.source_diff(base.source, detail.source, f"#{other}", f"#{detail.id}"), language="diff")


def verification_tab(detail) -> None:
    if not detail.evaluations:
        st.info("Not evaluated yet.")
        return
    for ev in reversed(detail.evaluations):
        v = ev.verdict
        st.markdown(f"**Evaluation #{ev.id}** on `{ev.hardware}` ({ev.created_at:%Y-%m-%d %H:%M}) — "
                    f"{views.evaluation_label(ev)}, sandbox `{v.get('sandbox', '?')}`, "
                    f"seed {v.get('seed', '?')}, {v.get('trials', '?')} trials per variant")
        _badge(ev.level, ev.verified_on)
        for reason in ev.reasons:  # a step that could not run here is no failure: a warning, not an error
            (st.error if ev.failed_step else st.warning)(reason)
        if steps := views.step_table(v):
            st.dataframe(steps, hide_index=True, width="stretch")
        if v.get("variants"):
            st.dataframe(views.variant_table(v), hide_index=True, width="stretch")
        if v.get("stress"):
            st.caption("Stress cases (inputs the judge made: scaled, zeroed, non-contiguous, larger, perturbed)")
            st.dataframe(views.stress_table(v), hide_index=True, width="stretch")
        if v.get("anticheat"):
            st.dataframe(views.anticheat_table(v), hide_index=True)
        sizes = v.get("sizes") or {}
        if sizes.get("used") != sizes.get("declared"):
            st.caption(f"sizes used {sizes.get('used')} (declared {sizes.get('declared')})")


def _badge(level: str | None, verified_on: str | None) -> None:
    """The evaluation's rung of the verification ladder as a coloured pill ("level —" when unknown)."""
    label, color = views.level_badge(level, verified_on)
    st.badge(label if level else f"level {label}", color=color)


def compile_tab(latest) -> None:
    table = views.build_table(latest.verdict) if latest else []
    if not table:
        st.info((latest and (latest.verdict.get("build") or {}).get("note")) or "No compile metrics recorded.")
        return
    st.caption(f"Ahead-of-time build for {latest.verdict['build'].get('target')} (ptxas -v)")
    st.dataframe(table, hide_index=True, width="stretch")


def timings_tab(detail) -> None:
    points = views.timing_points(list(detail.evaluations))
    if not points:
        notes = {ev.verdict.get("timings_note") for ev in detail.evaluations} - {None}
        st.info("No GPU timings yet" + (f": {'; '.join(sorted(notes))}" if notes else "."), icon=":material/timer:")
        return
    st.caption("Each point is one timed evaluation (triton.testing.do_bench medians); x is the main inputs' elements.")
    st.scatter_chart(points, x="input elements", y="ms", color="series")
    st.dataframe(points, hide_index=True, width="stretch")


def conversation_tab(candidate_id: int) -> None:
    calls = registry().llm_calls(candidate_id)
    if not calls:
        st.info("No LLM conversation: this candidate was drafted offline (expert) or recorded by hand.")
        return
    for role, text in views.conversation(calls):
        with st.chat_message("assistant" if role == "assistant" else "user"):
            st.caption(role)
            st.markdown(text if role == "assistant" else f"```text\n{text}\n```")
    st.caption(", ".join(f"{c['model']}: {c['prompt_tokens']}+{c['completion_tokens']} tokens, {c['latency_s']:.1f} s"
                         for c in calls))


def review_actions(candidate_id: int) -> None:
    st.subheader("Review")
    history = registry().reviews(candidate_id)
    for r in history[:5]:
        st.caption(f"{'✅ approved' if r.decision == 'approved' else '❌ rejected'} {r.created_at:%Y-%m-%d %H:%M}"
                   + (f": {r.comment}" if r.comment else ""))
    comment = st.text_input("Comment (required to reject)", key=f"comment-{candidate_id}")
    cols = st.columns(3)
    if cols[0].button("Approve", key="approve"):
        registry().review(candidate_id, "approved", comment or None)
        _flash(f"Approved #{candidate_id}.")
    if cols[1].button("Reject", key="reject"):
        registry().review(candidate_id, "rejected", comment)
        _flash(f"Rejected #{candidate_id}.")
    if cols[2].button("Promote", type="primary", key="promote"):
        v = registry().promote(candidate_id, note=comment or "promoted in the workbench")
        _flash(f"Promoted: {v.op} v{v.number} ({v.backend}, {v.hardware}) is candidate #{v.candidate_id}.")
    if flash := st.session_state.pop("review_flash", None):
        st.success(flash, icon=":material/check_circle:")


def _flash(message: str) -> None:
    """Say what happened (below the buttons) after the rerun that shows its effect in the tables above."""
    st.session_state["review_flash"] = message
    st.rerun()


st.title("Review")
with user_errors():
    op = pick_op()
    chosen = versions_and_candidates(op) if op else None
    if chosen is not None:
        ids = [r.candidate_id for r in registry().list_kernels(op, limit=500)]
        candidate_tabs(chosen, ids)
        review_actions(chosen)
