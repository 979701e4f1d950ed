"""The expert's sort family (codegen/families/sort/, backends/triton/emit/sort*.py): a row top-k read from
sort(...)[..., a:b] or topk with its prologue and epilogue fused, and a stable counting sort bounded by
bincount's minlength. Candidates run in Triton's interpreter against the reference (ties, NaN, -0.0,
bf16 rounding, ragged sizes); two are verified by the real harness; what is not taken is named."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from conftest import write
from opforge.codegen import generate
from opforge.backends.triton.emit import sort as sort_emitter
from opforge.codegen.lower import Unsupported, lower
from opforge.backends.triton.static import check_source
from opforge.harness.verify import VerifyOptions, prepare, verify

OPTIONS = VerifyOptions(device="cpu", trials=1, seed=1, sandbox="none")
SPEC = '''import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x):
{body}


def get_inputs():
    return [{inputs}]


def get_init_inputs():
    return [{k}]
'''
# The interpreter is chosen when triton is imported, and the session may have imported it already:
# candidates run in one worker started with TRITON_INTERPRET=1. It saves the outputs, or the error.
WORKER = """import importlib.util, sys, torch
for line in sys.stdin:
    path, inputs, outputs = line.split()
    loader = importlib.util.spec_from_file_location("candidate_" + str(abs(hash(path))), path)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    init, args = torch.load(inputs)
    try:
        torch.save(module.ModelNew(*init)(*args), outputs)
    except Exception as exc:
        torch.save(f"{type(exc).__name__}: {exc}", outputs)
    print("done", flush=True)
