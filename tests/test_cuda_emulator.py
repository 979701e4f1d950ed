"""opforge's CUDA emulator: correct kernels match torch, broken ones fail with the right error.

One library (tests/data/cuda/emulator_cases.cu) holds most kernels, built once per module."""
from __future__ import annotations

import re
import struct
import time
from pathlib import Path

import pytest
import torch

from opforge.backends.cuda.emulator import (DeadlockError, EmuBuildError, EmulatedLibrary, EmulatorError,
                                                    OutOfBoundsError, RaceError, StepLimitError, UnsupportedFeature,
                                                    unsupported_features)
from opforge.backends.cuda.emulator.build import compiler
from opforge.backends.cuda.emulator.translate import PREAMBLE, translate

CASES = (Path(__file__).parent / "data" / "cuda" / "emulator_cases.cu").read_text()
pytestmark = pytest.mark.skipif(compiler() is None, reason="the CUDA emulator builds with g++, and there is none")


def line_with(text: str, source: str = CASES) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("emu-cache"))


@pytest.fixture(scope="module")
def lib(cache) -> EmulatedLibrary:
    return EmulatedLibrary.build(CASES, cache_dir=cache)


def test_block_per_row_softmax_matches_torch(lib):
    x = torch.randn(37, 1000)
    y = torch.full_like(x, float("nan"))
    lib.call("softmax_launch", [x, y, 37, 1000], schedules=4, seed=1)
    torch.testing.assert_close(y, torch.softmax(x, -1), rtol=1e-5, atol=1e-7)


def test_missing_syncthreads_in_a_shared_reduction_is_a_race(lib):
    line = line_with("s[t] = x[blockIdx.x * 128 + t];")
    with pytest.raises(RaceError, match=rf"^race: kernel sum_no_sync .* thread \(1,0,0\) \(line {line}\) writes byte 4 "
                                        r"of shared memory, which block \(0,0,0\) thread \(0,0,0\) read \(one warp, and "
                                        r"no __syncwarp\(\) between them\) \(launcher racy_launch, forward schedule\)"):
        lib.call("racy_launch", [torch.randn(4 * 128), torch.empty(4), 4])


def test_half_warp_shuffle_with_a_full_mask_deadlocks(lib):
    line = line_with("__shfl_down_sync(0xffffffff, v, 8)")
    with pytest.raises(DeadlockError) as err:
        lib.call("deadlock_launch", [torch.empty(32)])
    assert str(err.value).startswith("deadlock: kernel half_warp_shuffle")
    assert f"threads 0-15 wait at __shfl_down_sync (line {line})" in str(err.value)
    assert "names lanes 16-31 of warp 0, which exited" in str(err.value)


def test_an_out_of_bounds_write_names_the_argument(lib):
    with pytest.raises(OutOfBoundsError, match=r"^out-of-bounds: a write 4 bytes past the end of argument y "
                                               r"\(element 1000; it has 1000 elements\) in kernel write_one_past"):
        lib.call("oob_launch", [torch.empty(1000), 1000])


def test_an_endless_loop_stops_at_the_step_limit(lib):
    started = time.monotonic()
    with pytest.raises(StepLimitError, match=r"^step-limit: kernel spin .* ran past the 0\.5 s CPU-time limit"):
        lib.call("spin_launch", [torch.zeros(1, dtype=torch.int32)], time_limit_s=0.5)
    assert time.monotonic() - started < 10
    y = torch.ones(4)  # the library still works after a launch was cut short
    lib.call("reverse_scale_launch", [torch.arange(4.0).view(1, 4), y, 1, 4, 1.0])
    assert y.tolist() == [3.0, 2.0, 1.0, 0.0]


