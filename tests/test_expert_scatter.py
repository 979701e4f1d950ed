"""The expert on index writes (issue #19): aten.index_put with integer index tensors, a boolean keep
mask in front (vLLM's slot mapping, padding slots -1 skipped) and index_copy_, written in place into
the arguments the reference mutates. Candidates run under Triton's interpreter in a process of their
own and must leave the mutated arguments bit for bit as the reference does, on every input variant,
through non-contiguous targets too."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT
from opforge.codegen import Unsupported, generate
from opforge.codegen.families.scatter.plan import Plan
from opforge.codegen.lower import lower
from opforge.harness.spec import load_spec

SERVING = ROOT / "ops" / "serving"
VARIANTS = ROOT / "benchmarks" / "expert_specs" / "serving"
SPECS = [SERVING / "reshape_and_cache.py", VARIANTS / "kv_cache_index_copy.py",
         VARIANTS / "reshape_and_cache_paged.py", VARIANTS / "paged_cache_hnd.py"]

# Runs ModelNew against Model on the spec's inputs and variants (and `extra`, a list of input lists
# built by a snippet); prints, per input list, whether forward returned None and every argument
# (mutated or not) equals the reference's afterwards, bit for bit.
COMPARE = '''
import importlib.util, json, torch
from opforge.harness.spec import load_module
spec = load_module({spec!r})
loader = importlib.util.spec_from_file_location("candidate", {candidate!r})
cand = importlib.util.module_from_spec(loader)
loader.loader.exec_module(cand)
torch.manual_seed(0)
lists = [spec.get_inputs(), *getattr(spec, "get_input_variants", list)()]
{extra}
result = []
for inputs in lists:
    ref = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    new = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    ref_out = spec.Model()(*ref)
    views = [x for x in new]
    {transform}
    out = cand.ModelNew()(*views)
    result.append(out is None and all(torch.equal(a, b) for a, b in zip(ref, new)))
print(json.dumps(result))
'''


def _candidate(tmp_path, spec_path, config: int = 0):
    spec = load_spec(spec_path, max_elements=None, max_bytes=1 << 30)
    kernel = generate(spec_path.read_text(), spec_path.stem, spec.sizes_used)
    path = tmp_path / f"{spec_path.stem}_{config}_candidate.py"
    path.write_text(kernel.render(kernel.space[config]))
    return path, kernel


def _compare(spec_path, candidate, extra: str = "", transform: str = "") -> list[bool]:
    script = COMPARE.format(spec=str(spec_path), candidate=str(candidate), extra=extra,
                            transform=transform or "pass")
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                          timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _spec(tmp_path, body: str, mutates: list[str], inputs: str, name: str = "op"):
    path = tmp_path / f"{name}.py"
    path.write_text("import torch\n\n"
                    f"OPFORGE = dict(name={name!r}, mutates={mutates!r})\n\n\n"
                    "class Model(torch.nn.Module):\n" + textwrap.indent(textwrap.dedent(body), "    ")
                    + f"\n\ndef get_inputs():\n    return {inputs}\n\n\ndef get_init_inputs():\n    return []\n")
    return path


# ---- lowering: the export's input mutations --------------------------------------------------

def test_lowering_names_the_mutated_arguments_and_returns_nothing():
    lowered = lower(SERVING / "reshape_and_cache.py")
    assert set(lowered.mutations) == {"key_cache", "value_cache"}
    assert all(str(n.target) == "aten.index_put.default" for n in lowered.mutations.values())
    assert lowered.outputs == []  # forward returns None; the caches are the result


def test_lowering_of_a_pure_op_has_no_mutations():
    lowered = lower(SERVING / "silu_and_mul.py")
    assert lowered.mutations == {} and len(lowered.outputs) == 1


# ---- the plan ----------------------------------------------------------------------------------

def test_plan_reads_the_slot_mapping_writes_as_one_masked_group():
    plan = Plan(lower(SERVING / "reshape_and_cache.py"))
    assert len(plan.groups) == 1
    group = plan.groups[0]
    assert str(group.mask.target) == "aten.ge.Scalar" and group.rows_rank == 1
    assert [(w.target, w.dims, w.rest) for w in group.writes] == [("key_cache", (0, 1), (2, 3)),
                                                                  ("value_cache", (0, 1), (2, 3))]
    assert [leaf.node.name for leaf in group.rows.leaves] == ["slot_mapping"]  # one load per row
    assert all(leaf.compacted for w in group.writes for leaf in w.values.leaves)


def test_plan_of_index_copy_puts_the_rows_at_the_sequence_dim():
    plan = Plan(lower(VARIANTS / "kv_cache_index_copy.py"))
    assert len(plan.groups) == 1 and plan.groups[0].mask is None  # both caches share `positions`
    assert [(w.dims, w.adjacent, w.rest) for w in plan.groups[0].writes] == [((1,), True, (0, 2, 3))] * 2


def test_plan_of_a_split_index_puts_the_rows_first():
    write = Plan(lower(VARIANTS / "reshape_and_cache_paged.py")).groups[0].writes[0]
    assert write.dims == (0, 3) and not write.adjacent and write.rest == (1, 2, 4)


# ---- end to end under the interpreter ----------------------------------------------------------

@pytest.mark.parametrize("spec_path", SPECS, ids=lambda p: p.stem)
def test_candidate_writes_the_caches_in_place_like_the_reference(tmp_path, spec_path):
    candidate, kernel = _candidate(tmp_path, spec_path)
    assert kernel.family == "scatter"
    source = candidate.read_text()
    assert "torch.where" not in source and "nonzero" not in source  # the mask is read by the kernel
    assert all(_compare(spec_path, candidate))


def test_padding_slots_are_skipped_and_stale_rows_kept(tmp_path):
    """Every slot -1: nothing written; a cache block no slot maps to keeps its stale contents."""
    spec_path = SERVING / "reshape_and_cache.py"
    candidate, _ = _candidate(tmp_path, spec_path, config=1)
    extra = "lists = [lists[2], [*lists[2][:4], torch.full_like(lists[2][4], -1)]]"
    assert _compare(spec_path, candidate, extra=extra) == [True, True]


def test_a_non_contiguous_cache_is_written_where_it_lies(tmp_path):
    """The caches as column slices of wider buffers: written through their strides, in place."""
    spec_path = SERVING / "reshape_and_cache.py"
    candidate, _ = _candidate(tmp_path, spec_path, config=2)
    transform = ("wide = [torch.cat([t, torch.zeros_like(t)], dim=-1) for t in new[2:4]]\n"
                 "    views = [*new[:2], *(w[..., :new[2].shape[-1]] for w in wide), new[4]]\n"
                 "    new = views")
    assert all(_compare(spec_path, candidate, transform=transform))


def test_negative_indices_wrap_and_floor_division_rounds_down(tmp_path):
    """cache[idx // 3, idx % 3] = v with idx in [-6, 6): Python's floor division and modulo, then
    torch's negative indices counted from the end; fp32 values through a scaling chain."""
    spec_path = _spec(tmp_path, """
        def forward(self, cache, idx, v, scale):
            cache[idx // 3, idx % 3] = v * scale + 1.0
        """, ["cache"], "[torch.randn(4, 3, 5), torch.randperm(12) - 6, torch.randn(12, 5), torch.randn(5)]")
    candidate, _ = _candidate(tmp_path, spec_path)
    assert all(_compare(spec_path, candidate))


def test_chained_writes_into_one_cache_keep_their_order(tmp_path):
    """Two writes into the same argument, the second overwriting some rows: two kernels, in order."""
    spec_path = _spec(tmp_path, """
        def forward(self, cache, a, b, ia, ib):
            cache[ia] = a
            cache[ib] = b
        """, ["cache"], "[torch.randn(10, 4), torch.randn(3, 4), torch.randn(2, 4), "
                        "torch.tensor([1, 4, 7]), torch.tensor([4, 9])]")
    candidate, kernel = _candidate(tmp_path, spec_path)
    assert kernel.kernels == 2
    assert all(_compare(spec_path, candidate))


def test_scatter_along_a_dim_reads_src_where_the_index_has_elements(tmp_path):
    """cache.scatter_(2, index, src) with a transposed (non-contiguous) index smaller than src, and
    scatter_ of a number: each element's own coordinates, its index along the dim."""
    spec_path = _spec(tmp_path, """
        def forward(self, cache, idx, new, other):
            cache.scatter_(2, idx, new * 2.0)
            other.scatter_(2, idx[:, :, 0], 0.5)  # repeated indices write the same number
        """, ["cache", "other"],
        "[torch.randn(2, 3, 10, 4), torch.stack([torch.randperm(10)[:6] for _ in range(24)]).view(2, 3, 4, 6)"
        ".transpose(2, 3), torch.randn(2, 3, 7, 4), torch.randn(2, 3, 10)]")
    candidate, kernel = _candidate(tmp_path, spec_path)
    assert kernel.family == "scatter" and kernel.kernels == 2
    assert all(_compare(spec_path, candidate))


# ---- what the family refuses -------------------------------------------------------------------

@pytest.mark.parametrize("body, mutates, inputs, reason", [
    ("def forward(self, cache, idx, v):\n    cache.index_put_((idx,), v, accumulate=True)\n",
     ["cache"], "[torch.randn(8, 4), torch.tensor([1, 1, 3]), torch.randn(3, 4)]", "accumulate=True"),
    ("def forward(self, cache, idx, v):\n    cache[idx] = v\n    return cache.sum()\n",
     ["cache"], "[torch.randn(8, 4), torch.tensor([1, 3]), torch.randn(2, 4)]", "returns values"),
    ("def forward(self, cache, idx, v):\n    cache[idx] = v + cache[0]\n",
     ["cache"], "[torch.randn(8, 4), torch.tensor([1, 3]), torch.randn(2, 4)]", "read as well as written"),
    ("def forward(self, cache, rows, idx, v):\n    cache[rows[idx]] = v\n",
     ["cache"], "[torch.randn(8, 4), torch.tensor([5, 6, 7]), torch.tensor([0, 2]), torch.randn(2, 4)]",
     "gather"),
    ("def forward(self, cache, idx, v):\n    cache.scatter_(1, idx, v, reduce='add')\n",
     ["cache"], "[torch.randn(4, 8), torch.tensor([[1, 3]] * 4), torch.randn(4, 2)]", "reduce"),
])
def test_unsupported_writes_say_why(tmp_path, body, mutates, inputs, reason):
    lowered = lower(_spec(tmp_path, body, mutates, inputs))
    with pytest.raises(Unsupported, match=reason):
        Plan(lowered)
