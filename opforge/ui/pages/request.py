"""Request a kernel: pick, upload or write an op spec (validated by the spec loader as you go),
choose the backend, drafter, budget and hardware target, and start a run in the background."""
from __future__ import annotations

import os

import streamlit as st

from opforge.agents.background import RunRequest, start_background_run
from opforge.agents.drafters.select import DRAFTERS
from opforge.agents.options import LOOP_FLAGS, run_options
from opforge.backends import BACKENDS
from opforge.harness.errors import SpecError
from opforge.harness.verify import DEVICES
from opforge.ui import specs
from opforge.ui.state import db_path, user_errors

TEMPLATE = '''"""My op: describe it in one line."""
import torch

batch_size = 1024
dim = 1024


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2.0


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''
# "auto": the GPU's own architecture where there is one, else sm_90 (the harness's default).
ARCHS = {"auto (this machine's GPU, else sm_90)": None, "sm_90 (Hopper)": 90, "sm_80 (Ampere)": 80,
         "sm_89 (Ada)": 89, "sm_100 (Blackwell)": 100}
# The same defaults as `opforge run`, by flag (dest): read from the fields that define them.
DEFAULTS = {flag.dest: flag.default for flag in LOOP_FLAGS}


@st.cache_data(show_spinner="Loading the spec…", max_entries=64)
def _validate(path: str, mtime: float, device: str):
    return specs.validate_spec(path, device)


def choose_spec() -> str | None:
    """The chosen spec's path, once the text is in a file; None while there is nothing to check."""
    how = st.radio("Op spec", ["From the suite", "Upload a file", "Write one"], horizontal=True)
    if how == "From the suite":
        names = [p.stem for p in specs.suite_specs()]
        name = st.selectbox("Suite op", names, index=names.index("softmax") if "softmax" in names else 0)
        path = specs.SUITE / f"{name}.py"
        with st.expander("Spec source"):
            st.code(path.read_text(encoding="utf-8"), language="python")
        return str(path)
    if how == "Upload a file":
        upload = st.file_uploader("A KernelBench-style spec (.py)", type=["py"])
        if upload is None:
            st.info("Upload a Python file with `class Model`, `get_inputs()` and `get_init_inputs()`.")
            return None
        try:
            text = upload.getvalue().decode("utf-8")
        except UnicodeDecodeError:
            st.error(f"{upload.name}: not UTF-8 text")
            return None
        return str(specs.save_spec(text, upload.name, db_path()))
    text = st.text_area("Spec source (checked as you type; Ctrl+Enter applies)", TEMPLATE, height=360)
    name = st.text_input("File name", "my_op.py")
    return str(specs.save_spec(text, name, db_path())) if text.strip() else None


def show_validation(path: str, device: str) -> bool:
    try:
        spec = _validate(path, os.path.getmtime(path), device)
    except SpecError as exc:
        st.error(f"Spec problem: {exc}", icon=":material/error:")
        return False
    sizes = ", ".join(f"{k}={v}" for k, v in spec.sizes_used.items()) or "no size constants"
    shrunk = " (shrunk for the CPU interpreter)" if spec.sizes_used != spec.sizes_declared else ""
    st.success(f"**{spec.name}**: valid spec — {spec.n_variants} input list(s), dtypes "
               f"{', '.join(spec.input_dtypes)}, sizes {sizes}{shrunk}", icon=":material/check_circle:")
    return True


def drafter_settings() -> tuple[str, dict]:
    """The drafter's name and, for the LLM, its endpoint."""
    name = st.radio("Drafter", list(DRAFTERS), format_func=lambda d: DRAFTERS[d].label, horizontal=True)
    if not DRAFTERS[name].needs_endpoint:
        return name, {}
    cols = st.columns(3)
    return name, {
        "llm_base_url": cols[0].text_input("Base URL", os.environ.get("OPFORGE_LLM_BASE_URL", "")),
        "llm_model": cols[1].text_input("Model", os.environ.get("OPFORGE_LLM_MODEL", "")),
        # Never prefilled: a widget's value is sent to the browser. Empty keeps the server's own key.
        "llm_api_key": cols[2].text_input("API key (kept in the run's process only)", type="password",
                                          help="Empty: the server's OPENAI_API_KEY, if it has one.") or None}


def run_settings() -> dict:
    """The loop's settings by flag (dest), as agents.options.run_options takes them."""
    cols = st.columns(4)
    backends = [name for name, b in BACKENDS.items() if b.unavailable() is None] or [DEFAULTS["backend"]]
    backend = cols[0].selectbox("Backend", backends, help="Backends without a verifier in this release are not listed.")
    budget = cols[1].number_input("Budget (rounds)", 1, 50, DEFAULTS["budget"])
    candidates = cols[2].number_input("Candidates per round", 1, 8, DEFAULTS["candidates"])
    wall = cols[3].number_input("Wall-time budget (s)", 30, 24 * 3600, int(DEFAULTS["wall"]), step=60)
    cols = st.columns(2)
    device = cols[0].selectbox("Run on", DEVICES, format_func=lambda d: {
        "auto": "the GPU when there is one, else the CPU interpreter", "cpu": "CPU (Triton interpreter)"}[d])
    arch = cols[1].selectbox("Compile target (registers, spills, shared memory)", list(ARCHS))
    return {"backend": backend, "budget": int(budget), "candidates": int(candidates), "wall": float(wall),
            "device": device, "arch": ARCHS[arch]}


st.title("Request a kernel")
st.caption("The agent loop drafts kernels for the spec, verifies each in the sandbox and keeps the best. "
           "The run goes on in the background if you close the page.")
with user_errors():
    spec_path = choose_spec()
    settings = run_settings()
    valid = spec_path is not None and show_validation(spec_path, settings["device"])
    drafter, endpoint = drafter_settings()
    if st.button("Start run", type="primary", disabled=not valid):
        request = RunRequest(spec_path, run_options(settings | {"drafter": drafter}), **endpoint)
        started = start_background_run(request, db_path())
        st.session_state["watch_run"] = started.run_key
        st.switch_page("ui/pages/watch.py", query_params={"run": started.run_key})
