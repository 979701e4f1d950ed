"""A tolerance no other function fits (issue #32, item 8): where the judge measured the reference's
own error against float64 (every trial), that error is the floor of each element's bound and the
RMS-scaled term is ten times tighter for float32 (compare.TOLERANCES' atol_measured), so a tanh
GELU cannot hide under an output RMS made large by other elements, while a correct kernel summing
in its own order still passes."""
from __future__ import annotations

from conftest import DATA
from opforge.harness.verify import VerifyOptions, verify

TOLERANCE = DATA / "tolerance"


def test_a_tanh_gelu_is_wrong_on_a_randn_spec_and_the_erf_gelu_right():
    spec = TOLERANCE / "gelu_projection.py"  # unit randn inputs; outputs' RMS ~22 (1e-4 x that hid the tanh)
    wrong = verify(spec, TOLERANCE / "gelu_projection_tanh.py", VerifyOptions(seed=7, device="cpu"))
    assert not wrong["correct"]
    assert any(r.startswith("mismatch: variant 0") and "the reference's own error" in r for r in wrong["reasons"]), \
        wrong["reasons"]
    right = verify(spec, TOLERANCE / "gelu_projection_erf.py", VerifyOptions(seed=7, device="cpu"))
    assert right["correct"], right["reasons"]
    assert right["variants"][0]["reference_error"] > 0  # measured on the trials, reported
