"""Fail fast (harness/early.py): a wrong kernel is stopped at the first checkpoint whose outputs
show it, the verdict names what did not run; a correct kernel runs the whole plan; a candidate
cannot shorten its own run into a pass by forging the judge's answer."""
from __future__ import annotations

from dataclasses import replace

from conftest import KERNELS, TINY
from opforge.harness import early, judge
from opforge.harness.verify import VerifyOptions, prepare, verify

CPU = VerifyOptions(seed=3, device="cpu")


def _plan_calls() -> int:
    spec, _hw = prepare(TINY, CPU)
    return len(judge.prepare(spec, 3, CPU.trials, "cpu").plan)


def _variant(tmp_path, name: str, old: str, new: str, head: str = "") -> str:
    source = (KERNELS / "good.py").read_text()
    assert source.count(old) == 1
    path = tmp_path / name
    path.write_text(head + source.replace(old, new))
    return str(path)


def test_a_wrong_kernel_is_stopped_at_its_first_call_and_the_verdict_names_what_did_not_run(tmp_path):
    wrong = _variant(tmp_path, "scaled.py", "e / tl.sum(e, axis=0)", "e / tl.sum(e, axis=0) * 1.001")
    v = verify(TINY, wrong, CPU)
    total = _plan_calls()
    assert not v["correct"] and v["reasons"][0].startswith("mismatch: variant 0:"), v["reasons"]
    assert v["calls"] == 1 and v["not_run"]["calls"] == total - 1 and v["not_run"]["of"] == total, v.get("not_run")
    assert "no-op probe" in v["not_run"]["cases"] and v["not_run"]["reason"].startswith("not run:")
    # the correct control beside it: the whole plan runs, nothing is left out
    good = verify(TINY, KERNELS / "good.py", CPU)
    assert good["correct"] and "not_run" not in good and good["calls"] == total, good["reasons"]
    # the sizes, the budget they were chosen for, the estimate and what the calls took (harness/cost.py)
    sizes = good["sizes"]
    assert sizes["budget_s"] > 0 and 0 < sizes["estimated_s"] <= sizes["budget_s"], sizes
    assert sizes["measured_s"]["first_call"] > 0 and sizes["measured_s"]["calls"] >= sizes["measured_s"]["first_call"]


def test_a_kernel_wrong_only_after_its_first_call_is_stopped_at_a_later_checkpoint(tmp_path):
    # right on the main case's first call, wrong from the second call on (a counter in the model picks
    # the kernel's scale: no PyTorch compute, no cheat rule fires, only the values are wrong)
    source = (KERNELS / "good.py").read_text()
    for old, new in (("def _softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):",
                      "def _softmax_kernel(x_ptr, out_ptr, n_cols, scale, BLOCK: tl.constexpr):"),
                     ("e / tl.sum(e, axis=0)", "e / tl.sum(e, axis=0) * scale"),
                     ("class ModelNew(torch.nn.Module):\n    def forward(self, x):\n",
                      "class ModelNew(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                      "        self.n = 0\n\n    def forward(self, x):\n        self.n += 1\n"),
                     ("(x, out, x.shape[1], BLOCK=", "(x, out, x.shape[1], 1.0 if self.n == 1 else 1.001, BLOCK=")):
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    wrong = tmp_path / "later.py"
    wrong.write_text(source)
    v = verify(TINY, wrong, replace(CPU, replayable=True))  # as the RL reward verifies
    assert not v["correct"] and all(r.startswith("mismatch:") for r in v["reasons"]), v["reasons"]
    assert v["calls"] > 1 and v.get("not_run") and v["not_run"]["calls"] >= 1, (v["calls"], v.get("not_run"))
    # it stops exactly after the first checkpoint past call 2: a replayable run waits there for the judge's
    # answer, so the verdict (and the RL reward read from it) depends on the seed, not on a race
    spec, _hw = prepare(TINY, CPU)
    after = early.checkpoints(judge.prepare(spec, 3, CPU.trials, "cpu"))
    assert v["calls"] == min(i for i in after if i >= 1) + 1, (v["calls"], after)


def test_checkpoints_are_the_first_call_and_the_end_of_each_group():
    spec, _hw = prepare(TINY, CPU)
    material = judge.prepare(spec, 3, CPU.trials, "cpu")
    after = early.checkpoints(material)
    kinds = [material.cases[s["case"]].kind for s in material.plan]
    assert after[0] == 0 and len(material.plan) - 1 not in after and after == sorted(set(after))
    trials = max(i for i, k in enumerate(kinds) if k == "trial" and not material.plan[i].get("repeat")
                 and not material.plan[i].get("noop"))
    assert trials in after, (after, kinds)


def test_a_candidate_forging_the_judges_stop_does_not_shorten_its_run_into_a_pass(tmp_path):
    # a correct kernel that writes "stop" where the worker reads the judge's answer (its own job
    # directory: sys.argv names the job file): it runs one call, and that is not a pass
    head = ("import os, sys\n"
            "_job = [a for a in sys.argv if a.endswith('job.json')]\n"
            "if _job:\n"
            "    with open(os.path.join(os.path.dirname(_job[0]), 'early.answer'), 'w') as _fh:\n"
            "        _fh.write('stop')\n")
    forged = _variant(tmp_path, "forged.py", "class ModelNew", "class ModelNew", head=head)
    v = verify(TINY, forged, VerifyOptions(seed=3, device="cpu", skip_static=True, sandbox="jail"))
    assert not v["correct"] and "not_run" not in v, v["reasons"]
    assert any(r.startswith("runtime-error:") and "calls it was asked" in r for r in v["reasons"]), v["reasons"]
