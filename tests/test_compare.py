"""Comparison: shape, then dtype, then NaN/Inf parity, then values, with the numbers in the message."""
from __future__ import annotations

import torch

import math

import pytest

from opforge.harness.compare import compare_outputs, compare_tensor, small_element_tolerance, tolerance

F = torch.nn.functional


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
    # the documented per-dtype defaults, written out here rather than read back from the table
    assert tolerance(torch.float64) == (1e-7, 1e-7)
    assert tolerance(torch.float32) == (1e-4, 1e-4)
    assert tolerance(torch.float16) == (2e-3, 2e-3)
    assert tolerance(torch.bfloat16) == (1.6e-2, 1.6e-2)
    assert tolerance(torch.float16, atol=0.5) == (0.5, 2e-3)
    assert tolerance(torch.float32, rtol=0.25) == (1e-4, 0.25)
    assert tolerance(torch.int64) == (0.0, 0.0)
    ref = torch.ones(100)  # rms 1: an fp32 output may be off by atol + rtol = 2e-4, no more
    assert compare_tensor(0, ref, ref + 1.5e-4, None, None).problem is None
    assert compare_tensor(0, ref, ref + 3e-4, None, None).problem is not None
    x = _randn(64, 256)  # fp32's tolerance is tight enough that an fp16 round trip fails
    assert compare_tensor(0, x, x.half().float(), None, None).problem is not None
    assert compare_tensor(0, x.half(), x.half(), None, None).problem is None
    rep = compare_tensor(0, torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4]), None, None)
    assert "max abs err 1 at [2]" in rep.problem


def test_output_count_and_tuple_outputs():
    reps = compare_outputs((torch.ones(2), torch.zeros(2)), torch.ones(2), None, None)
    assert reps[0].problem == "returned 1 outputs, reference returns 2"
    reps = compare_outputs((torch.ones(2), 3.0), (torch.ones(2), 3.0), None, None)
    assert all(r.problem is None for r in reps)


# The small-element check: elements with |ref| >= floor x rms must be within rtol_small of themselves.

