"""Watch runs: every run in the registry, and one run live — each round's candidates with their
verdict (the step that failed, if one did), the current best, tokens and time spent — with cancel
(and resume when its process is gone). Everything is read back from the registry, so a reloaded page reconnects."""
from __future__ import annotations

import streamlit as st

from opforge.agents.background import background_run, log_tail, recent_background_runs, resume_background_run
from opforge.agents.run import cancel_run
from opforge.ui import views
from opforge.ui.state import db_path, registry, user_errors

REFRESH_S = 2.0


def pick_run() -> str | None:
    all_runs = registry().list_runs(limit=100)
    starting = [b for b in recent_background_runs(db_path()) if b.alive and registry().get_run(b.run_key) is None]
    keys = [b.run_key for b in starting] + [r.run_key for r in all_runs]
    if not keys:
        st.info("No runs yet. Start one on **Request a kernel**.", icon=":material/info:")
        st.page_link("ui/pages/request.py", label="Request a kernel", icon=":material/edit_note:")
        return None
    wanted = st.query_params.get("run") or st.session_state.get("watch_run")
    key = st.selectbox("Run", keys, index=keys.index(wanted) if wanted in keys else 0,
                       format_func=lambda k: _label(k, all_runs))
    st.query_params["run"] = key
    chosen = next((r for r in all_runs if r.run_key == key), None)
    st.session_state["watch_rendered"] = (key, chosen and chosen.status)
    with st.expander(f"All runs ({len(all_runs)})"):
        st.dataframe(views.run_table(all_runs), hide_index=True, width="stretch")
    return key


def _label(key: str, all_runs) -> str:
    run = next((r for r in all_runs if r.run_key == key), None)
    return f"{key} — starting…" if run is None else f"{key} — {run.op} ({run.status})"


@st.fragment(run_every=REFRESH_S)
def live(run_key: str) -> None:
    with user_errors():
        run = registry().get_run(run_key)
        if st.session_state.get("watch_rendered") != (run_key, run and run.status):
            st.rerun()  # started or finished since the page drew its run list: redraw all of it
        process = background_run(db_path(), run_key)  # None: a run started elsewhere (opforge run, batch)
        if run is None:
            _not_started(process)
            return
        _header(run, process)
        _candidates(run_key, run.best_candidate_id)
        if process is not None:
            with st.expander("Event log", expanded=run.status == "running"):
                st.code(log_tail(process) or "(no output yet)", language="text")


def _not_started(process) -> None:
    if process is None:
        st.warning("Unknown run.")
    elif process.alive:
        st.info("Starting: loading the spec and the drafter…", icon=":material/hourglass_top:")
    else:
        st.error("The run stopped before it began:", icon=":material/error:")
        st.code(log_tail(process) or "(no output)", language="text")


def _header(run, process) -> None:
    gone = run.status == "interrupted" or run.status == "running" and process is not None and not process.alive
    status = "process gone — resume it" if gone and run.status == "running" else run.status
    cols = st.columns(5)
    cols[0].metric("Status", status)
    cols[1].metric("Op", run.op)
    cols[2].metric("Best candidate", f"#{run.best_candidate_id}" if run.best_candidate_id else "—")
    cols[3].metric("Tokens", f"{run.tokens:,}")
    cols[4].metric("Time", views.elapsed(run))
    st.caption(f"drafter **{run.drafter}**, backend **{run.backend}**, hardware `{run.hardware}`, "
               f"budget {run.config.get('budget', {}).get('rounds', '?')} rounds")
    if run.stop_reason or run.error:
        (st.error if run.error else st.info)(run.error or f"Stopped: {run.stop_reason}")
    if run.status == "running" and not gone and st.button("Cancel run", key="cancel"):
        cancel_run(run.run_key, registry())
        st.toast("Cancelled: its process is stopped, with the job it was running.")
    if gone and st.button("Resume run", key="resume"):
        resume_background_run(run.run_key, db_path())
    if run.best_candidate_id:
        st.page_link("ui/pages/review.py", label=f"Review the best kernel (#{run.best_candidate_id})", icon=":material/rule:",
                     query_params={"candidate": run.best_candidate_id})


def _candidates(run_key: str, best: int | None) -> None:
    rows = registry().run_candidates(run_key)
    if not rows:
        st.caption("No candidates drafted yet.")
        return
    rounds = max(r.round or 0 for r in rows) + 1
    st.markdown(f"**Candidates by round** — {len(rows)} in {rounds} round(s), newest first")
    table = views.kernel_table(rows[::-1])
    for row in table:
        row["best"] = "🏆" if row["id"] == best else ""
    st.dataframe(table, hide_index=True, width="stretch", height="auto" if len(table) < 12 else 420,
                 column_order=("round", "best", "id", "verdict", "level", "reason", "ms", "speedup", "active", "drafter"))


st.title("Watch runs")
with user_errors():
    chosen = pick_run()
    if chosen:
        live(chosen)
