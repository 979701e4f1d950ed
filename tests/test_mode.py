"""The mode the reference runs in (harness/mode.py): KernelBench's training mode as constructed
(BatchNorm on the batch's statistics), eval where the spec says so, dropout off in both, a random
reference refused with its reason, and the candidate's model in the same mode. Straight on the
judge's preparation and the checker's model building: no sandbox, a few seconds."""
from __future__ import annotations

import subprocess
import types

import pytest
import torch

from conftest import ROOT, write
from opforge.harness import checker, judge
from opforge.harness.spec import load_spec

BN_SPEC = '''
import torch
import torch.nn as nn
{header}

class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.fc = nn.Linear(features, features)
        self.bn = nn.BatchNorm1d(features)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.bn(self.fc(x)))

def get_inputs():
    return [torch.randn(24, 16) * 3 + 1]

def get_init_inputs():
    return [16]
'''


def _material(tmp_path, header: str = ""):
    path = write(tmp_path / "gemm_bn.py", BN_SPEC.format(header=header))
    spec = load_spec(path, max_elements=None, max_bytes=1 << 30)
    return spec, judge.prepare(spec, seed=3, trials=1, device="cpu")


def _by_hand(material, training: bool) -> torch.Tensor:
    """What the reference's function is in each mode, computed here from its own parameters."""
    model, x = material.refs[0], material.cases[judge.main_case(material)].inputs[0]
    bn = model.bn
    y = model.fc(x)
    if training:
        mean, var = y.mean(0), y.var(0, unbiased=False)
    else:
        mean, var = bn.running_mean, bn.running_var
    return ((y - mean) / torch.sqrt(var + bn.eps) * bn.weight + bn.bias).detach()


def test_a_kernelbench_spec_is_judged_in_training_mode_with_dropout_off(tmp_path):
    spec, material = _material(tmp_path)
    expected = material.cases[judge.main_case(material)].expected[0]
    assert spec.mode == "train" and material.models[0]["mode"] == "train"
    # batch statistics, and no dropout: every element kept, none scaled by 1/(1-p)
    assert torch.allclose(expected, _by_hand(material, training=True), atol=1e-5)
    # a kernel folding BatchNorm with its running statistics computes something else: it fails
    assert not torch.allclose(expected, _by_hand(material, training=False), atol=1e-2)


def test_an_inference_spec_says_eval_and_is_judged_on_the_running_statistics(tmp_path):
    spec, material = _material(tmp_path, 'OPFORGE = dict(mode="eval")')
    expected = material.cases[judge.main_case(material)].expected[0]
    assert spec.mode == "eval" and material.models[0]["mode"] == "eval"
    assert torch.allclose(expected, _by_hand(material, training=False), atol=1e-5)
    assert not torch.allclose(expected, _by_hand(material, training=True), atol=1e-2)


def test_a_random_reference_is_refused_with_its_reason_and_a_seeded_one_is_not(tmp_path):
    random = BN_SPEC.format(header="").replace("return self.drop(self.bn(self.fc(x)))",
                                               "return torch.nn.functional.dropout(self.fc(x), 0.5, training=True)")
    spec = load_spec(write(tmp_path / "random_ref.py", random), max_elements=None, max_bytes=1 << 30)
    with pytest.raises(judge.ReferenceError_, match="reference-error: the reference is random"):
        judge.prepare(spec, seed=3, trials=1, device="cpu")
    # control: the same module in training mode with its dropout module is deterministic (dropout off)
    _material(tmp_path)


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_the_candidates_model_runs_in_the_references_mode(mode):
    cand = types.ModuleType("cand")
    cand.ModelNew = type("ModelNew", (torch.nn.Module,), {
        "__init__": lambda self: (torch.nn.Module.__init__(self), setattr(self, "drop", torch.nn.Dropout(0.5)))[0]})
    new = checker.build_model(cand, {"init": [], "state": {}, "seed": 0, "mode": mode}, "cpu")
    assert new.training is (mode == "train")
    assert new.drop.training is False  # dropout off in both, as in the reference


def test_a_bad_mode_is_one_line_and_exit_2(tmp_path):
    spec = write(tmp_path / "bad_mode.py", BN_SPEC.format(header='OPFORGE = dict(mode="training")'))
    kernel = write(tmp_path / "k.py", "class ModelNew:\n    pass\n")
    proc = subprocess.run([str(ROOT / ".venv" / "bin" / "opforge"), "verify", str(spec), str(kernel)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "OPFORGE['mode'] is 'training'" in lines[0] and "Traceback" not in proc.stderr
