"""Op spec loading: KernelBench files load as-is, bad specs give one clear SpecError line,
CPU runs shrink size constants (the spec run again, so derived values follow) and say which sizes
they used; specs whose inputs are built from data are sized by a bounded real call."""
from __future__ import annotations

import ast
import json

import pytest
import torch

import opforge.harness.spec as spec_module
from conftest import DATA, KERNELS, ROOT, TINY, write
from opforge.harness import judge
from opforge.harness.errors import SpecError
from opforge.harness.judge import Reference
from opforge.harness.sizes import size_constants, with_sizes
from opforge.harness.spec import load_spec
from test_cli import assert_one_line_error, opforge

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


# Specs whose inputs are built from data, and specs with values derived from their size constants.
DATA_SPECS = DATA / "data_specs"


def test_inputs_built_from_data_are_sized_by_a_real_call_and_shrunk():
    spec = load(DATA_SPECS / "paged_attention.py", max_elements=1 << 19)
    used = spec.sizes_used
    assert spec.sizes_declared["max_seq_len"] == 512 and used["max_seq_len"] < 512
    assert used["block_size"] == 16 and used["batch_size"] == 8  # under 32: kept
    ref = Reference(spec, "cpu")
    inputs = ref.inputs(seed=1)[0]
    q, k_cache, v_cache, block_tables, seq_lens = inputs
    assert q.shape == (used["batch_size"], used["num_heads"], used["head_dim"])
    assert k_cache.shape == (8 * block_tables.shape[1], used["block_size"], used["num_heads"], used["head_dim"])
    assert int(seq_lens.max()) <= used["max_seq_len"]
    assert sum(t.numel() for t in inputs) <= 1 << 19 < 4 * sum(t.numel() for t in inputs)  # shrunk to fit
    _entry, model = ref.model(seed=1)
    assert ref.run(model, [q, k_cache, v_cache, block_tables, seq_lens])[0].shape == q.shape


def test_a_spec_with_inputs_built_from_data_verifies_through_the_cli(monkeypatch):
    monkeypatch.setenv("OPFORGE_CPU_MAX_ELEMENTS", str(1 << 15))  # few elements: the interpreter is quick
    result = opforge("verify", str(DATA_SPECS / "paged_attention.py"), str(KERNELS / "paged_attention.py"),
                     "--json", "--device", "cpu", "--trials", "1", "--seed", "3")
    verdict = json.loads(result.stdout)
    assert result.returncode == 0, verdict["reasons"]
    assert verdict["sizes"]["used"]["max_seq_len"] < 512 and verdict["sizes"]["declared"]["max_seq_len"] == 512
    assert any(row["case"].startswith("larger") and row["status"] == "passed" for row in verdict["stress"]), verdict["stress"]


def test_shrinking_runs_the_spec_again_so_derived_values_follow():
    spec = load(DATA_SPECS / "derived_sizes.py", max_elements=1 << 19)
    used = spec.sizes_used
    assert set(spec.sizes_declared) == {"batch_size", "in_features", "out_features"}  # hidden is derived
    assert used["out_features"] < 1024 and used["batch_size"] < 2048
    ref = Reference(spec, "cpu")
    (x,), = ref.inputs(seed=0)
    assert x.shape == (used["batch_size"], used["in_features"])
    entry, model = ref.model(seed=0)
    assert entry["init"] == [used["in_features"], used["out_features"], 2 * used["out_features"], (used["out_features"],)]
    assert ref.run(model, [x])[0].shape == (used["batch_size"], used["out_features"])  # no broadcast error
    assert 2 * x.numel() <= 1 << 19


def test_the_larger_hidden_shape_grows_derived_values_with_the_constants():
    spec = load(DATA_SPECS / "derived_inputs.py", max_elements=1 << 19)
    material = judge.prepare(spec, seed=5, trials=1, device="cpu")
    larger = [c for c in material.cases if c.label.startswith("larger")]
    assert len(larger) == 2, material.skipped  # batch_size and width, each grown alone
    for case in larger:
        grown = dict(part.split("=") for part in case.label.split(" (")[0].split()[1:])
        x, w = case.inputs
        assert x.shape == (int(grown["batch_size"]), 2 * int(grown["width"])) and w.shape == (x.shape[1],)
    assert larger[1].inputs[0].shape[1] == 2 * (2 * spec.sizes_used["width"] + 1)


