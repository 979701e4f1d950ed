"""The expert's attention family (codegen/families/attention/, emit/triton/attention.py): what the plan
reads from the ATen graph (GQA as a head mapping, a paged cache through its block table, causal,
padding and packed-sequence masks), the generated kernel against the reference on every input variant
under the Triton interpreter, one spec through the real harness, and what it refuses."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from conftest import ROOT, write
from opforge.codegen import generate
from opforge.codegen.families.attention.plan import Plan
from opforge.codegen.lower import Unsupported, lower
from opforge.harness.spec import load_module, load_spec
from opforge.harness.verify import VerifyOptions, prepare, verify

SERVING = ROOT / "ops" / "serving"
EXTRA = ROOT / "benchmarks" / "expert_specs" / "serving"
OPTIONS = VerifyOptions(device="cpu", trials=1, seed=1, sandbox="none")


def _plan(path: Path) -> Plan:
    lowered = lower(path)
    return Plan(lowered, {p.name: p.name for p in lowered.placeholders})


def _kernel_source(path: Path) -> str:
    spec = load_spec(path, max_elements=None, max_bytes=1 << 30)
    kernel = generate(path.read_text(), path.stem, spec.sizes_used)
    assert kernel.family == "attention" and kernel.kernels == 1
    return kernel.render(kernel.space[0])


def _verified(spec_path: Path, source: str, tmp_path: Path) -> dict:
    """The real harness's verdict on the candidate (CPU interpreter, every input variant)."""
    v = verify(spec_path, write(tmp_path / "candidate.py", source), OPTIONS)
    # a wrong kernel is stopped at its first failing call (harness/early.py): what did not run is named
    assert len(v["variants"]) == 1 + len(load_module(spec_path).get_input_variants()) or v.get("not_run"), v["variants"]
    return v


def test_paged_decode_plan_maps_heads_and_reads_the_block_table():
    plan = _plan(SERVING / "paged_decode_attention.py")
    assert plan.m == ()  # one query per sequence
    assert [a.expr for a in plan.n] == ["block_tables.shape[1]", "key_cache.shape[1]"]  # block, row
    assert plan.k.table == plan.v.table == "block_tables"
    # GQA: the query head splits into (kv head, group); the cache has no group dim (stride 0)
    assert [a.expr for a in plan.batch] == ["query.shape[0]", "key_cache.shape[2]",
                                            "(query.shape[1]) // (key_cache.shape[2])"]
    cache_axes = {id(plan.axes.find(a)) for d in plan.k.dims for a in plan.axes.fine(d)}
    assert id(plan.batch[2]) not in cache_axes
    assert plan.bounds.length is not None and plan.bounds.length.name == "seq_lens"
    assert plan.bounds.causal is None and plan.bounds.segments is None


def test_prefill_plan_finds_packed_sequences_and_causality():
    plan = _plan(SERVING / "prefill_attention_causal.py")
    assert plan.bounds.segments == "cu_seqlens" and plan.bounds.causal == "le"
    assert [a.expr for a in plan.m] == ["q.shape[0]"] and [a.expr for a in plan.n] == ["k.shape[0]"]


def test_paged_decode_kernel_reads_lengths_and_tables_at_run_time(tmp_path):
    source = _kernel_source(SERVING / "paged_decode_attention.py")
    assert "tl.load(tab_ptr" in source and "hi = tl.minimum(hi, t0)" in source
    assert "repeat_interleave" not in source and "_round_to_bf16" in source
    v = _verified(SERVING / "paged_decode_attention.py", source, tmp_path)
    assert v["correct"], v["reasons"]


def test_prefill_kernel_runs_one_program_per_packed_sequence(tmp_path):
    source = _kernel_source(SERVING / "prefill_attention_causal.py")
    assert "seq = tl.program_id(2)" in source and "causal" in source
    v = _verified(SERVING / "prefill_attention_causal.py", source, tmp_path)
    assert v["correct"], v["reasons"]


@pytest.mark.parametrize("stem", ["sdpa_causal_gqa_attention", "decode_attention_contiguous_cache"])
def test_engine_style_specs_generate_one_attention_kernel(stem, tmp_path):
    source = _kernel_source(EXTRA / f"{stem}.py")
    v = _verified(EXTRA / f"{stem}.py", source, tmp_path)
    assert v["correct"], v["reasons"]


def test_a_broken_head_mapping_is_caught(tmp_path):
    """The same kernel with the GQA mapping dropped (every query head reads KV head 0) is wrong."""
    source = _kernel_source(SERVING / "paged_decode_attention.py")
    assert "k_base = b1 * s_k2" in source
    broken = source.replace("k_base = b1 * s_k2", "k_base = b1 * 0").replace("v_base = b1 * s_v2", "v_base = b1 * 0")
    v = _verified(SERVING / "paged_decode_attention.py", broken, tmp_path)
    assert not v["correct"] and "mismatch" in " ".join(v["reasons"]), v["reasons"]


MASKED = textwrap.dedent("""\
    import torch


    class Model(torch.nn.Module):
        def forward(self, q, k, v, keep):
            scores = q @ k.transpose(-1, -2) / 4.0
            scores = scores.masked_fill(~keep, float("-inf"))
            return torch.softmax(scores, dim=-1) @ v


    def _inputs(b, s):
        keep = torch.rand(b, 1, s, s) > 0.3
        keep[..., 0] = True  # every query keeps a key
        return [torch.randn(b, 2, s, 16), torch.randn(b, 2, s, 16), torch.randn(b, 2, s, 16), keep]


    def get_inputs():
        return _inputs(2, 40)


    def get_init_inputs():
        return []


    def get_input_variants():
        return [_inputs(1, 1), _inputs(3, 70)]
    """)


def test_a_mask_input_verifies_through_the_harness(tmp_path):
    """fp32 attention with a boolean mask input broadcast over heads, verified by the real harness."""
    spec = write(tmp_path / "masked_attention.py", MASKED)
    loaded, _ = prepare(spec, OPTIONS)
    kernel = generate(spec.read_text(), "masked_attention", loaded.sizes_used)
    assert kernel.family == "attention"
    source = kernel.render(kernel.space[0])
    assert 'input_precision="ieee"' in source
    v = verify(spec, write(tmp_path / "candidate.py", source), OPTIONS)
    assert v["correct"], v["reasons"]
    assert len(v["variants"]) == 3


@pytest.mark.parametrize("stem", ["paged_decode_attention_loop", "prefill_attention_causal_loop"])
def test_data_dependent_python_loops_are_refused(stem):
    path = EXTRA / f"{stem}.py"
    spec = load_spec(path, max_elements=None, max_bytes=1 << 30)
    with pytest.raises(Unsupported, match="data-dependent|tolist|item|could not trace"):
        generate(path.read_text(), stem, spec.sizes_used)


def test_a_softmax_over_queries_is_not_attention(tmp_path):
    spec = write(tmp_path / "wrong_dim.py", MASKED.replace("dim=-1", "dim=-2"))
    lowered = lower(spec)
    with pytest.raises(Unsupported, match="softmax over a dim other than the keys"):
        Plan(lowered, {p.name: p.name for p in lowered.placeholders})
