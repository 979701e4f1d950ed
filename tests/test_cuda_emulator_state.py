"""The CUDA emulator's memory as a GPU leaves it (issue 33): namespace-scope __shared__ poisoned per
block, arguments at their tensor's alignment, reads far outside a buffer faulting, and static storage
(__device__ variables, launcher statics) kept across calls but never allowed to choose a result.

One library (tests/data/cuda/emulator_state.cu), built once per module; each wrong kernel has a
correct control beside it."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from conftest import KERNELS, TINY
from opforge.backends.cuda.emulator import EmulatedLibrary, OutOfBoundsError
from opforge.backends.cuda.emulator.build import compiler
from opforge.backends.cuda.emulator.state import StatefulError, take_findings
from opforge.backends.cuda.emulator.statics import declarations
from opforge.backends.cuda.emulator.translate import function_bodies
from opforge.backends.cuda.signature import blank_comments
from opforge.backends.cuda.static import check_cuda_candidate
from opforge.harness import ladder
from opforge.harness.verify import VerifyOptions, verify

CASES = (Path(__file__).parent / "data" / "cuda" / "emulator_state.cu").read_text()
needs_gxx = pytest.mark.skipif(compiler() is None, reason="the CUDA emulator builds with g++, and there is none")


@pytest.fixture(scope="module")
def lib(tmp_path_factory) -> EmulatedLibrary:
    return EmulatedLibrary.build(CASES, cache_dir=str(tmp_path_factory.mktemp("emu-state")))


def registered(source: str) -> list[tuple[str, ...]]:
    code = blank_comments(source, strings=True)
    return [d.names for d in declarations(code, function_bodies(code))]


def test_the_translator_registers_variables_of_static_storage_and_nothing_else():
    source = """
    typedef float real_t; using idx = int; constexpr int kN = 4; extern __device__ int elsewhere;
    struct P { int a; static int count; }; int P::count = 0;
    template <int N> __device__ float tmpl[N];
    __device__ float (*fp)(float) = nullptr;
    __device__ float f(float v);
    __device__ __align__(16) float aligned[4], plain = 1.0f;
    static __device__ P pairs[2] = {{1, 2}, {3, 4}};
    __constant__ float weights[8];
    namespace ns { int host_counter; }
    thread_local unsigned per_thread; static auto deduced = 0u;
    __global__ void k(float* y) { static int local_in_kernel; __shared__ float s[4]; y[0] = s[0]; }
    extern "C" void launch(float* y, cudaStream_t st) { static int calls = 0; ++calls; k<<<1, 1, 0, st>>>(y); }
    """
    assert registered(source) == [("aligned", "plain"), ("pairs",), ("weights",), ("host_counter",),
                                  ("per_thread",), ("deduced",),
                                  ("local_in_kernel",), ("calls",)]


@needs_gxx
def test_a_misaligned_view_reaches_the_kernel_at_its_offset(lib):
    out = torch.zeros(1, dtype=torch.int32)
    base = torch.zeros(600)
    for offset in (0, 1, 3, 64):  # a float4 load at offset 1 or 3 is misaligned on a GPU
        view = base[offset:offset + 512]
        lib.call("address_launch", [view, out], schedules=1)
        assert out.item() == offset * 4 % 256, offset


@needs_gxx
def test_a_read_far_past_the_end_or_before_the_start_faults_in_the_fence(lib):
    """Far beyond the canary zones (a read, which canaries cannot see) only the unmapped fences
    catch the access; the control reads the last element."""
    x, y = torch.arange(256.0), torch.zeros(1)
    lib.call("far_read_launch", [x, y, 255], schedules=1)
    assert y.item() == 255.0
    with pytest.raises(OutOfBoundsError, match=r"a read or write 198976 bytes past the end of argument x"):
        lib.call("far_read_launch", [x, y, 50_000], schedules=1)
    with pytest.raises(OutOfBoundsError, match=r"a read or write 16384 bytes before the start of argument x"):
        lib.call("far_read_launch", [x, y, -4096], schedules=1)


@needs_gxx
def test_a_namespace_scope_shared_array_is_poisoned_before_every_block(lib):
    x, y = torch.randn(300), torch.zeros(300)
    lib.call("tile_launch", [x, y, 300, 0], schedules=1)
    assert torch.isnan(y).all(), "an unwritten namespace-scope __shared__ element read as a value"
    lib.call("tile_launch", [x, y, 300, 1], schedules=2)
    assert torch.equal(y, x * 2)


@needs_gxx
@pytest.mark.parametrize("launcher, variable, left", [
    ("device_bomb_launch", "launches_seen", 4),  # a __device__ counter: 4 schedules, then 1 from load
    ("host_bomb_launch", "calls", 4),            # a static local of the launcher
])
def test_a_launch_count_time_bomb_is_refused_at_the_first_call(lib, launcher, variable, left):
    x, y = torch.randn(200), torch.zeros(200)
    take_findings()
    with pytest.raises(StatefulError) as caught:
        lib.call(launcher, [x, y, 200])
    assert str(caught.value).startswith(f"stateful: launcher {launcher} changes variable `{variable}`")
    assert f"this call left {left}, the same call from its load-time value (0) leaves 1" in str(caught.value)
    assert take_findings() == [str(caught.value)]  # what the CUDA plugin reports to the verdict


@needs_gxx
def test_a_cache_answering_from_an_earlier_call_is_refused(lib):
    x, y = torch.randn(256), torch.zeros(256)
    lib.call("cached_launch", [x, y, 256])
    assert torch.equal(y, 3 * x)
    x.copy_(torch.randn(256))  # new data at the same address, as a GPU's caching allocator gives it
    with pytest.raises(StatefulError, match=r"^stateful: launcher cached_launch computes argument y from what "
                                            r"earlier calls left in `cached_x`"):
        lib.call("cached_launch", [x, y, 256])


@needs_gxx
def test_state_a_call_rewrites_or_resets_passes_call_after_call(lib):
    """Controls: threadFenceReduction (a __device__ workspace and a retirement counter the last
    block resets; a smaller call leaves the workspace's tail as a larger one wrote it), and a table
    built by the first call's first launch, read by its second."""
    for n in (1000, 300, 1000, 700):
        x, out = torch.randn(n), torch.zeros(1)
        lib.call("fence_reduce_launch", [x, out, n])
        torch.testing.assert_close(out, x.sum().reshape(1), rtol=1e-5, atol=1e-4)
        y = torch.zeros(300)
        lib.call("lazy_table_launch", [x[:300], y, 300])
        assert torch.equal(y, x[:300] + (torch.arange(300) % 128) * 0.5)


def test_a_counter_in_cudamalloc_memory_behind_a_static_pointer_is_refused_statically():
    """The third place a count could live: device memory the launcher allocates once. Launchers may
    not allocate (cuda-forbidden-call), so only __device__ variables and statics remain (above)."""
    source = (KERNELS / "hostile_cuda_launch_count_bomb.py").read_text().replace(
        "    softmax_rows<<<", "    static unsigned* counter = nullptr;\n"
        "    if (!counter) cudaMalloc((void**)&counter, sizeof(unsigned));\n    softmax_rows<<<")
    reasons = check_cuda_candidate(source, float32_spec=True).reasons
    assert any(r.startswith("cuda-forbidden-call: cudaMalloc") for r in reasons), reasons


@needs_gxx
def test_a_time_bomb_fails_verification_as_stateful_in_the_anticheat_check():
    v = verify(TINY, KERNELS / "hostile_cuda_launch_count_bomb.py",
               VerifyOptions(seed=11, trials=1, device="cpu", backend="cuda", timeout_s=120))
    assert not v["correct"] and (v["failed_step"], ladder.failed_check(v)) == ("cpu_run", "anticheat"), v["reasons"]
    assert any(r.startswith("stateful: ") and "changes variable `launches`" in r for r in v["reasons"]), v["reasons"]