def _sweep() -> torch.Tensor:
    """float32 values around every float16 value: the values, the ties between neighbours, just off
    the ties; subnormals, overflow to inf, infinities and NaN included; bfloat16's the same way."""
    halves = torch.arange(0, 0x7c01, dtype=torch.int32).to(torch.int16).view(torch.float16).float()
    mids = (halves[:-1].double() + halves[1:].double()) / 2
    bf = torch.arange(0, 0x7f81, 7, dtype=torch.int32).to(torch.int16).view(torch.bfloat16).float()
    bf_mids = (bf[:-1].double() + bf[1:].double()) / 2
    values = torch.cat([halves, mids.float(), mids.float().nextafter(torch.tensor(0.0)),
                        mids.float().nextafter(torch.tensor(float("inf"))), bf, bf_mids.float(),
                        torch.tensor([65519.996, 65520.0, 65536.0, 1e30, float("nan"), 2.0 ** -25, 2.0 ** -26, 3e-39])])
    return torch.cat([values, -values])


def test_half_and_bfloat16_conversions_are_bit_exact(lib):
    x = _sweep()
    n = x.numel()
    h, b = torch.empty(n, dtype=torch.float16), torch.empty(n, dtype=torch.bfloat16)
    h_back, b_back = torch.empty(n), torch.empty(n)
    lib.call("convert_launch", [x, h, b, h_back, b_back, n], schedules=1)
    nan = x.isnan()
    assert torch.equal(h.view(torch.int16)[~nan], x.half().view(torch.int16)[~nan])
    assert torch.equal(b.view(torch.int16)[~nan], x.bfloat16().view(torch.int16)[~nan])
    assert h[nan].isnan().all() and b[nan].isnan().all()
    assert torch.equal(h_back.view(torch.int32)[~nan], h.float().view(torch.int32)[~nan])
    assert torch.equal(b_back.view(torch.int32)[~nan], b.float().view(torch.int32)[~nan])


def _expected_warp_ops(x: list[int]) -> list[list[int]]:
    rows = []
    for t, v in enumerate(x):
        lane, base = t & 31, t & ~31
        seg = lane & ~15
        down = base + lane + 5 if (lane & 15) + 5 < 16 else t
        ballot = sum(1 << i for i in range(32) if x[base + i] & 1)
        low = sum(1 << i for i in range(8) if i & 2) if lane < 8 else 0
        rows.append([x[base + 3], x[t - 2] if lane >= 2 else v, x[down], x[t ^ 1],
                     struct.unpack("<i", struct.pack("<I", ballot))[0],
                     int(any(x[base + i] == 7 for i in range(32))), 1, low])
        assert seg in (0, 16)
    return rows


def test_warp_shuffles_and_votes_are_exact(lib):
    x = torch.randint(0, 100, (64,), dtype=torch.int32)
    x[40] = 7
    out = torch.zeros(64 * 8, dtype=torch.int32)
    lib.call("warp_launch", [x, out])
    assert out.view(64, 8).tolist() == _expected_warp_ops(x.tolist())


def test_atomic_add_histogram(lib):
    x = torch.randint(0, 10, (1000,), dtype=torch.int32)
    bins = torch.full((10,), 12345, dtype=torch.int32)
    lib.call("histogram_launch", [x, 1000, bins, 10])
    assert bins.tolist() == torch.bincount(x, minlength=10).tolist()


def test_dynamic_extern_shared_memory(lib):
    x = torch.randn(5, 100)
    y = torch.empty_like(x)
    lib.call("reverse_scale_launch", [x, y, 5, 100, 1.0])
    assert torch.equal(y, x.flip(-1))


def test_a_launcher_launching_two_kernels(lib):
    x = torch.randn(3, 70)
    y = torch.empty_like(x)
    lib.call("reverse_scale_launch", [x, y, 3, 70, 3.0])
    assert torch.equal(y, x.flip(-1) * 3.0)


def test_a_failed_assert_is_a_trap(lib):
    with pytest.raises(EmulatorError, match=r"^trap: assertion `x\[threadIdx.x\] >= 0.0f` failed \(line \d+\) "
                                            r"in kernel trap_kernel .* thread \(31,0,0\)"):
        lib.call("trap_launch", [torch.tensor([1.0] * 31 + [-1.0])])


def test_a_block_over_1024_threads_is_a_launch_error(lib):
    with pytest.raises(EmulatorError, match=r"^launch-error: kernel scale .* a block of 2048 threads"):
        lib.call("too_big_launch", [torch.empty(1)])


