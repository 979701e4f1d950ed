"""Export: build the op library (`kernels_generated`) from the promoted versions, show which ops it
holds and their speedups, and download its wheel."""
from __future__ import annotations

import re
from pathlib import Path

import streamlit as st

from opforge.ui.state import db_path, registry, user_errors


def promoted_table() -> bool:
    active = registry().active_versions()
    if not active:
        st.info("Nothing is promoted yet: promote a verified candidate on **Review** (a run promotes its best "
                "kernel by itself when the policy allows).", icon=":material/info:")
        st.page_link("ui/pages/review.py", label="Review", icon=":material/rule:")
        return False
    st.subheader(f"Promoted versions ({len(active)})")
    st.dataframe([{"op": v.op, "version": f"v{v.number}", "candidate": v.candidate_id, "backend": v.backend,
                   "hardware": v.hardware, "promoted": v.promoted_at} for v in active], hide_index=True, width="stretch")
    return True


def build(name: str) -> None:
    from opforge.exporter import export_library

    out = db_path().parent / "export" / name
    with st.spinner("Rendering the package and building its wheel…"):
        result = export_library(registry(), out, name=name, wheel=True)
    st.session_state["export_result"] = result


def show_result(result) -> None:
    st.success(f"Built **{result.name}** with {len(result.ops)} op(s) in `{result.out}`", icon=":material/package_2:")
    st.dataframe([{"op": op.name, "version": f"v{op.version}", "candidate": op.candidate_id, "hardware": op.hardware,
                   "speedup vs eager": f"{op.speedup_eager:.2f}x" if op.speedup_eager else "not timed (no GPU)",
                   "spec sha256": op.spec_sha256[:12]} for op in result.ops], hide_index=True, width="stretch")
    if result.wheel and Path(result.wheel).is_file():
        wheel = Path(result.wheel)
        st.download_button(f"Download {wheel.name}", wheel.read_bytes(), file_name=wheel.name,
                           mime="application/zip", type="primary")
        st.caption(f"`pip install {wheel.name}`, then `import {result.name}; {result.name}.<op>(*inputs)`")
    else:
        st.warning("The package was rendered but no wheel was built.")


st.title("Export the op library")
with user_errors():
    if promoted_table():
        name = st.text_input("Package name", "kernels_generated")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            st.error("The package name must be a Python identifier (letters, digits, underscores).")
        elif st.button("Build library", type="primary"):
            build(name)
    if (result := st.session_state.get("export_result")) is not None:
        show_result(result)
