"""Uninitialised memory is poisoned for every dtype (issue #32, item 5): whatever the candidate
allocates with torch.empty holds a value no correct result is, so a kernel that counts on a fresh
allocation being zero (an unzeroed workspace, an output written only where it is nonzero) fails
the way it would on a GPU, whose caching allocator hands buffers back dirty."""
from __future__ import annotations

import pytest
import torch

from conftest import DATA, TINY
from opforge.harness import guards
from opforge.harness.compare import compare_tensor
from opforge.harness.verify import VerifyOptions, verify

POISON = DATA / "poison"
FLOAT8 = (torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz,
          torch.float8_e8m0fnu)
UNSIGNED = (torch.uint8, torch.uint16, torch.uint32, torch.uint64)


def _allocated(dtype: torch.dtype) -> torch.Tensor:
    """A tensor the candidate allocates under the guard (a transposed view: strides do not matter)."""
    with guards.ForwardGuard():
        return torch.empty(5, 4, dtype=dtype).t()


@pytest.mark.parametrize("dtype", FLOAT8, ids=str)
def test_float8_allocations_hold_a_nan_sentinel(dtype):
    t = _allocated(dtype)
    assert bool(torch.isnan(t.float()).all()), dtype
    assert guards.count_sentinel(t) == 20
    t[0] = 1.0  # written elements no longer count
    assert guards.count_sentinel(t) == 15


@pytest.mark.parametrize("dtype", UNSIGNED, ids=str)
def test_unsigned_allocations_hold_a_large_pattern(dtype):
    t = _allocated(dtype)
    assert int(t.reshape(-1)[0].item()) == int("A5" * t.element_size(), 16)  # uint32: 2.8e9, never 0
    assert guards.count_sentinel(t) == 20
    t[0] = 0
    assert guards.count_sentinel(t) == 15


def test_bool_allocations_hold_a_byte_neither_false_nor_true():
    t = _allocated(torch.bool)
    assert set(t.view(torch.uint8).reshape(-1).tolist()) == {0x5A}
    assert guards.count_sentinel(t) == 20
    t[0] = True
    assert guards.count_sentinel(t) == 15
    # torch reads the byte as True; the comparison reads bytes, so an unwritten element never passes
    report = compare_tensor(0, torch.ones(4, 5, dtype=torch.bool), t, None, None)
    assert "15 of 20 bool elements hold a byte that is neither False nor True" in report.problem


@pytest.mark.parametrize("dtype", (torch.complex64, torch.complex128), ids=str)
def test_complex_allocations_hold_nan_in_both_parts(dtype):
    t = _allocated(dtype)
    assert bool(torch.isnan(torch.view_as_real(t)).all())
    assert guards.count_sentinel(t) == 20
    t[0] = 1 + 1j
    torch.view_as_real(t)[1, :, 0] = 2.0  # the real part alone written: the element is still unwritten
    assert guards.count_sentinel(t) == 15


def test_complex_outputs_compare_both_parts():
    ref = torch.tensor([1 + 1j, 2 - 1j])
    assert compare_tensor(0, ref, ref.clone(), None, None).problem is None
    assert "max abs err 2" in compare_tensor(0, ref, ref.conj().resolve_conj(), None, None).problem


def _verify(spec, kernel: str) -> dict:
    return verify(spec, POISON / f"{kernel}.py", VerifyOptions(seed=7, device="cpu"))


def test_unzeroed_uint32_workspace_is_wrong_and_a_zeroed_one_right():
    wrong = _verify(TINY, "uint32_workspace_unzeroed")
    assert not wrong["correct"] and any(r.startswith("mismatch:") for r in wrong["reasons"]), wrong["reasons"]
    right = _verify(TINY, "uint32_workspace_zeroed")
    assert right["correct"], right["reasons"]


def test_unwritten_bool_output_is_wrong_and_a_zeroed_one_right():
    spec = POISON / "tiny_positive.py"
    wrong = _verify(spec, "bool_unwritten")
    assert not wrong["correct"], wrong["reasons"]
    assert any("neither False nor True" in r for r in wrong["reasons"]), wrong["reasons"]
    assert any(r.startswith("partial-output:") for r in wrong["reasons"]), wrong["reasons"]
    right = _verify(spec, "bool_zeroed")
    assert right["correct"], right["reasons"]
