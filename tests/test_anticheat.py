"""Each cheat class is rejected with its named reason by the real pipeline (sandboxed worker,
Triton interpreter). Each test would fail if its check were removed: the cheats produce outputs
that a plain value comparison alone would accept, or that only the named check explains."""
from __future__ import annotations

import functools

import pytest

from conftest import KERNELS, TINY
from opforge.backends.triton.static import check_source
from opforge.harness import ladder
from opforge.harness.verify import VerifyOptions, verify

OPTIONS = VerifyOptions(seed=1234, trials=2, device="cpu")
# One worker runs the module, so a kernel two tests ask about is verified once (the verdict is the same
# pipeline's either way; the tests check different parts of it).
pytestmark = pytest.mark.xdist_group("anticheat")


@functools.cache
def run(kernel: str) -> dict:
    return verify(TINY, KERNELS / f"{kernel}.py", OPTIONS)


def codes(verdict: dict) -> set[str]:
    return {r.split(":", 1)[0] for r in verdict["reasons"]}


def test_good_kernel_passes_every_check():
    v = run("good")
    assert v["correct"], v["reasons"]
    assert set(v["anticheat"].values()) == {"pass"}
    assert v["launches"]["_softmax_kernel"] >= 2 * 2  # two trials of two variants, plus the no-op probe


@pytest.mark.parametrize("kernel, code, check", [
    ("cheat_zeros", "constant-output", "compare"),
    ("cheat_torch_compute", "torch-compute", "anticheat"),
    ("cheat_alias_input", "aliasing", "anticheat"),
    ("cheat_mutate_input", "input-mutation", "anticheat"),
    ("cheat_cache_buffer", "cached-output", "compare"),
    ("cheat_cache_copy", "cached-output", "compare"),
    ("cheat_partial", "partial-output", "compare"),
    ("cheat_low_precision", "low-precision", "rules"),
    ("cheat_patch_torch", "patches-module", "rules"),
    ("cheat_timer", "forbidden-import", "rules"),
    ("cheat_thread", "forbidden-import", "rules"),
    ("cheat_subprocess", "forbidden-import", "rules"),
    ("cheat_python_compute", "no-launch", "anticheat"),
    ("cheat_kernel_independent", "kernel-independent", "anticheat"),
])
def test_cheat_is_rejected_with_its_reason(kernel, code, check):
    v = run(kernel)
    assert not v["correct"]
    assert code in codes(v), v["reasons"]
    step = "static" if check == "rules" else "cpu_run"  # a static rule, else a check of the numerics run
    assert (v["failed_step"], ladder.failed_check(v)) == (step, check), v["reasons"]


def test_cheats_that_match_values_pass_the_comparison_alone():
    """The torch-compute, aliasing, buffer-cache and kernel-independent cheats produce the right
    numbers: only their named check stops them, so no mismatch may be among their reasons."""
    for kernel in ("cheat_torch_compute", "cheat_alias_input", "cheat_kernel_independent"):
        v = run(kernel)
        assert "mismatch" not in codes(v), (kernel, v["reasons"])


# Runtime checks reached by kernels that PASS the static allow-list (asserted below), so the named
# runtime check alone stands between each of them and a correct verdict: kernel, reason code, text.
# The cheat_* kernels above caught at run time pass it too (torch-compute, aliasing with an input,
# input-mutation, partial-output, no-launch, kernel-independent). Unreachable this way, because the
# allow-list refuses every route to them, and so tested at unit level in tests/test_guards.py: the
# thread refusal and the process audit hook (threading, _thread, subprocess and os are off the list,
# and nothing on it starts a thread or a process on a CPU) and the ModuleSnapshot (every attribute
# store on a library object, `T = torch; T.x = ...` included, is refused as patches-module).
RUNTIME_CASES = [
    ("runtime_downcast", "low-precision", "float64 -> float32"),
    ("runtime_param_alias", "aliasing", "shares memory with a parameter"),
    ("runtime_reused_buffer", "cached-output", "same buffer as an earlier call"),
    ("runtime_parameter_output", "output-type", "returned Parameter"),
    ("runtime_global_state", "global-state", "deterministic_algorithms False -> True"),
    ("runtime_tensor_str", "below-dispatcher", "Tensor.tolist()"),
]
RUNTIME_CHEATS = ["cheat_torch_compute", "cheat_alias_input", "cheat_mutate_input", "cheat_partial",
                        "cheat_python_compute", "cheat_kernel_independent"]