def test_size_constants_are_the_literal_assignments_bound_once():
    tree = ast.parse("import torch\nN = 2048 * 2\nM: int = -(1 << 4)\nhidden = 4 * N\nshape = (N,)\n"
                     "flag = True\ntwice = 32\ntwice = 64\nlooped = 16\nfor looped in range(3):\n    pass\n"
                     "def f():\n    global g\n    local = 7\n    g = 5\ng = 128\nlocal = 99\n")
    assert size_constants(tree) == {"N": 4096, "M": -16, "local": 99}
    rewritten = ast.unparse(with_sizes(tree, {"N": 64, "hidden": 3}))
    assert "N = 64\n" in rewritten and "hidden = 4 * N" in rewritten


IDENTITY = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n"


def test_a_really_broken_data_spec_gives_one_clear_line_and_exit_2(tmp_path):
    body = ("n = 512\ndef get_inputs():\n    lens = torch.randint(1, n, (4,))\n"
            "    return [torch.zeros(int(lens.max()))[n + 5]]\n")
    bad = write(tmp_path / "bad.py", IDENTITY + body)
    with pytest.raises(SpecError) as info:
        load(bad, max_elements=1 << 19)
    assert "get_inputs() raised IndexError" in str(info.value) and "\n" not in str(info.value)
    assert_one_line_error(opforge("verify", str(bad), str(KERNELS / "good.py"), "--device", "cpu"),
                          "get_inputs() raised IndexError")


def test_a_real_sizing_call_stops_before_allocating_past_the_limit(tmp_path):
    body = "def get_inputs():\n    rows = int(torch.tensor(100000))\n    return [torch.randn(rows, 100000)]\n"
    with pytest.raises(SpecError, match="stopped: it allocates more than 1.0 GiB; lower the size constants"):
        load(write(tmp_path / "huge.py", IDENTITY + body), max_elements=1 << 19)  # 37 GiB were it allocated


def test_a_real_sizing_call_stops_at_its_time_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(spec_module, "SIZING_SECONDS", 0.5)
    body = "def get_inputs():\n    n = int(torch.tensor(3))\n    while True:\n        torch.zeros(n)\n"
    with pytest.raises(SpecError, match="stopped: it ran longer than 0.5 s"):
        load(write(tmp_path / "slow.py", IDENTITY + body), max_elements=1 << 19)


def test_a_reference_that_returns_nothing_and_mutates_nothing_is_the_specs_error(tmp_path):
    source = ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        x.mul(2)\n"
              "def get_inputs():\n    return [torch.randn(8, 8)]\ndef get_init_inputs():\n    return []\n")
    spec = load(write(tmp_path / "nothing.py", source))
    with pytest.raises(judge.ReferenceError_, match="returns nothing and declares no in-place argument"):
        judge.prepare(spec, seed=0, trials=1, device="cpu")


def test_quantised_operands_make_an_op_not_float32(tmp_path):
    """An op given int8 or float8 tensors multiplies them at their own width (int8/FP8 tensor cores): the
    float32 precision rules would refuse exactly that. Integer index inputs leave a float32 op float32."""
    body = ("import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, a, s):\n        return a.float() * s\n\n"
            "def get_inputs():\n    return [torch.ones(4, dtype=torch.{dtype}), torch.rand(4)]\n\n"
            "def get_init_inputs():\n    return []\n")
    flags = {dtype: load_spec(write(tmp_path / f"q_{dtype}.py", body.format(dtype=dtype)), max_elements=None,
                              max_bytes=1 << 20).is_float32
             for dtype in ("int8", "float8_e4m3fn", "int64", "float32")}
    assert flags == {"int8": False, "float8_e4m3fn": False, "int64": True, "float32": True}


def test_scaled_stress_leaves_float8_inputs_as_they_are():
    """×1e3 of an e4m3 tensor is NaN past 448: the scaled case multiplies the wider floats only."""
    from opforge.harness import stress
    q, s = torch.ones(3).to(torch.float8_e4m3fn), torch.ones(3)
    out = stress.scaled([q, s], 1e3)
    assert out[0] is q and torch.equal(out[1], s * 1e3)
    assert stress.scaled([q], 1e3) is None
