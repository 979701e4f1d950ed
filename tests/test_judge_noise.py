"""The judge measures the reference's own rounding error (against itself in float64) on the scaled
stress cases, where outputs that cancel to near zero are ill-conditioned, and the comparison allows
four times it: a kernel summing in another order is held to what the fp32 reference achieves."""
from __future__ import annotations

from conftest import write
from opforge.harness import judge
from opforge.harness.spec import load_spec

GEMM_CLAMP = '''
import torch
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(512, 256)
    def forward(self, x):
        return torch.clamp(torch.nn.functional.silu(self.fc(x)) + 0.25, -1.0, 1.0)
def get_inputs():
    return [torch.randn(64, 512)]
def get_init_inputs():
    return []
'''


def _material(tmp_path, source):
    spec = load_spec(write(tmp_path / "op.py", source), max_elements=None, max_bytes=1 << 30)
    return judge.prepare(spec, seed=1, trials=1, device="cpu")


def test_scaled_cases_carry_the_references_float64_error(tmp_path):
    material = _material(tmp_path, GEMM_CLAMP)
    noise = {c.label: c.noise for c in material.cases}
    up, down = noise["scaled x1000"], noise["scaled x0.001"]
    assert up is not None and down is not None
    # x1e3: sums of ~1e3-sized terms cancel to [-1, 1] outputs, so fp32's error grows ~1000x
    assert 1e-6 < up[0] < 1e-2 and down[0] < 1e-5 and up[0] > 100 * down[0]
    assert noise["variant 0"][0] < up[0]  # the trials carry theirs too (the floor of a tighter atol)
    assert all(noise[c.label] is None for c in material.cases if c.kind not in ("trial", "stress")
               or c.label.startswith(("larger", "zeros", "transposed", "sliced")))


def test_a_reference_that_cannot_run_in_float64_measures_nothing(tmp_path):
    source = GEMM_CLAMP.replace("return torch.clamp(", "return torch.mm(x, torch.ones(512, 4)) + torch.clamp(")
    source = source.replace("torch.ones(512, 4)", "torch.ones(512, 4, dtype=torch.float32)")
    source = source.replace("+ 0.25, -1.0, 1.0)", "+ 0.25, -1.0, 1.0)[:, :4]")
    material = _material(tmp_path, source)
    scaled = [c for c in material.cases if c.label.startswith("scaled")]
    assert scaled and all(c.noise is None for c in scaled)  # mm of a double and a float raises