@pytest.fixture
def float64_softmax(tmp_path):
    """tiny_softmax on float64 inputs, at a tolerance a float32 computation meets: only the cast
    check can tell the two apart."""
    source = TINY.read_text().replace("torch.randn(batch_size, dim)",
                                      "torch.randn(batch_size, dim, dtype=torch.float64)")
    source = source.replace("torch.randn(3, 17)", "torch.randn(3, 17, dtype=torch.float64)")
    source = source.replace('OPFORGE = dict(name="tiny_softmax", tags=["softmax"])',
                            'OPFORGE = dict(name="tiny_softmax_f64", atol=1e-4, rtol=1e-4)')
    assert "float64" in source and "atol=1e-4" in source
    spec = tmp_path / "tiny_softmax_f64.py"
    spec.write_text(source)
    return spec


@pytest.mark.parametrize("kernel, code, text", RUNTIME_CASES, ids=[c[0] for c in RUNTIME_CASES])
def test_runtime_check_rejects_a_kernel_the_static_check_passes(kernel, code, text, float64_softmax):
    source = (KERNELS / f"{kernel}.py").read_text()
    assert check_source(source, float32_spec=True).reasons == []
    spec = float64_softmax if kernel == "runtime_downcast" else TINY
    v = verify(spec, KERNELS / f"{kernel}.py", VerifyOptions(seed=7, trials=1, device="cpu", sandbox="none"))
    assert not v["correct"]
    assert (v["failed_step"], ladder.failed_check(v)) == ("cpu_run", "anticheat"), v["reasons"]
    assert "mismatch" not in codes(v), v["reasons"]  # the values are right: only the runtime check objects
    assert any(r.startswith(f"{code}:") and text in r for r in v["reasons"]), v["reasons"]


@pytest.mark.parametrize("kernel", RUNTIME_CHEATS)
def test_runtime_cheats_pass_the_static_check(kernel):
    assert check_source((KERNELS / f"{kernel}.py").read_text(), float32_spec=True).reasons == []


INPLACE_SPEC = '''import torch

OPFORGE = dict(name="cache_write", mutates=["cache"])


class Model(torch.nn.Module):
    def forward(self, src, cache, slots):
        cache[slots] = src


def get_inputs():
    return [torch.randn(6, 8), torch.zeros(16, 8), torch.randperm(16)[:6]]


def get_init_inputs():
    return []
'''
INPLACE_CHEAT = '''import torch
import triton
import triton.language as tl


@triton.jit
def _touch(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


class ModelNew(torch.nn.Module):
    def forward(self, src, cache, slots):
        scratch = torch.empty(4, device=src.device)
        _touch[(1,)](scratch, 4, BLOCK=4)  # a launch that does nothing the result needs
        cache.index_copy_(0, slots, src)
'''


def test_an_in_place_op_done_outside_the_kernels_is_kernel_independent(tmp_path):
    """An op that returns nothing has its in-place arguments as its result: with every launch a
    no-op they must no longer match (before, nothing was compared and every such op passed this
    check, even one whose kernels wrote nothing)."""
    spec, cheat = tmp_path / "cache_write.py", tmp_path / "cheat.py"
    spec.write_text(INPLACE_SPEC)
    cheat.write_text(INPLACE_CHEAT)
    v = verify(spec, cheat, OPTIONS)
    assert not v["correct"] and "kernel-independent" in codes(v), v["reasons"]


INPLACE_GOOD = '''import torch
import triton
import triton.language as tl


@triton.jit
def _write_rows(src_ptr, cache_ptr, slots_ptr, width, s_row, s_col, c_row, c_col, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    slot = tl.load(slots_ptr + row)
    values = tl.load(src_ptr + row * s_row + cols * s_col, mask=cols < width)
    tl.store(cache_ptr + slot * c_row + cols * c_col, values, mask=cols < width)


class ModelNew(torch.nn.Module):
    def forward(self, src, cache, slots):
        _write_rows[(src.shape[0],)](src, cache, slots, src.shape[1], *src.stride(), *cache.stride(),
                                     BLOCK=triton.next_power_of_2(src.shape[1]))
'''


def test_an_in_place_op_whose_kernel_writes_passes(tmp_path):
    """The same op written by its kernel: with every launch a no-op the cache keeps its old rows,
    so the probe tells the two apart."""
    spec, good = tmp_path / "cache_write.py", tmp_path / "good.py"
    spec.write_text(INPLACE_SPEC)
    good.write_text(INPLACE_GOOD)
    v = verify(spec, good, OPTIONS)
    assert v["correct"], v["reasons"]
