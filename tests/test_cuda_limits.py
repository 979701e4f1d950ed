"""The CUDA emulator's launch-resource model (include/emu_limits.h, emulator/limits.py): ptxas's
numbers joined with each launch as a GPU's driver joins them. Each limit has a launch over it that
fails as on an H100 and the same kernel within it that runs. One source
(data/cuda/launch_limits.cu): one nvcc compile and one emulator build per module."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import torch

from conftest import KERNELS, TINY
from opforge.backends.cuda import nvcc, toolchain
from opforge.backends.cuda.emulator import EmulatedLibrary, EmulatorError, limits
from opforge.backends.cuda.emulator.build import compiler
from opforge.backends.cuda.emulator.translate import translate

SOURCE = (Path(__file__).parent / "data" / "cuda" / "launch_limits.cu").read_text()
pytestmark = pytest.mark.skipif(compiler() is None, reason="the CUDA emulator builds with g++, and there is none")


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    if toolchain.find_nvcc() is None or not shutil.which("g++"):
        if os.environ.get("OPFORGE_CI"):
            pytest.fail("nvcc is required in CI: run `make setup`")
        pytest.skip("no nvcc: the launch-resource model has no ptxas numbers here")
    return nvcc.compile_cubin(SOURCE, 90, cache_dir=str(tmp_path_factory.mktemp("nvcc")))


@pytest.fixture(scope="module")
def lib(report, tmp_path_factory) -> EmulatedLibrary:
    library = EmulatedLibrary.build(SOURCE, cache_dir=str(tmp_path_factory.mktemp("emu")))
    limits.load(library, report)
    return library


def kernel(report: dict, name: str) -> dict:
    return next(k for k in report["kernels"] if k["kernel"] == name)


def test_registers_times_threads_over_64k_fail_the_launch_and_fewer_threads_run(lib, report):
    regs = kernel(report, "heavy")["registers"]
    assert regs * 1024 > 65536 >= -(-regs // 8) * 8 * 256, f"ptxas gave heavy {regs} registers: the test needs 65-255"
    x, y = torch.randn(2048), torch.zeros(2048)
    limits.findings()
    with pytest.raises(EmulatorError, match=rf"^out-of-resources: too many resources requested for launch "
                                            rf"\(cudaErrorLaunchOutOfResources\): kernel heavy .* uses {regs} registers "
                                            rf"per thread \(ptxas\) x 1024 threads = \d+ registers per block .* > 65536"):
        lib.call("run_heavy", [x, y, 2048, 1024])
    assert limits.findings()["memory"][0].startswith("out-of-resources:")  # kept, even if forward catches it
    lib.call("run_heavy", [x, y, 2048, 256])
    assert y.abs().sum() > 0


def test_static_and_dynamic_shared_memory_over_48kb_need_the_opt_in(lib, report):
    assert kernel(report, "staged")["shared_bytes"] == 40960
    y = torch.zeros(256)
    with pytest.raises(EmulatorError, match=r"^out-of-resources: .*40960 bytes of static \(ptxas\) \+ 16384 of dynamic "
                                            r"shared memory = 57344, and the default allows 8192"):
        lib.call("run_staged", [y, 256, 16384, 0])
    lib.call("run_staged", [y, 256, 16384, 1])  # cudaFuncSetAttribute(MaxDynamicSharedMemorySize, 16384)
    assert y[0] == 256.0


def test_static_shared_memory_alone_over_48kb_is_ptxas_own_error(report, tmp_path):
    source = "__global__ void big(float* y) { __shared__ float s[12800]; s[threadIdx.x] = y[0]; y[1] = s[5]; }\n"
    with pytest.raises(nvcc.NvccError, match=r"too much shared data \(0xc800 bytes, 0xc000 max\)"):
        nvcc.compile_cubin(source, 90, cache_dir=str(tmp_path))


def test_more_threads_than_launch_bounds_fail_the_launch(lib, report):
    assert kernel(report, "bounded")["max_threads"] == 256 and kernel(report, "heavy")["max_threads"] is None
    y = torch.zeros(512)
    with pytest.raises(EmulatorError, match=r"^out-of-resources: too many resources .* a block of 512 threads, more than "
                                            r"its __launch_bounds__ maximum of 256"):
        lib.call("run_bounded", [y, 512, 512])
    lib.call("run_bounded", [y, 512, 256])
    assert y[511] == 1022.0


def test_device_malloc_past_the_heap_limit_returns_null(lib):
    ok = torch.full((1,), -1.0)
    lib.call("run_heap", [ok, 16 << 20, 0])  # 16 MB from the 8 MB default heap
    assert ok.item() == 0.0
    lib.call("run_heap", [ok, 16 << 20, 32 << 20])  # cudaDeviceSetLimit(cudaLimitMallocHeapSize, 32 MB)
    assert ok.item() == 1.0


def test_a_write_past_a_device_malloc_block_is_out_of_bounds(lib):
    with pytest.raises(EmulatorError, match=r"^out-of-bounds: .*heap_overrun"):
        lib.call("run_heap_overrun", [torch.zeros(1), 64])


def test_recursion_past_the_stack_limit_faults_and_a_shallow_one_runs(lib, report):
    frame = next(f for f in report["functions"] if f["name"] == "depth_sum")["stack_bytes"]
    assert 0 < frame * 2000 and frame * 11 <= 1024, f"ptxas gave depth_sum a {frame}-byte frame"
    out = torch.zeros(32, dtype=torch.int32)
    with pytest.raises(EmulatorError, match=rf"^out-of-resources: stack overflow .*depth_sum at recursion depth \d+ .*"
                                            rf"ptxas: {frame}-byte frame each.* > the 1024-byte cudaLimitStackSize"):
        lib.call("run_recurse", [out, 2000])
    lib.call("run_recurse", [out, 10])
    expected = 1
    for d in range(1, 11):
        expected = expected * 3 + d
    assert out[0].item() == expected


def test_the_translator_guards_device_functions_and_routes_device_malloc():
    host = translate(SOURCE)
    assert "depth_sum(int d) { OPFORGE_EMU_FRAME();" in host
    assert "::opforge_emu::device_malloc(bytes)" in host and "::opforge_emu::device_free(p)" in host
    assert "__global__ void heap(float* ok, unsigned long long bytes) {\n" in host  # a kernel: no frame guard


def test_without_nvcc_the_verdict_says_resources_were_not_checked(monkeypatch):
    import opforge.backends.cuda as cuda

    monkeypatch.setattr(cuda, "_nvcc", lambda: None)
    source = (KERNELS / "cuda_softmax.py").read_text()
    outcome = cuda.CudaPlugin().static(source, float32_spec=True)
    assert limits.UNCHECKED in outcome.warnings and outcome.skip["compile"]["status"] == "skipped"


def test_a_launch_over_its_launch_bounds_fails_verification_as_out_of_resources(tmp_path):
    from opforge.harness import ladder
    from opforge.harness.verify import VerifyOptions, verify

    source = (KERNELS / "cuda_softmax.py").read_text()
    launch = "softmax_rows<<<rows, 256, 0, stream>>>"
    assert launch in source
    path = tmp_path / "cuda_bounds.py"
    path.write_text(source.replace("__global__ void softmax_rows", "__global__ void __launch_bounds__(128) softmax_rows"))
    v = verify(TINY, path, VerifyOptions(seed=7, trials=1, device="cpu", backend="cuda"))
    assert not v["correct"] and v["reasons"][0].startswith("out-of-resources:"), v["reasons"]
    assert "256 threads, more than its __launch_bounds__ maximum of 128" in v["reasons"][0]
    assert ladder.failed_check(v) == "run" and v["steps"]["cpu_run"]["status"] == "failed"
