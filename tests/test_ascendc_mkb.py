"""MultiKernelBench's add at its declared size: the spec as MultiKernelBench writes it (4096 x 393216 floats) and an
answer in its five-string form verify at level `emulated` on this machine, with no CANN: the sizes shrink for the
CPU run (recorded), the stress cases grow them again past any tile, and the emulator runs the project's own
tiling function, kernel and binding."""
from __future__ import annotations

import shutil

import pytest

from conftest import DATA
from opforge.harness import ladder
from opforge.harness.verify import VerifyOptions, verify

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the AscendC emulator builds with g++")


def test_multikernelbench_add_at_its_declared_size_verifies_emulated():
    v = verify(DATA / "ascendc/mkb_add_spec.py", DATA / "ascendc/mkb_add_any_size.py",
               VerifyOptions(backend="ascendc", device="cpu", trials=1, seed=3, sandbox="none"))
    assert ladder.exit_code(v) == 0, v["reasons"]
    assert v["level"] == "emulated" and v["verified_on"] == "cpu:opforge-ascendc-emu-1.0"
    assert v["sizes"]["declared"] == {"batch_size": 4096, "dim": 393216} and v["sizes"]["used"] != v["sizes"]["declared"]
    larger = [case for case in v["stress"] if "larger" in str(case)]
    assert larger, v["stress"]


def test_the_known_good_row_sum_verifies_emulated():
    """The project's own AscendC examples run in the emulator (silu and swiglu: benchmarks/ascendc_emulator.py);
    row_sum's binding zero-fills its output on the host (Tensor::zero_) before the cores accumulate into it."""
    v = verify(DATA.parent.parent / "ops/row_sum.py", DATA.parent.parent / "opforge/backends/ascendc/knowledge/row_sum.py",
               VerifyOptions(backend="ascendc", device="cpu", trials=1, seed=4, sandbox="none"))
    assert ladder.exit_code(v) == 0 and v["level"] == "emulated", v["reasons"]


def test_the_plugin_refuses_a_half_width_operator_for_a_float32_spec():
    """The plugin hands the spec's float32-ness to the static rules: MultiKernelBench's add declared float16
    (project JSON and OpDef) is refused for a float32 spec (the float16 side: tests/test_ascendc_static_exec.py)."""
    from opforge.backends.ascendc import PLUGIN

    source = (DATA / "ascendc/mkb_add.py").read_text().replace('"type": ["float"]', '"type": ["float16"]')
    source = source.replace("ge::DT_FLOAT}", "ge::DT_FLOAT16}")
    assert any("float16" in r for r in PLUGIN.static(source, float32_spec=True).reasons)
