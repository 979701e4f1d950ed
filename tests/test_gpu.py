"""On a CUDA GPU: verification runs on the device and profiling fills the verdict's timings.
Skipped, with the reason, on a machine without one (scripts/gpu_check.sh runs these on a GPU)."""
from __future__ import annotations

import pytest
import torch

from conftest import KERNELS, ROOT, TINY
from opforge.harness.verify import VerifyOptions, verify

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine")


def test_gpu_verdict_has_measured_timings():
    v = verify(ROOT / "ops" / "softmax.py", ROOT / "opforge" / "backends" / "triton" / "knowledge" / "softmax.py", VerifyOptions(seed=5))
    assert v["correct"], v["reasons"]
    assert v["device"] == "cuda" and v["hardware"].startswith("cuda/")
    assert v["sizes"]["used"] == v["sizes"]["declared"]  # no shrinking on a GPU
    t = v["timings"]
    assert t["kernel_ms"] > 0 and t["eager_ms"] > 0
    assert t["speedup_eager"] == pytest.approx(t["eager_ms"] / t["kernel_ms"])
    assert (v["failed_step"], v["level"]) == (None, "profiled")


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


def test_gpu_timings_are_consistent_and_the_compile_baseline_is_there_or_explained():
    """What a GPU verdict promises about its numbers: a torch.compile median or the reason it is
    missing, speedups that are the ratios of the medians, and medians of a plausible size (the
    4096x16384 float32 softmax reads and writes 512 MiB: on any data-centre GPU between 1 us and 1 s)."""
    v = verify(ROOT / "ops" / "softmax.py", ROOT / "opforge" / "backends" / "triton" / "knowledge" / "softmax.py", VerifyOptions(seed=7))
    assert v["correct"], v["reasons"]
    t = v["timings"]
    assert (t["compile_ms"] is not None) != bool(t["note"]), t  # exactly one: a median or why there is none
    if t["compile_ms"] is not None:
        assert t["compile_ms"] > 0 and t["speedup_compile"] == pytest.approx(t["compile_ms"] / t["kernel_ms"])
    else:
        assert t["note"].startswith("torch.compile baseline failed:") and t["speedup_compile"] is None
    for key in ("kernel_ms", "eager_ms"):
        assert 1e-3 < t[key] < 1e3, (key, t)
    assert t["speedup_eager"] == pytest.approx(t["eager_ms"] / t["kernel_ms"])
    assert t["method"]


# Every cheat class of tests/test_verdict_forgery.py, on the device: the same mechanisms must reject
# them where the kernels run for real (the TF32 one needs a matmul spec and is kept there).
DEVICE_CHEATS = [c for c in __import__("test_verdict_forgery").CASES if c[0] != "hostile_tf32_constant"]


@pytest.mark.parametrize("kernel, spec, code, text, skip_static", DEVICE_CHEATS, ids=[c[0] for c in DEVICE_CHEATS])
def test_gpu_every_cheat_class_is_rejected_on_the_device(kernel, spec, code, text, skip_static):
    v = verify(spec, KERNELS / f"{kernel}.py", VerifyOptions(seed=4321, trials=2, skip_static=skip_static))
    assert v["device"] == "cuda", v["device"]
    assert not v["correct"], v
    assert v["timings"] is None  # a rejected kernel is never timed
    codes = {r.split(":", 1)[0] for r in v["reasons"]}
    # On the device the stress and timed-call checks may catch a numerics cheat before its CPU
    # mechanism does; any anticheat or compare reason is a rejection for the right class.
    assert code in codes or (code == "mismatch" and codes & {"mismatch", "no-launch", "cached-output"}), v["reasons"]


def test_gpu_cuda_softmax_runs_on_the_device_and_is_profiled():
    """The CUDA candidate built with nvcc -shared, called on the current stream, timed like Triton."""
    v = verify(ROOT / "ops" / "softmax.py", KERNELS / "cuda_softmax.py", VerifyOptions(seed=5, backend="cuda"))
    assert v["correct"], v["reasons"]
    assert v["level"] == "profiled" and v["verified_on"].startswith("nvidia-"), (v["level"], v["verified_on"])
    assert v["steps"]["device_run"]["status"] == "passed" and v["steps"]["cpu_run"]["status"] == "skipped"
    assert v["timings"]["kernel_ms"] > 0
    assert any(k["arch"] == f"sm_{v['hardware'].rsplit('sm_', 1)[1]}" for k in v["build"]["kernels"])


def test_gpu_cuda_race_is_judged_on_the_device_too():
    """On a GPU the racy kernel may or may not show its race; either way a wrong answer is rejected
    and the verdict comes from the device, not the emulator."""
    v = verify(ROOT / "ops" / "softmax.py", KERNELS / "cuda_torch_compute.py", VerifyOptions(seed=5, backend="cuda"))
    assert not v["correct"] and v["reasons"][0].startswith("torch-compute")
    assert v["steps"]["device_run"]["status"] == "failed"


def test_gpu_exported_cuda_op_runs_its_kernel_on_the_device(tmp_path):
    """An exported library's CUDA op (as in tests/test_export_cuda.py, where the CPU falls back) runs
    its kernel on the GPU with fallback forbidden, from the wheel `opforge export --wheel` built for
    this GPU's architecture, in a Python that cannot import opforge."""
    import zipfile

    from test_export_cuda import isolated, promote_cuda

    from opforge.exporter import export_library
    from opforge.registry import Registry

    with Registry(tmp_path / "reg.db") as reg:
        promote_cuda(reg)
        result = export_library(reg, tmp_path / "lib", name="cuda_lib", wheel=True)
    with zipfile.ZipFile(result.wheel) as wheel:
        wheel.extractall(tmp_path / "unpacked")
    major, minor = torch.cuda.get_device_capability(0)
    code = ("import torch, cuda_lib\n"
            "x = torch.randn(64, 1000, device='cuda')\n"
            "y = cuda_lib.tiny_softmax(x)\n"
            "torch.testing.assert_close(y, torch.softmax(x, -1), atol=1e-5, rtol=1e-5)\n"
            "torch.library.opcheck(torch.ops.cuda_lib.tiny_softmax.default, (x,))\n"
            "print(dict(cuda_lib.fallbacks), len(cuda_lib.ops.tiny_softmax._lib._device_libs))\n"
            "print(cuda_lib.metadata()['ops']['tiny_softmax']['versions'][0]['prebuilt'])\n")
    ran = isolated(code, tmp_path / "unpacked", env={"CUDA_LIB_NO_FALLBACK": "1"})
    assert ran.returncode == 0, ran.stderr[-3000:]
    lines = ran.stdout.splitlines()
    assert lines[0] == "{} 1"  # no fallback, and the kernel library was loaded for this GPU
    assert lines[1] == str([f"sm_{major}{minor}"]), result.notes
