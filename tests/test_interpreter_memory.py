"""The CPU run's memory model (backends/triton/memory.py) through the real pipeline, on NVIDIA
Triton and Triton-Ascend: every access bounds-checked (`out-of-bounds`), programs of one launch
concurrent as on hardware (`race` unless atomics order them), and programs run in more than one
order with repeated calls compared bitwise (`order-dependent`). Each wrong kernel has a correct
control beside it that must still verify (tests/data/memory, tests/data/hostile_ascend).
"""
from __future__ import annotations

import pytest

from conftest import DATA, ROOT, SPECS, require_ascend
from opforge.harness import ladder
from opforge.harness.verify import VerifyOptions, verify

MEMORY = DATA / "memory"
SUM, CUMSUM, ADJACENT = MEMORY / "spec_sum.py", MEMORY / "spec_cumsum.py", MEMORY / "spec_adjacent.py"
SILU = SPECS / "tiny_silu.py"


def run(spec, kernel, backend: str = "triton", trials: int = 1) -> dict:
    return verify(spec, kernel, VerifyOptions(seed=3, trials=trials, device="cpu", backend=backend, sandbox="none"))


def reason(v: dict, code: str) -> str:
    found = [r for r in v["reasons"] if r.split(":", 1)[0] == code]
    assert found, v["reasons"]
    return found[0]


# kernel, spec, code, texts the reason must contain
WRONG = [
    ("carry_chain", CUMSUM, "race", ("kernel _scan", "program 0 stored element 63 of argument 1 (out_ptr)",
                                     "program 1 loaded it")),
    ("last_program", SUM, "race", ("kernel _sum", "of argument 1 (part_ptr)", "program 9")),
    ("last_program_relaxed", SUM, "race", ("of argument 1 (part_ptr)",)),
    ("inplace_neighbour", ADJACENT, "race", ("kernel _adjacent", "element 32 of argument 0 (out_ptr)")),
    ("seam_conflict", SILU, "race", ("element 32 of argument 1 (y_ptr)", "stored it")),
    ("store_overrun", SILU, "out-of-bounds", ("kernel _silu: a store by program 2 touched 1 element",
                                              "+1 element past the end of argument 1 (y_ptr, 95 elements)")),
    ("load_overrun", SILU, "out-of-bounds", ("a load by program 2 touched 1 element",
                                             "+1 element past the end of argument 0 (x_ptr, 95 elements)")),
    ("lock_sum", SUM, "order-dependent", ("differ bitwise",)),
]

CORRECT = [
    ("carry_ok", CUMSUM),             # each program sums the blocks before its own itself
    ("last_program_ticket", SUM),     # the last ticket of an acq_rel counter sums the partials
    ("atomic_sum", SUM),              # float atomic accumulation: repeated calls equal within tolerance
    ("adjacent_ok", ADJACENT),        # reads the input, writes the output
    ("seam_same", SILU),              # two programs store the same bytes at a seam: benign
]


@pytest.mark.parametrize("kernel, spec, code, texts", WRONG, ids=[w[0] for w in WRONG])
def test_a_kernel_right_only_in_the_interpreters_order_or_bounds_is_rejected(kernel, spec, code, texts):
    v = run(spec, MEMORY / f"{kernel}.py")
    assert ladder.exit_code(v) == 1 and not v["correct"]
    found = reason(v, code)
    assert all(t in found for t in texts), found
    if code != "order-dependent":
        assert ladder.failed_check(v) == "run"


@pytest.mark.parametrize("kernel, spec", CORRECT, ids=[c[0] for c in CORRECT])
def test_correct_cross_program_kernels_still_verify(kernel, spec):
    v = run(spec, MEMORY / f"{kernel}.py")
    assert ladder.exit_code(v) == 0 and v["level"] == "emulated", v["reasons"]


def test_a_result_that_depends_on_the_order_is_caught_when_no_access_races():
    """A scan whose carry is what an atomic add returned: no plain access races (atomics order
    them), but only grid order gives the prefix. The programs run in other orders too."""
    v = run(CUMSUM, MEMORY / "atomic_scan.py", trials=2)
    assert ladder.exit_code(v) == 1
    assert {r.split(":", 1)[0] for r in v["reasons"]} & {"mismatch", "order-dependent"}, v["reasons"]
    assert not any(r.startswith("race:") for r in v["reasons"]), v["reasons"]


def test_the_new_codes_have_checks_and_hints():
    from opforge.backends import plugin
    from opforge.harness.judge import CHECK_OF

    assert (CHECK_OF["out-of-bounds"], CHECK_OF["race"], CHECK_OF["order-dependent"]) == ("run", "run", "compare")
    for backend in ("triton", "triton_ascend"):
        hints = plugin(backend).reason_hints(["race: variant 0: kernel k: ...", "out-of-bounds: variant 1: ..."])
        assert len(hints) == 2 and "atomic counter" in hints[0] and "mask" in hints[1], hints


# -- Triton-Ascend: the same module in triton-ascend's interpreter ------------------------------
HOSTILE = DATA / "hostile_ascend"
OPS_SILU = ROOT / "ops" / "silu.py"


@pytest.mark.parametrize("kernel, code, texts", [
    ("store_overrun", "out-of-bounds", ("a store by program 0 touched 1 element",
                                        "+1 element past the end of argument 1 (y_ptr, 1000 elements)")),
    ("nomask", "out-of-bounds", ("a load by program 0 touched 24 elements",)),
    ("seam_race", "race", ("element 1024 of argument 1 (y_ptr)",)),
], ids=["store_overrun", "load_overrun", "seam_race"])
def test_triton_ascend_bounds_and_races(kernel, code, texts):
    require_ascend()
    v = run(OPS_SILU, HOSTILE / f"{kernel}.py", backend="triton_ascend")
    assert ladder.exit_code(v) == 1 and not v["correct"]
    found = reason(v, code)
    assert all(t in found for t in texts), found
