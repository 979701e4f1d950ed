"""Op spec loading: KernelBench files load as-is, bad specs give one clear SpecError line,
CPU runs shrink size constants and say which sizes they used."""
from __future__ import annotations

import pytest

from conftest import ROOT, TINY, write
from harness.errors import SpecError
from harness.spec import load_spec

GIB = 1 << 30


def load(path, max_elements=None, max_bytes=GIB):
    return load_spec(path, max_elements=max_elements, max_bytes=max_bytes)


def test_tiny_spec_loads_with_metadata():
    spec = load(TINY)
    assert spec.name == "tiny_softmax"
    assert spec.n_variants == 2
    assert spec.sizes_used == {"batch_size": 16, "dim": 40}
    assert spec.is_float32 and len(spec.sha256) == 64


def test_name_defaults_to_file_stem(tmp_path):
    source = TINY.read_text().replace('OPFORGE = dict(name="tiny_softmax", tags=["softmax"])', "")
    spec = load(write(tmp_path / "my_op.py", source))
    assert spec.name == "my_op"


def test_kernelbench_style_file_loads_as_is(tmp_path):
    source = '''import torch
import torch.nn as nn

class Model(nn.Module):
    """Simple model that performs a single square matrix multiplication (C = A * B)"""
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)

N = 2048 * 2

def get_inputs():
    A = torch.rand(N, N)
    B = torch.rand(N, N)
    return [A, B]

def get_init_inputs():
    return []  # No special initialization inputs needed
'''
    spec = load(write(tmp_path / "1_Square_matrix_multiplication_.py", source), max_elements=1 << 19)
    assert spec.name == "1_Square_matrix_multiplication_"
    assert spec.sizes_declared == {"N": 4096}
    assert spec.sizes_used["N"] < 4096  # shrunk for the CPU
    assert 3 * spec.sizes_used["N"] ** 2 <= 1 << 19


def test_shrinking_halves_largest_constants_until_the_budget_fits():
    spec = load(ROOT / "ops" / "softmax.py", max_elements=1 << 19)
    used = spec.sizes_used
    assert used != spec.sizes_declared
    assert 2 * used["batch_size"] * used["dim"] <= 1 << 19  # input and output counted
    assert all(v >= 16 for v in used.values())


def test_small_constants_are_semantics_and_never_shrunk(tmp_path):
    source = TINY.read_text().replace("dim = 40", "dim = 4000\nreduce_dim = 1").replace(
        "torch.softmax(x, dim=-1)", "torch.softmax(x, dim=reduce_dim)")
    spec = load(write(tmp_path / "s.py", source), max_elements=1000)
    assert spec.sizes_used["reduce_dim"] == 1


@pytest.mark.parametrize("body, message", [
    ("def broken(:\n", "line 1: syntax error"),
    ("import torch\nx = 1\n", "no `class Model(torch.nn.Module)` found"),
    ("import torch\nclass Model(torch.nn.Module):\n    pass\n", "get_inputs() is missing"),
    ("import torch\nclass Model(torch.nn.Module):\n    pass\ndef get_inputs():\n    raise ValueError('nope')\n",
     "get_inputs() raised ValueError: nope"),
    ("import torch\nclass Model(torch.nn.Module):\n    pass\ndef get_inputs():\n    return ['a string']\n",
     "get_inputs() returned no tensors"),
    ("import torch\nclass Model(torch.nn.Module):\n    pass\ndef get_inputs():\n    return 3\n",
     "get_inputs() must return a list"),
    ("import torch\nraise RuntimeError('boom')\n", "importing the spec failed: RuntimeError: boom"),
    ("import torch\nclass Model(torch.nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
     "def get_inputs():\n    return [torch.randn(3)]\n", "Model(*get_init_inputs()) raised TypeError"),
    ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
     "def get_inputs():\n    return [torch.randn(100000, 100000)]\n", "need 74.5 GiB (limit 1.0 GiB)"),
])
def test_bad_specs_give_one_clear_line(tmp_path, body, message):
    with pytest.raises(SpecError) as info:
        load(write(tmp_path / "bad.py", body), max_elements=1 << 19)
    text = str(info.value)
    assert message in text
    assert "\n" not in text and str(tmp_path / "bad.py") in text


def test_missing_file(tmp_path):
    with pytest.raises(SpecError, match="spec file not found"):
        load(tmp_path / "nope.py")


def test_every_suite_spec_loads_with_irregular_variants():
    for path in sorted((ROOT / "ops").glob("*.py")):
        spec = load(path, max_elements=1 << 19, max_bytes=2 * GIB)
        assert spec.n_variants >= 3, path
        assert spec.is_float32, path