def test_building_twice_hits_the_cache(lib, cache):
    again = EmulatedLibrary.build(CASES, cache_dir=cache)
    assert lib.cached is False and again.cached is True and again.build_seconds == 0.0
    assert again.path == lib.path


def test_inline_asm_is_unsupported_without_building(tmp_path):
    source = CASES + '\n__global__ void k(int* y) { int v; asm("mov.u32 %0, %%laneid;" : "=r"(v)); y[0] = v; }\n'
    line = line_with("asm(", source)
    assert unsupported_features(source) == [f"inline asm (line {line})"]
    with pytest.raises(UnsupportedFeature, match=rf"^unsupported: inline asm \(line {line}\) cannot be emulated"):
        EmulatedLibrary.build(source, cache_dir=str(tmp_path))
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("snippet, feature", [
    ("#include <mma.h>\nusing namespace nvcuda; __global__ void k() { wmma::fragment<int> f; }", "tensor-core mma/wmma"),
    ("__global__ void k(float* s, const float* g) { __pipeline_memcpy_async(s, g, 16); }", "cp.async"),
    ("#include <cooperative_groups.h>\n__global__ void k() { cooperative_groups::this_grid().sync(); }",
     "grid-wide sync"),
    ("__global__ void child() {}\n__global__ void k() { child<<<1, 1>>>(); }", "dynamic parallelism"),
    ("__global__ void __cluster_dims__(2, 1, 1) k() {}", "thread-block clusters"),
])
def test_unsupported_features_are_named(snippet, feature):
    assert any(f.startswith(feature) for f in unsupported_features(snippet)), unsupported_features(snippet)


def test_supported_source_has_no_unsupported_features():
    assert unsupported_features(CASES) == []


def test_a_syntax_error_reports_the_cuda_line(tmp_path):
    source = "#include <cuda_runtime.h>\n\n__global__ void k(float* y) {\n    y[0] = 1.0f\n}\n" \
             "extern \"C\" void go(float* y, cudaStream_t s) { k<<<1, 1, 0, s>>>(y); }\n"
    with pytest.raises(EmuBuildError, match=r"^emu-build: line 4: error: expected ';' before '}' token "
                                            r"\| 4 \| y\[0\] = 1\.0f$"):
        EmulatedLibrary.build(source, cache_dir=str(tmp_path))


def test_translation_keeps_every_line_in_place():
    source = "k<<<dim3(2,\n 3), 64>>>(a,\n b);\nint after;\n"
    unit = translate(source)[len(PREAMBLE):].split('\n#line 1 "opforge-invokers"')[0]
    assert unit.count("\n") == source.count("\n")
    assert unit.splitlines()[3].startswith("int after;")  # then its registration (statics.py), on that line
    assert '::opforge_emu::launch(__LINE__, "k", ::opforge_emu::cfg(dim3(2,\n 3), 64), k, a,\n b);' in unit


def test_uninitialised_shared_memory_reads_as_nan(lib):
    out = torch.zeros(3)
    lib.call("uninit_shared_launch", [torch.ones(3 * 32), out, 3])
    assert out.isnan().all(), out


def test_a_wild_pointer_is_reported_and_the_process_lives_on(lib):
    with pytest.raises(EmulatorError, match=r"^crash: memory fault in kernel wild_write .* at address 0x40"):
        lib.call("wild_launch", [torch.ones(1)])
    y = torch.ones(2)
    lib.call("reverse_scale_launch", [torch.tensor([[1.0, 2.0]]), y, 1, 2, 1.0])
    assert y.tolist() == [2.0, 1.0]


def test_a_write_past_the_dynamic_shared_memory_is_out_of_bounds(lib):
    with pytest.raises(OutOfBoundsError, match=r"^out-of-bounds: a write 4 bytes past the end of the 128 bytes of "
                                               r"dynamic shared memory in kernel past_dynamic"):
        lib.call("smem_oob_launch", [torch.ones(33)])


