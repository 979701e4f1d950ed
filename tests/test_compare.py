"""Comparison: shape, then dtype, then NaN/Inf parity, then values, with the numbers in the message."""
from __future__ import annotations

import torch

from harness.compare import TOLERANCES, compare_outputs, compare_tensor, tolerance


def test_shape_is_checked_first():
    rep = compare_tensor(0, torch.zeros(2, 3), torch.zeros(3, 2, dtype=torch.float16), None, None)
    assert rep.problem == "output 0: shape [3, 2] != reference [2, 3]"


def test_dtype_is_checked_before_values():
    rep = compare_tensor(0, torch.zeros(4), torch.ones(4, dtype=torch.float64), None, None)
    assert rep.problem == "output 0: dtype torch.float64 != reference torch.float32"


def test_value_mismatch_names_position_and_tolerance():
    ref = torch.ones(20, 500)
    out = ref.clone()
    out[17, 430] += 3.1e-2
    rep = compare_tensor(0, ref, out, None, None)
    assert "max abs err 0.031 at [17, 430]" in rep.problem
    assert "1 of 10000 elements differ" in rep.problem


def test_nan_parity():
    ref = torch.tensor([1.0, float("nan"), 3.0])
    ok = compare_tensor(0, ref, ref.clone(), None, None)
    assert ok.problem is None
    bad = compare_tensor(0, ref, torch.tensor([1.0, 2.0, 3.0]), None, None)
    assert bad.problem.startswith("output 0: NaN mismatch at [1]")
    inf = compare_tensor(0, torch.tensor([float("inf")]), torch.tensor([float("-inf")]), None, None)
    assert "+Inf mismatch" in inf.problem


def test_atol_scales_with_reference_magnitude_so_zeros_fail_a_wide_softmax():
    ref = torch.softmax(torch.randn(4, 16384), dim=-1)  # values ~6e-5
    zeros = torch.zeros_like(ref)
    # a fixed atol of 1e-2 would accept zeros; scaled by the RMS it cannot
    assert bool(torch.allclose(zeros, ref, atol=1e-2, rtol=1e-2))
    assert compare_tensor(0, ref, zeros, 1e-2, 1e-2).problem is not None
    assert compare_tensor(0, ref, ref * (1 + 1e-6), 1e-2, 1e-2).problem is None


def test_tolerance_table_and_overrides():
    assert tolerance(torch.float32) == TOLERANCES[torch.float32]
    assert tolerance(torch.float16, atol=0.5) == (0.5, TOLERANCES[torch.float16][1])
    assert tolerance(torch.int64) == (0.0, 0.0)
    rep = compare_tensor(0, torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4]), None, None)
    assert "max abs err 1 at [2]" in rep.problem


def test_output_count_and_tuple_outputs():
    reps = compare_outputs((torch.ones(2), torch.zeros(2)), torch.ones(2), None, None)
    assert reps[0].problem == "returned 1 outputs, reference returns 2"
    reps = compare_outputs((torch.ones(2), 3.0), (torch.ones(2), 3.0), None, None)
    assert all(r.problem is None for r in reps)
