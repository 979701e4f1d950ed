"""The per-target resource model (backends/triton/resources.py): a kernel that compiles but needs
more shared memory, threads or registers per block than the target has fails the compile step
the way the GPU would (every launch raises OutOfResources), with the numbers; the same kernel
with a smaller tile verifies. Compiles for sm_90 on the CPU, no GPU needed."""
from __future__ import annotations

import torch
import triton.language as tl
from triton.runtime.jit import JITFunction

from conftest import DATA
from opforge.backends.triton import resources
from opforge.backends.triton.aot import compile_launches
from opforge.harness.guards import RecordedLaunch
from opforge.harness.verify import VerifyOptions, verify

RES = DATA / "resources"
SPEC = RES / "small_transpose.py"


def test_a_tile_over_sm90_shared_memory_fails_the_compile_step_with_the_numbers():
    v = verify(SPEC, RES / "transpose_smem_over.py", VerifyOptions(seed=7, device="cpu"))
    assert not v["correct"] and v["failed_step"] == "compile", v["reasons"]
    assert v["reasons"][0] == ("out-of-resources: _transpose_kernel needs 262144 B of shared memory per block; "
                               "sm_90 allows 232448 B"), v["reasons"]
    kernel = v["build"]["kernels"][0]
    assert kernel["shared_bytes"] == 262144 and kernel["limits"]["shared_bytes"] == 232448
    assert v["steps"]["cpu_run"]["status"] != "passed" and v["level"] == "static"


def test_the_same_kernel_with_a_smaller_tile_verifies():
    v = verify(SPEC, RES / "transpose_smem_ok.py", VerifyOptions(seed=7, device="cpu"))
    assert v["correct"], v["reasons"]
    kernel = v["build"]["kernels"][0]
    assert kernel["shared_bytes"] == 16384 and kernel["limits"]["shared_bytes"] == 232448


def _copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    tl.store(y_ptr + r, tl.load(x_ptr + r))


COPY = JITFunction(_copy)  # the real JIT function: the session may run with TRITON_INTERPRET=1


def test_more_than_1024_threads_per_block_compiles_but_is_refused():
    x = torch.zeros(2048)
    over = RecordedLaunch(COPY, "copy", (x, x), {"BLOCK": 2048, "num_warps": 64}, (1,))
    kernels, reasons, _ = compile_launches([over], 90)
    assert kernels[0]["num_warps"] == 64  # ptxas takes it; the launch would not
    assert reasons == ["out-of-resources: copy needs 2048 threads per block (num_warps=64); sm_90 allows 1024"]
    fine = RecordedLaunch(COPY, "copy", (x, x), {"BLOCK": 2048, "num_warps": 32}, (1,))
    assert compile_launches([fine], 90)[1] == []


def test_the_limits_table_is_the_programming_guides():
    assert resources.limits(90).shared_bytes == 232448  # 227 KB: H100 / H200
    assert resources.limits(80).shared_bytes == 166912  # 163 KB: A100
    assert resources.limits(86).shared_bytes == 101376  # 99 KB: RTX 30xx, A40
    assert resources.limits(89).shared_bytes == 101376 and resources.limits(75).shared_bytes == 65536
    assert resources.limits(70).shared_bytes == 98304 and resources.limits(120).shared_bytes == 101376
    assert resources.limits(100).shared_bytes == 232448 and resources.limits(100).tmem_columns == 512
    assert all(resources.limits(a).threads_per_block == 1024 for a in resources.SHARED_OPTIN_KB)
    assert resources.limits(61) is None


def test_registers_are_counted_per_warp_in_allocation_units():
    assert resources.block_registers(64, 32) == 65536  # 1024 threads x 64: exactly the file
    assert resources.block_registers(65, 32) == 72 * 1024  # 65 rounds up to 72 per thread
    sm80 = resources.limits(80)
    fits = {"kernel": "k", "shared_bytes": 0, "num_warps": 32, "registers": 64}
    assert resources.over_limits(fits, sm80) == []
    assert resources.over_limits({**fits, "registers": 65}, sm80) == [
        "out-of-resources: k needs 73728 registers per block (65 per thread x 1024 threads); sm_80 allows 65536"]
    assert resources.over_limits({**fits, "shared_bytes": 166913}, sm80) == [
        "out-of-resources: k needs 166913 B of shared memory per block; sm_80 allows 166912 B"]
    sm86 = resources.limits(86)
    assert resources.over_limits({**fits, "shared_bytes": 166912}, sm86)[0].endswith("sm_86 allows 101376 B")


def test_an_unknown_target_is_noted_not_passed_silently():
    entry = {"kernel": "k", "shared_bytes": 10 ** 6, "num_warps": 4, "registers": 32}
    assert resources.check(entry, 61) == [] and "not checked" in entry["limits_note"]


def _dot16(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


DOT16 = JITFunction(_dot16)


def test_the_build_specialises_on_16_byte_alignment_as_the_gpus_jit_does():
    """Aligned pointers and a K divisible by 16 let the compiler pipeline the loads: the shared
    memory the GPU's own compile would take, not the smaller unaligned figure."""
    x, c = torch.zeros(128 * 1024, dtype=torch.float16), torch.zeros(128 * 128)
    tile = {"BM": 128, "BN": 128, "BK": 64, "num_stages": 3, "num_warps": 8}
    aligned = RecordedLaunch(DOT16, "dot", (x, x, c, 1024), tile, (1,))
    offset = RecordedLaunch(DOT16, "dot", (x[1:], x[1:], c, 1024), tile, (1,))  # 2-byte aligned pointers
    assert compile_launches([aligned], 90)[0][0]["shared_bytes"] == 98304
    assert compile_launches([offset], 90)[0][0]["shared_bytes"] == 65536


def test_the_drafter_is_told_what_to_shrink():
    from opforge.backends import plugin

    hints = plugin("triton").reason_hints(["out-of-resources: k needs 262144 B of shared memory per block; ..."])
    assert hints == [resources.HINT] and "num_stages" in hints[0]
    assert plugin("triton").reason_hints(["mismatch: ..."]) == []


def _transpose(x_ptr, y_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rm, rn = tl.arange(0, BM), tl.arange(0, BN)
    tile = tl.load(x_ptr + rm[:, None] * BN + rn[None, :])
    tl.store(y_ptr + rn[:, None] * BM + rm[None, :], tl.trans(tile))


TRANSPOSE = JITFunction(_transpose)


def test_the_limit_is_the_targets():
    """A 128 x 256 fp32 tile turned through 131,072 B of shared memory fits an A100 (sm_80:
    166,912 B) and not an RTX 30xx / A40 (sm_86: 101,376 B)."""
    x = torch.zeros(128 * 256)
    launch = RecordedLaunch(TRANSPOSE, "transpose", (x, x), {"BM": 128, "BN": 256, "num_warps": 8}, (1,))
    kernels, reasons, _ = compile_launches([launch], 80)
    assert kernels[0]["shared_bytes"] == 131072 and kernels[0]["limits"]["shared_bytes"] == 166912 and not reasons
    assert compile_launches([launch], 86)[1] == [
        "out-of-resources: transpose needs 131072 B of shared memory per block; sm_86 allows 101376 B"]
