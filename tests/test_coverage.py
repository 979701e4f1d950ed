"""Coverage as wide as the spec (issue #32, item 7): every size constant is grown alone past a
power-of-two cap, constructor sizes included (the model built again at them, the declared size
where the CPU budget allows), and a result cannot depend on the call count (repeated calls on the
same inputs must leave what the candidate keeps unchanged: harness/callstate.py)."""
from __future__ import annotations

import torch

from conftest import DATA, KERNELS, TINY
from opforge.harness import callstate, verify as verify_module
from opforge.harness.verify import VerifyOptions, verify

COVERAGE = DATA / "coverage"


def _verify(spec, kernel) -> dict:
    return verify(spec, kernel, VerifyOptions(seed=7, device="cpu"))


def _larger(v: dict) -> dict[str, str]:
    return {s["case"]: s["status"] for s in v["stress"] if s["case"].startswith("larger")}


def test_a_kernel_for_at_most_64_rows_fails_the_grown_batch():
    spec = COVERAGE / "tiny_rows.py"  # 64 rows, all kept by the CPU run
    wrong = _verify(spec, COVERAGE / "first_64_rows.py")
    assert not wrong["correct"]
    assert any(r.startswith("mismatch: stress case larger batch_size=129") for r in wrong["reasons"]), wrong["reasons"]
    right = _verify(spec, KERNELS / "good.py")
    assert right["correct"], right["reasons"]
    assert set(_larger(right)) == {"larger batch_size=129 dim=12 (batch_size 2x+1 of 64)",
                                   "larger dim=49 batch_size=32 (dim 2x+1 of 24)"}  # each grown alone, the other paying


def test_a_reduction_capped_at_the_shrunk_k_fails_the_declared_k(monkeypatch):
    monkeypatch.setattr(verify_module, "CPU_MAX_ELEMENTS", 1 << 13)  # in_features 2048 shrunk to 256
    spec = COVERAGE / "tiny_linear.py"
    wrong = _verify(spec, COVERAGE / "linear_capped_k.py")
    assert wrong["sizes"]["used"]["in_features"] == 256 and wrong["sizes"]["declared"]["in_features"] == 2048
    assert not wrong["correct"]
    grown = "larger in_features=2048 batch_size=2 out_features=4 (in_features at its declared size, the model built again"
    assert any(r.startswith(f"mismatch: stress case {grown}") for r in wrong["reasons"]), wrong["reasons"]
    right = _verify(spec, COVERAGE / "linear_k_loop.py")
    assert right["correct"], right["reasons"]
    assert any(case.startswith(grown) and status == "passed" for case, status in _larger(right).items())


def test_a_call_counting_time_bomb_is_refused_as_stateful():
    wrong = _verify(TINY, COVERAGE / "time_bomb_counter.py")  # right for its first 64 calls; the run makes fewer
    assert not wrong["correct"]
    assert any(r.startswith("stateful:") and "model 0.calls" in r for r in wrong["reasons"]), wrong["reasons"]
    right = _verify(TINY, COVERAGE / "warm_cache.py")  # state filled once (warm-up), then unchanged
    assert right["correct"], right["reasons"]


def test_state_map_reaches_what_candidate_code_can_and_floats_to_three_digits():
    import types

    module = types.ModuleType("cand")
    exec("import torch\nCOUNTS = {'n': [0]}\ndef f(x, seen=[]):\n    return x\n"
         "class M(torch.nn.Module):\n    hits = 0\n", module.__dict__)
    model = module.M()
    model.register_buffer("acc", torch.zeros(3))
    before = callstate.state_map(module, [model])
    assert callstate.state_map(module, [model]) == before  # the same state, the same map
    for change, where in ((lambda: module.COUNTS["n"].__setitem__(0, 1), "COUNTS['n'][0]"),
                          (lambda: module.f.__defaults__[0].append(1), "f.__defaults__"),
                          (lambda: setattr(module.M, "hits", 1), "M.hits"),
                          (lambda: model.acc.add_(1), "model 0._buffers['acc']")):
        change()
        now = callstate.state_map(module, [model])
        assert callstate.changed(before, now).startswith(where), callstate.changed(before, now)
        before = now
    model.acc.add_(1e-6)  # a float rounding difference (another program order) is the same state
    assert callstate.state_map(module, [model]) == before


def test_a_model_built_for_the_sizes_used_is_verified_at_those_and_the_verdict_says_so(monkeypatch):
    monkeypatch.setattr(verify_module, "CPU_MAX_ELEMENTS", 1 << 13)
    v = _verify(COVERAGE / "tiny_linear.py", COVERAGE / "linear_fixed_size.py")  # ignores its init args
    assert v["correct"], v["reasons"]
    rebuilt = [s for s in v["stress"] if "the model built again" in s["case"]]
    assert rebuilt and all(s["status"] == "skipped" and "built for the sizes used" in s["reason"] for s in rebuilt)
