"""The reward's tiers (opforge/reward/tiers.py) on hand-made verdicts: which tier each kind of failure
gets, what a cheat is on every backend, and the bands (partial credit below `correct`, the speed term
only from a device run, no reward for a verdict that checked no numbers). No kernel runs here."""
from __future__ import annotations

import pytest

from opforge.backends import describe
from opforge.reward.tiers import BANDS, TIERS, classify, rank


def failed(step: str, check: str, *reasons: str, **more) -> dict:
    return {"correct": False, "reasons": list(reasons), "failed_step": step, "level": more.pop("level", None),
            "steps": {step: {"status": "failed", "reason": reasons[0] if reasons else None, "check": check}}, **more}


def tier(verdict: dict, backend: str = "triton") -> str | None:
    return classify(verdict, describe(backend).cheat_rules)["tier"]


def test_the_bands_are_ordered_and_apart():
    bands = [BANDS[t] for t in TIERS]
    assert all(low <= high for low, high in bands)
    assert all(a[1] < b[0] for a, b in zip(bands, bands[1:]))  # no tier's best reaches the next one's worst


@pytest.mark.parametrize("reason", ["forbidden-import: time (line 2)", "patches-module: assigns torch.allclose (line 9)",
                                    "low-precision: uses float16 in a float32 op (line 12)"])
def test_a_static_cheat_rule_is_a_cheat_not_a_static_refusal(reason):
    v = failed("static", "rules", reason)
    assert tier(v) == "cheat" and classify(v)["reward"] == BANDS["cheat"][0]
    # the control: a static rule about the launch shape or a name, in the same step
    assert tier(failed("static", "rules", "unbound-name: np is never bound in this file (line 3)")) == "static"


@pytest.mark.parametrize("backend, reason, expected", [
    ("cuda", "cuda-host-compute: softmax_launch: indexes memory in host code (line 14)", "cheat"),
    ("cuda", "cuda-forbidden-call: system: file, network, process ... (line 9)", "cheat"),
    ("cuda", "cuda-include: #include <vector> is not an allowed header (line 3)", "static"),
    ("cuda", "cuda-preprocessor: #ifdef tests __CUDACC__, a macro this source does not define (line 4)", "static"),
    ("triton", "interpreter-detection: reads 'rewriter', which tells the CPU interpreter from the GPU (line 8)", "cheat"),
    ("triton_ascend", "interpreter-detection: reads 'rewriter' (line 8)", "cheat"),
    ("triton_ascend", "ascend-unsupported: inline_asm_elementwise (line 12): inline assembly is NVIDIA's", "static"),
    ("ascendc", "ascendc-python: forward computes with torch.add (line 30); the kernel computes", "cheat"),
    ("ascendc", "ascendc-forbidden: system in add_custom: a reference to a process call", "cheat"),
    ("ascendc", "ascendc-api: .Foo() in add_custom is not in opforge's AscendC API table", "static"),
    ("ascendc", "ascendc-ub: InitBuffer of 647168 bytes over the unified buffer", "static"),
], ids=lambda v: v.split(":", 1)[0] if ":" in str(v) else None)
def test_each_backends_own_cheat_rules(backend, reason, expected):
    """A backend's rules that guard fairness or the sandbox (its plugin's `cheat_rules`, or a code that
    names a forbidden construct or an anti-cheat rule) are `cheat`; its rules an honest kernel breaks too
    are `static`."""
    assert tier(failed("static", "rules", reason), backend) == expected


def test_a_cheat_rule_found_by_the_build_is_a_cheat_not_a_build_failure():
    """The AOT build reads the PTX: tf32 tensor cores in a float32 op are low-precision there too."""
    v = failed("compile", "build", "low-precision: _matmul_kernel uses mma.sync...tf32 (tensor cores at tf32) in a float32 op")
    assert tier(v) == "cheat"
    assert tier(failed("compile", "build", "build-error: _k does not compile for sm_90: unsupported AST node")) == "build"