def _randn(*shape, scale=1.0, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * scale


def test_small_element_error_under_the_rms_atol_is_named():
    ref = torch.ones(10, 1000)
    ref[3, 7] = 2e-3  # 2e-3 x rms: above the floor (1e-3 x rms), where an atol of 1e-4 x rms is 5%
    out = ref.clone()
    out[3, 7] = 2.08e-3  # 4% off, 8e-5 absolute: under the atol
    rep = compare_tensor(0, ref, out, None, None)
    assert rep.problem == ("output 0: relative err 0.04 at [3, 7] on a small element (got 0.00208, expected 0.002; "
                           "|ref| >= 0.001 x rms 1, rtol_small 0.02); 1 of 10000 elements differ")
    out[3, 7] = 2.02e-3  # 1%: within rtol_small
    assert compare_tensor(0, ref, out, None, None).problem is None


def test_elements_below_the_floor_only_answer_to_the_atol():
    # 1 + erf(x) near x = -3.5 keeps only erf's absolute error: relative error there means nothing
    ref = torch.ones(10, 1000)
    ref[5, 5] = 5e-5
    out = ref.clone()
    out[5, 5] = 1e-4  # 100% off but 5e-5 absolute, below the floor and under the atol
    rep = compare_tensor(0, ref, out, None, None)
    assert rep.problem is None and rep.floor == 1e-3 and rep.rtol_small == 2e-2


def test_tanh_gelu_fails_where_the_rms_atol_hid_it():
    x = _randn(7, 4097, scale=8)  # gelu_erf's variant: rms 5.6, so the atol is 5.6e-4
    rep = compare_tensor(0, F.gelu(x), F.gelu(x, approximate="tanh"), None, None)
    assert "on a small element" in rep.problem and "|ref| >= 0.001 x rms" in rep.problem
    # a spec declaring atol = rtol = 1e-3 passes the tanh GELU on the atol everywhere; the small
    # elements still catch it, under a floor and rtol_small loosened to match
    x = _randn(64, 1000)
    rep = compare_tensor(0, F.gelu(x), F.gelu(x, approximate="tanh"), 1e-3, 1e-3)
    assert "on a small element" in rep.problem and "|ref| >= 0.01 x rms" in rep.problem


def test_spec_tolerances_loosen_the_small_element_check_never_tighten_it():
    assert small_element_tolerance(torch.float32) == (1e-3, 2e-2)
    assert small_element_tolerance(torch.float16) == (3e-2, 2e-2)
    assert small_element_tolerance(torch.float32, atol=1e-3, rtol=1e-2) == pytest.approx((1e-2, 0.1))
    assert small_element_tolerance(torch.float32, atol=1e-6, rtol=1e-6) == (1e-3, 2e-2)
    assert small_element_tolerance(torch.int64) == (0.0, 0.0)
    half, single = small_element_tolerance(torch.float16), small_element_tolerance(torch.float32)
    assert half[0] > single[0] and half[1] >= single[1]


def _blocked_cumsum(x, block=1024):
    out, carry = torch.empty_like(x), torch.zeros_like(x[:, :1])
    for start in range(0, x.shape[1], block):
        chunk = x[:, start:start + block]
        out[:, start:start + block] = torch.cumsum(chunk, 1) + carry
        carry = carry + chunk.sum(1, keepdim=True)
    return out


def _serial_cumsum(x):
    out, acc = torch.empty_like(x), torch.zeros_like(x[:, 0])
    for j in range(x.shape[1]):
        acc = acc + x[:, j]
        out[:, j] = acc
    return out


def _ksplit_matmul(a, b, block_k=32):
    acc = torch.zeros(a.shape[0], b.shape[1])
    for start in range(0, a.shape[1], block_k):
        acc = acc + a[:, start:start + block_k] @ b[start:start + block_k]
    return acc


def _erf_abramowitz_stegun(z):  # 7.1.26, |error| <= 1.5e-7
    t = 1.0 / (1.0 + 0.3275911 * z.abs())
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return torch.sign(z) * (1.0 - poly * torch.exp(-z * z))


def _layer_norm(x):
    return F.layer_norm(x, x.shape[-1:], eps=1e-5)


CORRECT = {  # name: (reference, the same op computed another correct way)
    "softmax 16k columns in float64": (lambda x: torch.softmax(x, -1),
                                       lambda x: torch.softmax(x.double(), -1).float(), (4, 16384)),
    "layer norm of x*4+2 in float64": (lambda x: _layer_norm(x * 4 + 2),
                                       lambda x: _layer_norm(x.double() * 4 + 2).float(), (33, 4096)),
    "cumsum in 1024-column blocks": (lambda x: torch.cumsum(x, 1), _blocked_cumsum, (8, 4096)),
    "cumsum added serially in fp32": (lambda x: torch.cumsum(x, 1), _serial_cumsum, (8, 4096)),
    "row sum of 16k columns serially": (lambda x: x.sum(1), lambda x: _serial_cumsum(x)[:, -1], (64, 16384)),
    "gelu through erfc": (F.gelu, lambda x: 0.5 * x * torch.erfc(-x / math.sqrt(2)), (64, 4096)),
    "gelu x8 through erfc": (lambda x: F.gelu(x * 8), lambda x: 0.5 * x * 8 * torch.erfc(-x * 8 / math.sqrt(2)),
                             (7, 4097)),
    "gelu through a 1.5e-7 erf": (F.gelu, lambda x: 0.5 * x * (1 + _erf_abramowitz_stegun(x / math.sqrt(2))),
                                  (64, 4096)),
    "log softmax as x - logsumexp": (lambda x: torch.log_softmax(x * 100, -1),
                                     lambda x: x * 100 - torch.logsumexp(x.double() * 100, -1, keepdim=True).float(),
                                     (16, 4096)),
}


@pytest.mark.parametrize("name", list(CORRECT))
def test_correct_fp32_computations_in_another_order_pass(name):
    ref_fn, alt_fn, shape = CORRECT[name]
    x = _randn(*shape)
    assert compare_tensor(0, ref_fn(x), alt_fn(x), None, None).problem is None


@pytest.mark.parametrize("k_split", [32, 256])
def test_matmul_with_another_k_split_passes(k_split):
    a, b = _randn(128, 1024, seed=1), _randn(1024, 96, seed=2)
    assert compare_tensor(0, a @ b, _ksplit_matmul(a, b, k_split), None, None).problem is None


def test_the_references_own_float64_error_widens_the_atol_to_four_times_it_and_no_more():
    ref = _randn(64, 256, seed=3)
    ref[5, 7] = 0.5
    off = ref.clone()
    off[5, 7] += 3e-4  # atol 1e-4 x rms ~1, rtol 1e-4 x 0.5: the element fails on its own
    assert "max abs err 0.0003" in compare_tensor(0, ref, off, None, None).problem
    assert compare_tensor(0, ref, off, None, None, noise=0.75e-4).problem is None  # 4 x 0.75e-4 >= 3e-4
    problem = compare_tensor(0, ref, off, None, None, noise=0.5e-4).problem  # 2e-4 + 0.5e-4 < 3e-4
    assert "4 x the reference's own error 5e-05 against float64" in problem
    wrong = ref.clone()
    wrong[0] += 0.05
    assert compare_tensor(0, ref, wrong, None, None, noise=1.0).problem  # capped at 1e-2 x rms


def test_noise_is_per_output():
    a, b = _randn(32, 32, seed=4), _randn(32, 32, seed=5)
    reports = compare_outputs((a, b), (a + 3e-4, b + 3e-4), None, None, noise=[2e-4, None])
    assert reports[0].problem is None and reports[0].noise == 2e-4
    assert reports[1].problem and reports[1].noise == 0.0


def test_float8_outputs_compare_on_a_cpu():
    ref = torch.tensor([1.0, -2.0, 448.0, 0.0]).to(torch.float8_e4m3fn)
    assert compare_tensor(0, ref, ref.clone(), None, None).problem is None
    off = torch.tensor([1.0, -2.0, 416.0, 0.0]).to(torch.float8_e4m3fn)
    assert "max abs err 32" in compare_tensor(0, ref, off, None, None).problem
    nan = torch.tensor([1.0, float("nan"), 448.0, 0.0]).to(torch.float8_e4m3fn)
    assert "NaN mismatch" in compare_tensor(0, ref, nan, None, None).problem


def test_a_forward_returning_none_has_no_outputs():
    assert compare_outputs(None, None, None, None) == []
    assert compare_outputs(None, torch.ones(2), None, None)[0].problem == "returned 1 outputs, reference returns 0"