"""


@pytest.fixture(scope="module")
def worker():
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONWARNINGS": "ignore"}
    proc = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=env)
    yield proc
    proc.stdin.close()
    proc.wait(timeout=30)


def _spec(tmp_path, body: str, inputs: str = "torch.randn(4, 16)", k: int = 3, name: str = "spec"):
    body = "\n".join("        " + line for line in body.splitlines())
    return write(tmp_path / f"{name}.py", SPEC.format(body=body, inputs=inputs, k=k))


def _run(tmp_path, worker, body: str, inputs: str, cases: list, k: int = 3, title: str = "7-router"):
    """The expert's candidate (generated from `inputs`, run at each case's sizes) against the reference."""
    spec = _spec(tmp_path, body, inputs=inputs, k=k)
    kernel = generate(spec.read_text(), title, {})
    assert kernel.family == "sort"
    path = write(tmp_path / "candidate.py", kernel.render(kernel.space[0]))
    namespace: dict = {}
    exec(compile(spec.read_text(), str(spec), "exec"), namespace)
    results = []
    for i, args in enumerate(cases):
        inputs, outputs = tmp_path / f"in{i}.pt", tmp_path / f"out{i}.pt"
        torch.save(([k], args), inputs)
        worker.stdin.write(f"{path} {inputs} {outputs}\n")
        worker.stdin.flush()
        assert worker.stdout.readline().strip() == "done"
        got = torch.load(outputs)
        try:
            expected = namespace["Model"](k)(*args)
        except RuntimeError as exc:
            expected = f"RuntimeError: {exc}"
        results.append((expected, got))
    return results


def _same(expected, got) -> None:
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(expected) == len(got)
    for e, g in zip(expected, got):
        assert e.shape == g.shape and e.dtype == g.dtype, (e.shape, g.shape, e.dtype, g.dtype)
        torch.testing.assert_close(g, e, rtol=0, atol=0, equal_nan=True)


def _verify(tmp_path, spec) -> dict:
    loaded, _ = prepare(spec, OPTIONS)
    kernel = generate(spec.read_text(), spec.stem, loaded.sizes_used)
    assert kernel.family == "sort"
    source = kernel.render(kernel.space[0])
    assert check_source(source, float32_spec=False).reasons == []
    v = verify(spec, write(tmp_path / "candidate.py", source), OPTIONS)
    assert v["correct"], v["reasons"]
    return v


# --- row top-k -------------------------------------------------------------------------------------

def test_ties_go_to_the_lower_index_as_a_stable_sort_orders_them(tmp_path, worker):
    body = ("order = torch.sort(x, dim=-1, descending=True, stable=True)\n"
            "return order.values[:, :3], order.indices[:, :3]")
    ties = torch.randint(0, 3, (9, 12)).float()  # every row full of equal values
    cases = [[ties], [torch.randint(0, 2, (2, 5)).float()]]
    for expected, got in _run(tmp_path, worker, body, "torch.randn(4, 16)", cases):
        _same(expected, got)


def test_ascending_window_past_the_start_with_nan_inf_and_signed_zeros(tmp_path, worker):
    """torch sorts NaN last ascending, takes -0.0 equal to 0.0 (stable: by index), keeps infinities."""
    body = "order = torch.sort(x, stable=True)\nreturn order.values[:, 2:6], order.indices[:, 2:6]"
    x = torch.tensor([[float("nan"), 0.0, -0.0, 1.0, -float("inf"), 0.0, float("inf"), -0.0],
                      [3.0, float("nan"), -1.0, float("nan"), -0.0, 2.0, 0.0, -2.0]])
    for expected, got in _run(tmp_path, worker, body, "torch.randn(4, 16)", [[x], [torch.randn(3, 37)]]):
        _same(expected, got)


def test_nan_is_largest_in_a_descending_topk(tmp_path, worker):
    body = "return torch.topk(x, 2, dim=-1)"
    x = torch.tensor([[1.0, float("nan"), 5.0, 2.0], [float("-inf"), -1.0, -3.0, -2.0]])
    for expected, got in _run(tmp_path, worker, body, "torch.randn(4, 16)", [[x]], k=2):
        _same(expected, got)


def test_bf16_softmax_rounds_each_op_so_its_ties_match(tmp_path, worker):
    """A softmax in bf16 (no .float()) rounds exp, sum and quotient to bf16: probabilities collide, and
    the stable order of the collided values only matches if the kernel rounds exactly as torch does."""
    body = ("p = torch.softmax(x, dim=-1)\norder = torch.sort(p, dim=-1, descending=True, stable=True)\n"
            "w = order.values[:, :self.k]\nreturn w / w.sum(dim=-1, keepdim=True), order.indices[:, :self.k].int()")
    x = (torch.randn(33, 40) * 0.05).to(torch.bfloat16)
    spec_inputs = "torch.randn(4, 16).to(torch.bfloat16)"
    for expected, got in _run(tmp_path, worker, body, spec_inputs, [[x], [x[:1, :9]]], k=4):
        _same(expected, got)


def test_topk_over_three_dims_of_ints_smallest_first_and_a_full_row_sort(tmp_path, worker):
    cases = [[torch.stack([torch.randperm(19) for _ in range(6)]).view(2, 3, 19)], [torch.randperm(5).view(1, 1, 5)]]
    ints = "torch.randperm(19).repeat(6, 1).view(2, 3, 19)"
    for expected, got in _run(tmp_path, worker, "return torch.topk(x, self.k, largest=False)", ints, cases, k=5):
        _same(expected, got)
    body = "return torch.sort(x * 2.0 - 1.0, dim=-1, descending=True, stable=True).values"
    cases = [[torch.randn(5, 23)], [torch.randn(2, 1)]]
    for expected, got in _run(tmp_path, worker, body, "torch.randn(4, 16)", cases):
        _same(expected, got)


def test_topk_past_the_row_length_fails_like_torch(tmp_path, worker):
    [(expected, got)] = _run(tmp_path, worker, "return torch.topk(x, 4, dim=-1).indices", "torch.randn(4, 16)",
                             [[torch.randn(2, 3)]], k=4)
    assert expected == "RuntimeError: selected index k out of range"
    assert isinstance(got, str) and got.startswith(expected)


def test_router_with_softmax_topk_and_renormalisation_verifies(tmp_path):
    """vLLM's fused_topk in a few lines, generated from the graph (the file name says nothing of it).
    torch.topk orders equal values as it likes, so the stress cases that make ties are off, and the logits
    are fp32 (the perturbed case's noise, rounded to bf16, makes equal probabilities in a row of 24)."""
    body = ("        p = torch.softmax(x.float(), dim=-1)\n        w, i = torch.topk(p, self.k, dim=-1)\n"
            "        return w / w.sum(dim=-1, keepdim=True), i.to(torch.int32)")
    text = SPEC.format(body=body, inputs="torch.rand(64, 24).argsort(dim=-1).float() / 8", k=3)
    spec = write(tmp_path / "9_gate.py", text + 'OPFORGE = dict(stress={"scaled": False, "zeros": False})\n')
    v = _verify(tmp_path, spec)
    assert "_op_9_gate_topk_kernel" in v["launches"]  # a digit-led title made an identifier


# --- counting sort ---------------------------------------------------------------------------------

ALIGN = ("flat = x.reshape(-1).long()\nsorted_ids = torch.sort(flat, stable=True).indices\n"
         "counts = torch.bincount(flat, minlength=self.k)\n"
         "offsets = torch.zeros(self.k + 1, dtype=torch.int64, device=x.device)\n"
         "offsets[1:] = torch.cumsum(counts, 0)\n"
         "return sorted_ids.to(torch.int32), counts.to(torch.int32), offsets.to(torch.int32)")
KEYS = "torch.randint(0, {0}, (10, 3), dtype=torch.int32)"


def test_counting_sort_is_stable_across_blocks_and_ragged_sizes(tmp_path, worker):
    # 3000 keys over 6 bins: many blocks, runs crossing block borders; 1 key; no key at all.
    cases = [[torch.randint(0, 6, (1000, 3), dtype=torch.int32)], [torch.tensor([[5]], dtype=torch.int32)],
             [torch.zeros(0, 2, dtype=torch.int32)], [torch.randint(0, 2, (77, 2), dtype=torch.int32)]]
    for expected, got in _run(tmp_path, worker, ALIGN, KEYS.format(6), cases, k=6):
        _same(expected, got)


def test_argsort_bincount_and_padded_cumsum_forms(tmp_path, worker):
    body = ("flat = x.flatten()\norder = torch.argsort(flat, stable=True)\n"
            "counts = torch.bincount(flat, minlength=self.k)\nends = torch.cumsum(counts, dim=0)\n"
            "return order, counts, F.pad(ends, (1, 0)), torch.cat([torch.zeros(1, dtype=ends.dtype), ends]), "
            "ends - counts")
    cases = [[torch.randint(0, 40, (50, 4))], [torch.randint(0, 3, (9, 1))]]
    for expected, got in _run(tmp_path, worker, body, "torch.randint(0, 40, (12, 4))", cases, k=40):
        _same(expected, got)


def test_keys_outside_minlength_are_refused_at_run_time(tmp_path, worker):
    for bad in (torch.tensor([[0, 6]], dtype=torch.int32), torch.tensor([[-1, 2]], dtype=torch.int32)):
        [(_, got)] = _run(tmp_path, worker, ALIGN, KEYS.format(6), [[bad]], k=6)
        assert isinstance(got, str) and "outside [0, 6)" in got


def test_moe_align_permute_verifies(tmp_path):
    spec = write(tmp_path / "perm.py", SPEC.format(body="\n".join("        " + s for s in ALIGN.splitlines()),
                                                   inputs="torch.randint(0, 16, (300, 4), dtype=torch.int32)", k=16))
    v = _verify(tmp_path, spec)
    assert {"_perm_histogram", "_perm_scan", "_perm_scatter"} <= set(v["launches"])


# --- what is not taken -----------------------------------------------------------------------------

@pytest.mark.parametrize("body, inputs, reason", [
    ("return torch.sort(x, dim=0, stable=True).values[:2]", "torch.randn(4, 16)", "only the last dim"),
    ("return torch.topk(x, 2, sorted=False).values", "torch.randn(4, 16)", "sorted=False"),
    ("return torch.sort(x.view(-1), stable=True).indices", "torch.randn(4, 16)", "bincount's minlength"),
    ("f = x.view(-1)\nreturn torch.argsort(f), torch.bincount(f, minlength=8)",
     "torch.randint(0, 8, (4, 2))", "unstable sort"),
    ("f = x.view(-1)\nreturn torch.sort(f, stable=True).indices, torch.bincount(f)",
     "torch.randint(0, 8, (4, 2))", "without minlength"),
    ("return torch.sort(x, dim=-1, stable=True).values[:, :2] + x[:, :2]", "torch.randn(4, 16)",
     "cannot handle aten.slice.Tensor"),
    ("return torch.topk(x, 2).values + torch.topk(x, 3).values[:, :1]", "torch.randn(4, 16)", "2 sorts"),
])
def test_graphs_it_cannot_take_are_named(tmp_path, body, inputs, reason):
    lowered = lower(_spec(tmp_path, body, inputs=inputs))
    with pytest.raises(Unsupported, match=reason):
        sort_emitter.generate(lowered, "op", {})


def test_a_graph_without_a_sort_is_left_to_the_other_emitters(tmp_path):
    lowered = lower(_spec(tmp_path, "return torch.softmax(x, dim=-1)"))
    with pytest.raises(Unsupported, match="^no sort pattern"):
        sort_emitter.generate(lowered, "op", {})
    assert generate(_spec(tmp_path, "return torch.softmax(x, dim=-1)").read_text(), "op", {}).family == "rowwise"