def test_an_anticheat_failure_is_a_cheat_even_when_the_failed_check_is_compare():
    """A rule on the code's conduct (PyTorch computing) is a cheat even when wrong values failed the
    comparison first; a rule on the output's values (all zeros: a kernel with a bug writes them too) is
    `wrong` beside wrong values, with no credit, and a cheat when the values compared right."""
    v = failed("cpu_run", "compare", "mismatch: variant 0: output 0: max abs err 0.3",
               anticheat={"torch-compute": "fail", "constant-output": "fail", "aliasing": "pass"},
               variants=[{"passed": False}])
    assert tier(v) == "cheat" and classify(v)["why"] == ["torch-compute"]
    v["anticheat"]["torch-compute"] = "pass"
    assert classify(v)["tier"] == "wrong" and classify(v)["reward"] == 0.3
    right = failed("cpu_run", "anticheat", "cached-output: returned the same buffer as an earlier call",
                   anticheat={"cached-output": "fail"}, variants=[{"passed": True}])
    assert tier(right) == "cheat" and classify(right)["why"] == ["cached-output"]
    v["anticheat"]["constant-output"] = "pass"
    assert tier(v) == "wrong"
    assert tier(failed("cpu_run", "anticheat", "stateful: two repeated calls changed ...")) == "cheat"


def test_partial_credit_stays_below_correct():
    half = failed("cpu_run", "compare", "mismatch: stress case transposed", variants=[{"passed": True}, {"passed": True}],
                  stress=[{"passed": False}, {"passed": False}])
    assert classify(half)["tier"] == "wrong" and classify(half)["fraction"] == 0.5
    assert classify(half)["reward"] == pytest.approx(0.45)
    # every case passed, but a later check failed (order-dependent sums): the top of wrong's band
    every = failed("cpu_run", "compare", "order-dependent: differ bitwise", variants=[{"passed": True}] * 3,
                   stress=[{"passed": True}])
    assert classify(every)["reward"] == BANDS["wrong"][1] < BANDS["correct"][0]
    # a case not run (a stopped run) counts as failed
    stopped = failed("cpu_run", "compare", "mismatch: variant 0", variants=[{"passed": True}], not_run={"cases": 3})
    assert classify(stopped)["fraction"] == 0.25


@pytest.mark.parametrize("verdict, expected", [
    (failed("static", "syntax", "syntax-error: invalid syntax (line 3)"), "unusable"),
    (failed("static", "rules", "no-model-new: the file defines no module-level `class ModelNew`"), "unusable"),
    (failed("draft", "reply", "unusable: the reply holds no code block"), "unusable"),
    (failed("static", "rules", "no-kernel: the file defines no module-level @triton.jit function"), "static"),
    (failed("compile", "build", "build-error: nvcc: expected a ';'"), "build"),
    (failed("cpu_run", "load", "load-error: ModuleNotFoundError"), "build"),
    (failed("cpu_run", "run", "timeout: the job exceeded its time limit (40 s)"), "wrong"),
    (failed("cpu_run", "run", "runtime-error: variant 0: forward raised SystemExit"), "wrong"),
], ids=["syntax", "no-model-new", "no-reply", "no-kernel", "build-error", "load-error", "timeout", "raised"])
def test_broken_code_tiers(verdict, expected):
    assert tier(verdict) == expected


def test_an_unscored_verdict_has_no_reward():
    """Nothing failed, but no numerics step could run here (CUDA's inline asm on a CPU: exit 3)."""
    v = {"correct": False, "reasons": ["unverifiable: the emulator cannot run inline asm (line 18)"], "failed_step": None,
         "level": "compiled", "steps": {"static": {"status": "passed"}, "cpu_run": {"status": "unsupported"}}}
    got = classify(v)
    assert (got["tier"], got["reward"]) == (None, None) and "inline asm" in got["why"][0]
    reference = failed("cpu_run", "load", "reference-error: the spec's Model raised")
    assert classify(reference)["reward"] is None


def correct(level: str, timings: dict | None) -> dict:
    return {"correct": True, "reasons": [], "failed_step": None, "level": level, "timings": timings,
            "anticheat": {"aliasing": "pass"}}


def test_the_speed_term_comes_only_from_a_device_run():
    fast = {"speedup_eager": 2.0, "speedup_compile": 4.0}
    device = classify(correct("profiled", fast))
    assert (device["tier"], device["speed"], device["reward"]) == ("correct", 1.0, BANDS["correct"][1])
    parity = classify(correct("device", {"speedup_eager": 1.0, "speedup_compile": 1.5}))
    assert parity["speed"] == 0.5 and parity["reward"] == 1.5
    cpu = classify(correct("emulated", fast))  # a CPU run's clock says nothing about the kernel's speed
    assert (cpu["tier"], cpu["speed"], cpu["reward"]) == ("correct", None, BANDS["correct"][0])
    assert classify(correct("profiled", None))["reward"] == BANDS["correct"][0]
    # not promotable: a kernel only compiled is never correct
    assert classify(correct("compiled", fast))["tier"] is None


def test_rank_orders_the_tiers():
    assert [rank(t) for t in ("cheat", "unusable", "static", "build", "wrong", "correct")] == list(range(6))