def test_a_shuffle_reading_a_lane_outside_its_mask_is_undefined(lib):
    with pytest.raises(EmulatorError, match=r"^undefined: __shfl_down_sync \(line \d+\): thread 8 reads lane 16, "
                                            r"which is not in the mask 0x0000ffff"):
        lib.call("outside_mask_launch", [torch.empty(32)])


def test_a_template_kernel_launched_with_deduced_arguments(lib):
    x, y = torch.randn(100, dtype=torch.float64), torch.randn(100, dtype=torch.float64)
    expected = 0.5 * x + y
    lib.call("axpy_launch", [y, x, 0.5, 100])
    assert torch.equal(y, expected)


def test_activemask_names_the_lanes_in_the_branch(lib):
    out = torch.zeros(64, dtype=torch.int32)
    lib.call("activemask_launch", [out])
    lanes = out.view(2, 32)
    assert (lanes[:, :10] == 0x3FF).all() and (lanes[:, 10:] == -1).all()


def test_a_result_that_depends_on_the_block_order_is_a_race(lib):
    with pytest.raises(RaceError, match=r"^race: kernel prefix_across_blocks .* block \(2,0,0\), thread \(0,0,0\) "
                                        r"\(line \d+\) reads element 1 of argument y, which block \(1,0,0\) thread "
                                        r"\(0,0,0\) wrote \(different blocks, and no __threadfence\(\)"):
        lib.call("block_order_launch", [torch.ones(8), 8])


def test_a_write_into_a_const_argument_is_reported(lib):
    x = torch.ones(8)
    with pytest.raises(EmulatorError, match=r"^const-write: launcher const_write_launch changed argument x"):
        lib.call("const_write_launch", [x, torch.empty(8)])
    assert x.tolist() == [1.0] * 8


def test_syncwarp_warp_reduce_and_syncthreads_count(lib):
    out = torch.zeros(64 * 3, dtype=torch.int32)
    lib.call("warp_sync_launch", [out])
    rows = out.view(64, 3).tolist()
    for t, (mirrored, total, odd) in enumerate(rows):
        base = t & ~31
        assert (mirrored, total, odd) == (base + 31 - (t & 31), sum(range(base, base + 32)), 32)


def test_inline_asm_made_by_the_preprocessor_is_unsupported(tmp_path):
    source = ("#include <cuda_runtime.h>\n#define PASTE(a, b) a##b\n"
              "__global__ void k(float* y) { PASTE(__as, m__) volatile(\"\"); y[0] = 1; }\n"
              "extern \"C\" void go(float* y, cudaStream_t s) { k<<<1, 1, 0, s>>>(y); }\n")
    assert unsupported_features(source) == []  # no asm token before preprocessing
    with pytest.raises(UnsupportedFeature, match=r"^unsupported: inline asm \(line 3, after macro expansion\)"):
        EmulatedLibrary.build(source, cache_dir=str(tmp_path))
    assert not list(tmp_path.glob("*.so"))


def test_a_launcher_that_loops_forever_meets_the_call_limit(lib):
    started = time.monotonic()
    with pytest.raises(StepLimitError, match=r"^step-limit: .*CPU-time limit of a launcher call"):
        lib.call("endless_launcher_launch", [torch.ones(1)], time_limit_s=0.5)
    assert time.monotonic() - started < 10


def test_threads_at_two_different_syncthreads_deadlock(lib):
    with pytest.raises(DeadlockError, match=r"divergent __syncthreads") as err:
        lib.call("divergent_launch", [torch.zeros(64)])
    m = re.search(r"threads (\S+) wait at __syncthreads \(line (\d+)\) while (\S+) wait at __syncthreads "
                  r"\(line (\d+)\)", str(err.value))
    assert m and {m.group(1), m.group(3)} == {"0", "1-63"} and m.group(2) != m.group(4), err.value


def test_a_read_past_the_end_is_out_of_bounds(lib):
    with pytest.raises(OutOfBoundsError, match=r"^out-of-bounds: a read 4 bytes past the end of argument x "
                                               r"\(element 1024; it has 1024 elements\) in kernel shift_left .* "
                                               r"thread \(255,0,0\)"):
        lib.call("oob_read_launch", [torch.ones(1024), torch.empty(1024), 1024])


