"""Default init leaves a norm's weight at ones and bias at zeros: the judge spreads such identities
(harness/stress.py spread_identities), so a kernel that drops the affine map fails where it passed."""
from __future__ import annotations

import textwrap

from opforge.harness.verify import VerifyOptions, verify
from conftest import ROOT

SPEC = """
import torch

class Model(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = torch.nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, x):
        return self.norm(x)

batch_size = 8
hidden = 40

def get_inputs():
    return [torch.randn(batch_size, hidden)]

def get_init_inputs():
    return [hidden]
"""
KNOWN_GOOD = ROOT / "opforge" / "backends" / "triton" / "knowledge" / "layer_norm.py"


def test_a_kernel_dropping_the_norms_affine_map_fails_and_the_known_good_one_passes(tmp_path):
    spec = tmp_path / "ln_small.py"
    spec.write_text(textwrap.dedent(SPEC))
    source = KNOWN_GOOD.read_text()
    assert source.count("(x - mean) * rstd * w + b") == 1
    dropped = tmp_path / "no_affine.py"
    dropped.write_text(source.replace("(x - mean) * rstd * w + b", "(x - mean) * rstd"))
    options = VerifyOptions(seed=5, device="cpu")
    wrong = verify(spec, dropped, options)
    assert not wrong["correct"] and wrong["reasons"][0].startswith("mismatch: variant 0"), wrong["reasons"]
    good = verify(spec, KNOWN_GOOD, options)
    assert good["correct"], good["reasons"]
