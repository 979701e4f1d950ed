"""On a CUDA GPU: verification runs on the device and profiling fills the verdict's timings.
Skipped, with the reason, on a machine without one (scripts/gpu_check.sh runs these on a GPU)."""
from __future__ import annotations

import pytest
import torch

from conftest import KERNELS, ROOT, TINY
from opforge.harness.verify import VerifyOptions, verify

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine")


def test_gpu_verdict_has_measured_timings():
    v = verify(ROOT / "ops" / "softmax.py", ROOT / "opforge" / "knowledge" / "triton" / "softmax.py", VerifyOptions(seed=5))
    assert v["correct"], v["reasons"]
    assert v["device"] == "cuda" and v["hardware"].startswith("cuda/")
    assert v["sizes"]["used"] == v["sizes"]["declared"]  # no shrinking on a GPU
    t = v["timings"]
    assert t["kernel_ms"] > 0 and t["eager_ms"] > 0
    assert t["speedup_eager"] == pytest.approx(t["eager_ms"] / t["kernel_ms"])
    assert v["stage"] == "profile"


def test_gpu_build_reports_real_registers():
    v = verify(TINY, KERNELS / "good.py", VerifyOptions(seed=5, trials=2))
    assert v["correct"], v["reasons"]
    kernel = v["build"]["kernels"][0]
    assert kernel["registers"] > 0 and kernel["arch"] == f"sm_{v['hardware'].rsplit('sm_', 1)[1]}"


def test_gpu_cheat_still_rejected():
    v = verify(TINY, KERNELS / "cheat_torch_compute.py", VerifyOptions(seed=5, trials=2))
    assert not v["correct"] and v["reasons"][0].startswith("torch-compute")
    assert v["timings"] is None


@pytest.mark.parametrize("kernel", ["hostile_stops_launching", "hostile_memoize"])
def test_gpu_timed_calls_are_checked(kernel):
    """A kernel that games the benchmark (stops launching, replays a memoised result) is caught
    among the timed calls themselves, and no timing of it is reported."""
    v = verify(TINY, KERNELS / f"{kernel}.py", VerifyOptions(seed=5, trials=2))
    assert not v["correct"], v
    assert {r.split(":", 1)[0] for r in v["reasons"]} & {"no-launch", "cached-output", "mismatch"}, v["reasons"]
    assert v["timings"] is None