def test_a_kernel_given_host_memory_is_refused_and_cuda_malloc_is_device_memory(lib):
    with pytest.raises(EmulatorError, match=r"^bad-pointer: kernel scale \(line \d+\) did not run: argument 1 points"):
        lib.call("host_pointer_launch", [torch.empty(64)])
    y = torch.arange(5.0)
    lib.call("workspace_launch", [y, 5])
    assert y.tolist() == [0.0, 3.0, 6.0, 9.0, 12.0]


def test_a_tensor_keeps_its_address_across_runs_so_a_pointer_keyed_cache_hits(lib):
    """As on a GPU, an argument keeps its address from run to run: every schedule runs in the same
    buffers, so the second schedule finds the first's input pointer in a cache keyed by it, skips
    the work, and the output differs (with fresh addresses every run the cache would never hit)."""
    with pytest.raises(RaceError, match=r"^race: .*reverse differs from forward in argument y"):
        lib.call("cached_launch", [torch.arange(8.0), torch.zeros(8), 8])


def test_a_library_whose_initialiser_never_returns_is_stopped_at_build(tmp_path, monkeypatch):
    from opforge.backends.cuda.emulator import build

    monkeypatch.setattr(build, "LOAD_TIMEOUT_S", 2.0)
    source = ("#include <cuda_runtime.h>\n__global__ void k(float* y) { y[0] = 1; }\n"
              "static int loaded = [] { volatile int spin = 1; while (spin) { } return 0; }();\n"
              "extern \"C\" void go(float* y, cudaStream_t s) { k<<<1, 1, 0, s>>>(y); }\n")
    started = time.monotonic()
    with pytest.raises(StepLimitError, match=r"^step-limit: loading the library ran past 2 s"):
        EmulatedLibrary.build(source, cache_dir=str(tmp_path))
    assert time.monotonic() - started < 15 and not list(tmp_path.glob("*.so"))


FLOAT_ATOMIC_SUM = r"""
#include <cuda_runtime.h>
__global__ void sum_kernel(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out, x[i]);
}
__global__ void stale_kernel(const float* x, float* out, int n) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = 0.0f;
    __syncthreads();
    s[t] = x[blockIdx.x * 64 + t];
    // no barrier: thread t reads its neighbour's slot, overwritten or still 0
    if (t < 64) atomicAdd(out, s[(t + 1) % 64]);
}
extern "C" void sum_launch(const float* x, float* out, int n, cudaStream_t stream) {
    sum_kernel<<<(n + 127) / 128, 128, 0, stream>>>(x, out, n);
}
extern "C" void stale_launch(const float* x, float* out, int n, cudaStream_t stream) {
    stale_kernel<<<n / 64, 64, 0, stream>>>(x, out, n);
}
"""


def test_float_atomics_may_round_differently_per_schedule_but_not_race(cache):
    """A float atomicAdd sum commits in schedule order, so its last bits differ between schedules,
    as between runs on a GPU: that is rounding, not a race. Stale shared memory read beside the
    atomics is still a race."""
    lib = EmulatedLibrary.build(FLOAT_ATOMIC_SUM, cache_dir=cache)
    for seed in range(8):
        x = torch.randn(4096, generator=torch.Generator().manual_seed(seed)) * torch.logspace(-3, 3, 4096)
        out = torch.zeros(1)
        lib.call("sum_launch", [x, out, 4096])
        assert out.item() == pytest.approx(x.double().sum().item(), rel=1e-4, abs=0.1)
        with pytest.raises(RaceError, match=r"race: kernel stale_kernel .* of shared memory, which .* read "
                                            r"\(no __syncthreads\(\) between them\)"):
            lib.call("stale_launch", [x, torch.zeros(1), 4096])


