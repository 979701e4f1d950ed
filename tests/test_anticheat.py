"""Each cheat class is rejected with its named reason by the real pipeline (sandboxed worker,
Triton interpreter). Each test would fail if its check were removed: the cheats produce outputs
that a plain value comparison alone would accept, or that only the named check explains."""
from __future__ import annotations

import pytest

from conftest import KERNELS, TINY
from opforge.harness.verify import VerifyOptions, verify

OPTIONS = VerifyOptions(seed=1234, trials=2, device="cpu")


def run(kernel: str) -> dict:
    return verify(TINY, KERNELS / f"{kernel}.py", OPTIONS)


def codes(verdict: dict) -> set[str]:
    return {r.split(":", 1)[0] for r in verdict["reasons"]}


def test_good_kernel_passes_every_check():
    v = run("good")
    assert v["correct"], v["reasons"]
    assert set(v["anticheat"].values()) == {"pass"}
    assert v["launches"]["_softmax_kernel"] >= 2 * 2  # two trials of two variants, plus the no-op probe


@pytest.mark.parametrize("kernel, code, stage", [
    ("cheat_zeros", "constant-output", "compare"),
    ("cheat_torch_compute", "torch-compute", "anticheat"),
    ("cheat_alias_input", "aliasing", "anticheat"),
    ("cheat_mutate_input", "input-mutation", "anticheat"),
    ("cheat_cache_buffer", "cached-output", "compare"),
    ("cheat_cache_copy", "cached-output", "compare"),
    ("cheat_partial", "partial-output", "compare"),
    ("cheat_low_precision", "low-precision", "static"),
    ("cheat_patch_torch", "patches-module", "static"),
    ("cheat_timer", "forbidden-import", "static"),
    ("cheat_thread", "forbidden-import", "static"),
    ("cheat_subprocess", "forbidden-import", "static"),
    ("cheat_python_compute", "no-launch", "anticheat"),
    ("cheat_kernel_independent", "kernel-independent", "anticheat"),
])
def test_cheat_is_rejected_with_its_reason(kernel, code, stage):
    v = run(kernel)
    assert not v["correct"]
    assert code in codes(v), v["reasons"]
    assert v["stage"] == stage, v["reasons"]


def test_cheats_that_match_values_pass_the_comparison_alone():
    """The torch-compute, aliasing, buffer-cache and kernel-independent cheats produce the right
    numbers: only their named check stops them, so no mismatch may be among their reasons."""
    for kernel in ("cheat_torch_compute", "cheat_alias_input", "cheat_kernel_independent"):
        v = run(kernel)
        assert "mismatch" not in codes(v), (kernel, v["reasons"])
