"""The CUDA emulator's memory model: blocks are concurrent, stores reach other blocks only through
the memory model's synchronisation, threads race unless a barrier, a warp collective or an atomic
orders them. Each wrong kernel of tests/data/cuda/memory_model.cu stands beside its correct control."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from opforge.backends.cuda.emulator import EmulatedLibrary, EmulatorError, RaceError
from opforge.backends.cuda.emulator.build import compiler

SOURCE = (Path(__file__).parent / "data" / "cuda" / "memory_model.cu").read_text()
pytestmark = pytest.mark.skipif(compiler() is None, reason="the CUDA emulator builds with g++, and there is none")
ACROSS_BLOCKS = r"\(different blocks, and no __threadfence\(\) \+ atomic/volatile flag orders them\)"


def line_of(text: str) -> int:
    return next(i for i, line in enumerate(SOURCE.splitlines(), 1) if text in line)


def ints(n: int = 1) -> torch.Tensor:
    return torch.zeros(n, dtype=torch.int32)


@pytest.fixture(scope="module")
def lib(tmp_path_factory) -> EmulatedLibrary:
    return EmulatedLibrary.build(SOURCE, cache_dir=str(tmp_path_factory.mktemp("emu-mm")))


def test_a_last_block_reduction_needs_the_fence_before_its_ticket(lib):
    x = torch.randn(1000)
    out = torch.zeros(1)
    lib.call("last_block_fenced", [x, torch.empty(4), ints(), out, 1000])
    assert out.item() == pytest.approx(x.sum().item(), rel=1e-4, abs=1e-3)
    line = line_of("for (int b = 0; b < gridDim.x; ++b) s += partial[b];")
    with pytest.raises(RaceError, match=rf"^race: kernel last_block_sum<false> .* thread \(0,0,0\) \(line {line}\) reads "
                                        rf"element \d of argument partial, which block \(\d,0,0\) thread \(0,0,0\) wrote "
                                        rf"{ACROSS_BLOCKS}"):
        lib.call("last_block_unfenced", [x, torch.empty(4), ints(), torch.zeros(1), 1000])


def test_a_chained_scan_publishes_its_sum_with_a_fence_before_the_flag(lib):
    x = torch.randn(1000)
    y = torch.empty(1000)
    lib.call("scan_fenced", [x, y, torch.empty(8), ints(8), ints(), 1000])
    torch.testing.assert_close(y, x.cumsum(0), rtol=1e-4, atol=1e-3)
    line = line_of("before = sums[tile - 1];")
    with pytest.raises(RaceError, match=rf"^race: kernel chained_scan<false> .* \(line {line}\) reads element \d of "
                                        rf"argument sums, which block \(\d,0,0\) thread \(0,0,0\) wrote {ACROSS_BLOCKS}"):
        lib.call("scan_unfenced", [x, torch.empty(1000), torch.empty(8), ints(8), ints(), 1000])


def test_lazy_initialisation_through_a_flag_without_a_fence_is_a_race(lib):
    with pytest.raises(RaceError, match=rf"^race: kernel lazy_table .* reads element \d+ of argument table, which "
                                        rf"block \(\d,0,0\) thread \(0,0,0\) wrote {ACROSS_BLOCKS}"):
        lib.call("lazy_launch", [torch.randn(256), torch.empty(256), torch.empty(64), ints(), 256])


def test_split_k_adds_partials_atomically_not_with_a_plain_add(lib):
    a, b = torch.randn(32, 64), torch.randn(64)
    c = torch.zeros(32)
    lib.call("split_k_atomic", [a, b, c])
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)
    with pytest.raises(RaceError, match=rf"^race: kernel split_k<false> .* (reads|writes) element \d+ of argument c, "
                                        rf"which block \(\d,0,0\) thread \(\d+,0,0\) wrote {ACROSS_BLOCKS}"):
        lib.call("split_k_plain", [a, b, torch.zeros(32)])


def test_one_scratch_buffer_for_all_blocks_is_a_race_and_one_row_each_is_not(lib):
    x = torch.randn(6, 40)
    y = torch.empty(6, 40)
    lib.call("scratch_per_block", [x, y, torch.empty(6 * 40), 6, 40])
    torch.testing.assert_close(y, (x * 2).flip(1))
    with pytest.raises(RaceError, match=rf"^race: kernel scratch_rows<false> .* element \d+ of argument scratch, "
                                        rf"which block \(\d,0,0\) thread \(\d+,0,0\) (wrote|read) {ACROSS_BLOCKS}"):
        lib.call("scratch_shared", [x, torch.empty(6, 40), torch.empty(40), 6, 40])


def test_the_output_used_as_another_blocks_scratch_is_a_race(lib):
    with pytest.raises(RaceError, match=rf"^race: kernel reverse_in_output .* element \d+ of argument y, which block "
                                        rf"\(\d,0,0\) thread \(\d+,0,0\) (wrote|read) {ACROSS_BLOCKS}"):
        lib.call("alias_launch", [torch.randn(4, 64), torch.empty(4, 64), 4, 64])


def test_syncwarp_does_not_order_the_warps_of_a_block(lib):
    x = torch.randn(3 * 128)
    out = torch.empty(3)
    lib.call("sum_syncthreads", [x, out, 3])
    torch.testing.assert_close(out, x.view(3, 128).sum(1), rtol=1e-5, atol=1e-5)
    with pytest.raises(RaceError, match=r"^race: kernel shared_sum<false> .* of shared memory, which block \(\d,0,0\) "
                                        r"thread \(\d+,0,0\) (wrote|read) \(no __syncthreads\(\) between them\)"):
        lib.call("sum_syncwarp", [x, torch.empty(3), 3])


def test_check_then_store_is_a_race_and_atomic_max_is_not(lib):
    x = torch.randint(-1000, 1000, (2 * 128,), dtype=torch.int32)
    out = ints(2)
    lib.call("max_atomic", [x, out, 2])
    assert out.tolist() == x.view(2, 128).max(1).values.tolist()
    with pytest.raises(RaceError, match=r"^race: kernel shared_max<false> .* byte 0 of shared memory, which block "
                                        r"\(\d,0,0\) thread \(\d+,0,0\) (wrote|read)"):
        lib.call("max_check_then_store", [x, ints(2), 2])


def test_threads_storing_the_same_bytes_are_not_a_race(lib):
    x = torch.randn(5 * 64)
    out = torch.empty(5)
    lib.call("same_value_launch", [x, out, 5])
    torch.testing.assert_close(out, x.view(5, 64).sum(1), rtol=1e-5, atol=1e-5)


def test_syncwarp_orders_the_lanes_of_a_warp(lib):
    x = torch.randn(4 * 32)
    out = torch.empty(4)
    lib.call("warp_tree_synced", [x, out, 4])
    torch.testing.assert_close(out, x.view(4, 32).sum(1), rtol=1e-5, atol=1e-5)
    with pytest.raises(RaceError, match=r"^race: kernel warp_tree<false> .* of shared memory, which block \(\d,0,0\) "
                                        r"thread \(\d+,0,0\) (wrote|read) \(one warp, and no __syncwarp\(\) between them\)"):
        lib.call("warp_tree_unsynced", [x, torch.empty(4), 4])


def test_a_float4_access_one_float_off_is_misaligned(lib):
    x = torch.randn(260)
    y = torch.empty(256)
    lib.call("copy4_launch", [x, y, 64, 0])
    assert torch.equal(y, x[:256])
    with pytest.raises(EmulatorError, match=r"^misaligned: a read of 16 bytes at element 1 of argument x, an address 16 "
                                            r"does not divide \(a GPU faults: misaligned address\), in kernel copy4"):
        lib.call("copy4_launch", [x, y, 64, 1])


def test_an_order_that_only_a_shuffled_schedule_shows_is_found(lib):
    """The first ticket's holder is thread 0 in forward order and thread 63 in reverse, which this
    kernel maps to the same result: only a shuffled schedule (the seed's) tells them apart."""
    winner = ints()
    lib.call("first_ticket_launch", [ints(), winner], schedules=2)
    assert winner.item() == 0
    with pytest.raises(RaceError, match=r"^race: result depends on the thread schedule \(shuffle 1 \(seed 5\) differs "
                                        r"from forward in argument winner at element 0: 1 vs 0"):
        lib.call("first_ticket_launch", [ints(), ints()], schedules=3, seed=5)


def test_the_verifications_seed_orders_the_shuffled_schedules(lib):
    """The run job's seed reaches the emulator (the plugin's start_run): a race cannot be tuned to
    the one shuffle a fixed seed would give."""
    from opforge.backends.cuda import PLUGIN

    PLUGIN.start_run({"models": [{"seed": 1234}]})
    try:
        with pytest.raises(RaceError, match=r"^race: result depends on the thread schedule \(shuffle 1 \(seed 1234\)"):
            lib.call("first_ticket_launch", [ints(), ints()], schedules=3)
    finally:
        PLUGIN.start_run({"models": [{"seed": 0}]})


def test_blocks_progress_together_where_one_waits_for_a_later_one(lib):
    """Block b spins on block b+1's flag: in forward order block 0 starts first and would wait for
    ever if blocks ran one at a time; a spinning block is suspended and the others run, as blocks
    resident together on a GPU progress (every schedule, and its release/acquire is race-free)."""
    blocks = 6
    y = torch.empty(blocks * 32)
    lib.call("wait_for_next_launch", [y, ints(blocks), torch.empty(blocks), blocks], time_limit_s=3)
    assert y.view(blocks, 32)[:, 0].tolist() == [float(blocks - b) for b in range(blocks)]
    assert torch.equal(y.view(blocks, 32), y.view(blocks, 32)[:, :1].expand(blocks, 32))


def test_a_device_variable_shared_by_blocks_is_a_race(lib):
    """`__device__` memory is device memory to the memory model: one scratch row for every block races."""
    with pytest.raises(RaceError, match=rf"^race: kernel device_scratch .* of a __device__ variable, "
                                        rf"which block \(\d,0,0\) thread \(\d+,0,0\) (wrote|read) {ACROSS_BLOCKS}"):
        lib.call("device_scratch_launch", [torch.randn(3 * 64), torch.empty(3 * 64), 3])


def test_a_float4_access_on_a_view_one_float_in_is_misaligned(lib):
    """A contiguous view with storage_offset 1 is a legal tensor: its copy keeps the offset modulo 256
    (buffers.py), so a float4 load through it faults here as on a GPU."""
    base = torch.randn(261)
    with pytest.raises(EmulatorError, match=r"^misaligned: a read of 16 bytes at element 0 of argument x"):
        lib.call("copy4_launch", [base[1:], torch.empty(256), 64, 0])
    y = torch.empty(256)
    lib.call("copy4_launch", [base[4:], y, 64, 0])  # 16 bytes in: aligned
    assert torch.equal(y, base[4:260])
