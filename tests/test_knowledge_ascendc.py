"""The AscendC knowledge the drafter reads: every example kernel (opforge/backends/ascendc/knowledge/<op>.py)
passes the AscendC static checks and pairs with a suite spec; the notes parse; retrieval for
backend ascendc offers AscendC examples and notes only; the AscendC system prompt renders with the
rules those checks enforce. The examples are checked statically only: building and running them
needs CANN and an NPU."""
from __future__ import annotations

import pytest

from conftest import ROOT
from opforge.agents.drafters.base import DraftRequest
from opforge.agents.prompts.render import render_messages
from opforge.backends.ascendc.static import check_ascendc
from opforge.knowledge import load_examples, load_notes, retrieve

KNOWLEDGE = ROOT / "opforge" / "backends" / "ascendc" / "knowledge"
EXAMPLES = sorted(p.stem for p in KNOWLEDGE.glob("*.py") if not p.stem.startswith("_"))


def test_the_examples_cover_pointwise_and_a_reduction_with_suite_specs():
    assert {"silu", "swiglu", "row_sum"} <= set(EXAMPLES)
    assert all((ROOT / "ops" / f"{op}.py").is_file() for op in EXAMPLES), EXAMPLES


@pytest.mark.parametrize("op", EXAMPLES)
def test_an_ascendc_example_passes_the_static_checks(op):
    source = (KNOWLEDGE / f"{op}.py").read_text()
    report = check_ascendc(source)
    assert report.reasons == [] and report.warnings == [], (report.reasons, report.warnings)
    assert report.project.form == "direct" and len(report.kernels) == 1
    assert "BUFFER_NUM = 2" in source and "DataCopyPad" in source


def test_the_notes_cover_the_pipeline_tiling_split_and_reductions():
    titles = " ".join(n.title.lower() for n in load_notes("ascendc"))
    for topic in ("double buffering", "host tiling", "multi-core", "reductions", "alignment"):
        assert topic in titles, topic


def test_retrieval_for_ascendc_offers_ascendc_examples():
    spec = (ROOT / "ops" / "row_sum.py").read_text()
    items = retrieve(spec, backend="ascendc", k=6)
    examples = [i for i in items if i.kind == "example"]
    assert examples and examples[0].source == "backends/ascendc/knowledge/row_sum.py", [i.source for i in items]
    assert all("ASCENDC_SOURCES" in i.text for i in examples)
    assert all(i.source.startswith("backends/ascendc/notes/") for i in items if i.kind == "note")
    assert {e.op for e in load_examples("ascendc")} == set(EXAMPLES)


def test_the_ascendc_system_prompt_renders_the_contract():
    request = DraftRequest(op="silu", spec_source=(ROOT / "ops" / "silu.py").read_text(), backend="ascendc",
                           hardware="cpu/x86_64/ascendc-cpu-twin")
    system, user = render_messages(request)
    text = system["content"]
    for rule in ("ASCENDC_SOURCES", "__global__ __aicore__", "<<<blockDim, nullptr, stream>>>",
                 "PYBIND11_MODULE", "BUFFER_NUM = 2", "196608", "multiple of 32 bytes", "DataCopyPad",
                 "AllocTensor", "FreeTensor", "set on the host", "GetCoreNumAiv"):
        assert rule in text, rule
    assert "CUDA_SRC" not in text and "@triton.jit" not in text
    assert "Backend: ascendc" in user["content"]
