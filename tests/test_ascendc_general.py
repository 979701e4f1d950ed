"""AscendC candidates written the way LLM answers and Huawei's samples are (tests/data/ascendc/general/,
its README lists them all with their verdicts): the cheapest distinct ones verify end to end through the
emulator here: a direct-launch RMSNorm (TBuf weight, V->S flag before GetValue) and a TBuf kernel that leaves out one hand-written flag (a race, exit 1) beside its correct twin's form."""
from __future__ import annotations

import pytest

from conftest import DATA
from opforge.harness import ladder
from opforge.harness.verify import VerifyOptions, verify

GEN = DATA / "ascendc" / "general"
OPTIONS = VerifyOptions(backend="ascendc", device="cpu", trials=1, seed=5, sandbox="none")


@pytest.fixture(autouse=True)
def no_cann(monkeypatch):
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)


@pytest.mark.parametrize("spec, candidate", [
    ("rms_norm_spec.py", "direct_rms_norm.py"),  # the MultiKernelBench form: tests/test_ascendc_mkb.py, the README's rows
])
def test_a_general_candidate_verifies_emulated(spec, candidate):
    v = verify(GEN / spec, GEN / candidate, OPTIONS)
    assert ladder.exit_code(v) == 0 and v["level"] == "emulated", v["reasons"]
    assert v["steps"]["cpu_run"]["status"] == "passed"


def test_a_missing_hand_written_flag_is_a_race():
    """mkb_bias_add_tbuf.py without its MTE3->MTE2 flag: the next row's copy-in overwrites the buffer the
    last copy-out reads."""
    v = verify(GEN / "bias_add_spec.py", GEN / "mkb_bias_add_tbuf_noflag.py", OPTIONS)
    assert ladder.exit_code(v) == 1 and v["steps"]["cpu_run"]["status"] == "failed", v["reasons"]
    assert v["reasons"][0].startswith("race:") and "DataCopyPad" in v["reasons"][0], v["reasons"]