def test_a_float_atomic_sum_that_cancels_keeps_its_terms_rounding(cache):
    """Terms up to 1000 that cancel exactly: the float sum is rounding alone, its partial sums run to
    thousands, and the schedules' sums differ by their rounding, many times the result's own size,
    which is still not a race."""
    lib = EmulatedLibrary.build(FLOAT_ATOMIC_SUM, cache_dir=cache)
    g = torch.Generator().manual_seed(3)
    half = torch.rand(2048, generator=g) * 1000
    x = torch.cat([half, -half])[torch.randperm(4096, generator=g)]
    out = torch.zeros(1)
    lib.call("sum_launch", [x, out, 4096])
    assert 0 < abs(out.item()) < 1.0 and x.double().sum().item() == 0.0


PEEKED_ATOMIC_SUM = r"""
#include <cuda_runtime.h>
__global__ void peek_kernel(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&out[0], x[i]);
    // the first thread keeps 1e-4 of the sum as it sees it: the other blocks' adds may not be in yet
    if (i == 0) out[1] = 1e-4f * out[0];
}
extern "C" void peek_launch(const float* x, float* out, int n, cudaStream_t stream) {
    peek_kernel<<<(n + 127) / 128, 128, 0, stream>>>(x, out, n);
}
"""


def test_a_float_atomic_kernel_gets_room_for_rounding_not_for_a_race(cache):
    """Float atomics earn a buffer room for rounding (1e-5 of its largest value), not for a race: a
    value read from the sum while other blocks still add to it is 1e-4 of the sum apart between the
    schedules here (0.41 of 4096), ten times that room and a tenth of a room 100x looser."""
    lib = EmulatedLibrary.build(PEEKED_ATOMIC_SUM, cache_dir=cache)
    with pytest.raises(RaceError, match=r"race: kernel peek_kernel .* updates element 0 of argument out, which "
                                        r"block \(0,0,0\) thread \(0,0,0\) read"):
        lib.call("peek_launch", [torch.ones(4096), torch.zeros(2), 4096])


TWO_BLOCK_SUMS = r"""
#include <cuda_runtime.h>
__device__ float warp_sum(float v) { for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o); return v; }
__device__ float block_sum(float v, float* part) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) part[warp] = v;
    __syncthreads();
    float r = lane < (blockDim.x >> 5) ? part[lane] : 0.0f;
    r = warp_sum(r);
    BARRIER
    return r;
}
__global__ void two_sums(const float* x, float* out, int cols) {
    __shared__ float part[32];
    const float* row = x + blockIdx.x * cols;
    float a = 0.0f, b = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) { a += row[c]; b += row[c] * row[c]; }
    a = block_sum(a, part);
    b = block_sum(b, part);
    if (threadIdx.x == 0) { out[2 * blockIdx.x] = a; out[2 * blockIdx.x + 1] = b; }
}
extern "C" void launch(const float* x, float* out, int rows, int cols, cudaStream_t s) { two_sums<<<rows, 128, 0, s>>>(x, out, cols); }
"""


def test_a_missing_barrier_before_a_shared_buffer_is_reused_is_a_race(cache):
    """Two block sums share one `part[]`: without the barrier after the first one's reads, a warp
    that runs ahead overwrites `part` before the others read it. No thread-order sweep lets a warp
    run a phase ahead; the warps-ahead schedule does."""
    x = torch.randn(4, 300)
    good = EmulatedLibrary.build(TWO_BLOCK_SUMS.replace("BARRIER", "__syncthreads();"), cache_dir=cache)
    out = torch.zeros(8)
    good.call("launch", [x, out, 4, 300])
    assert out[0::2].tolist() == pytest.approx(x.sum(1).tolist(), rel=1e-5, abs=1e-4)
    racy = EmulatedLibrary.build(TWO_BLOCK_SUMS.replace("BARRIER", ""), cache_dir=cache)
    with pytest.raises(RaceError, match=r"race: kernel two_sums .* writes byte 0 of shared memory, which block "
                                        r"\(0,0,0\) thread \(96,0,0\) read \(no __syncthreads\(\) between them\)"):
        racy.call("launch", [x, torch.zeros(8), 4, 300])
