"""The serving suite (ops/serving/): every spec loads at CPU sizes, the judge builds its cases, its
metadata says what its inputs and outputs are, and the in-place and exact-compare specs behave."""
from __future__ import annotations

import ast
import functools
import inspect

import pytest
import torch

from conftest import ROOT
from opforge.harness import judge, stress
from opforge.harness.spec import OpSpec, load_spec
from opforge.harness.verify import CPU_MAX_BYTES, CPU_MAX_ELEMENTS

SERVING = ROOT / "ops" / "serving"
SPECS = sorted(p.stem for p in SERVING.glob("*.py"))
REQUIRED = {"fused_add_rms_norm", "silu_and_mul", "gelu_and_mul", "gelu_tanh_and_mul", "rotary_neox",
            "rotary_gptj", "prefill_attention_causal", "paged_decode_attention", "reshape_and_cache",
            "moe_topk_softmax", "moe_align_permute", "per_token_int8_quant", "per_tensor_fp8_quant",
            "int8_gemm_scaled", "fp8_gemm_scaled", "topk_topp_mask",
            "rms_norm_bf16", "linear_bf16"}  # with the ops above: every op of the decoder-layer example
# What each reference returns (then the declared in-place arguments), dtype by dtype.
OUTPUT_DTYPES = {
    "fused_add_rms_norm": ["bfloat16", "bfloat16"], "silu_and_mul": ["bfloat16"], "gelu_and_mul": ["float16"],
    "gelu_tanh_and_mul": ["bfloat16"], "rotary_neox": ["bfloat16", "bfloat16"],
    "rotary_gptj": ["bfloat16", "bfloat16"], "prefill_attention_causal": ["bfloat16"],
    "paged_decode_attention": ["bfloat16"], "reshape_and_cache": ["bfloat16", "bfloat16"],
    "moe_topk_softmax": ["float32", "int32"], "moe_align_permute": ["int32", "int32", "int32"],
    "per_token_int8_quant": ["int8", "float32"], "per_tensor_fp8_quant": ["float8_e4m3fn", "float32"],
    "int8_gemm_scaled": ["bfloat16"], "fp8_gemm_scaled": ["bfloat16"], "topk_topp_mask": ["float32"],
    "rms_norm_bf16": ["bfloat16"], "linear_bf16": ["bfloat16"],
}
PREPARABLE = SPECS


@functools.cache
def loaded(stem: str) -> OpSpec:
    return load_spec(SERVING / f"{stem}.py", max_elements=CPU_MAX_ELEMENTS, max_bytes=CPU_MAX_BYTES)


def forward_params(spec: OpSpec) -> list[str]:
    return list(inspect.signature(spec.module().Model.forward).parameters)[1:]


def reference_outputs(spec: OpSpec, seed: int = 0) -> tuple[list, list, list]:
    """(inputs before the call, inputs after it, flattened outputs) of the main inputs."""
    module = spec.module()
    torch.manual_seed(seed)
    model = module.Model(*module.get_init_inputs())
    before = module.get_inputs()
    after = [x.clone() for x in before]
    with torch.no_grad():
        out = model(*after)
    outs = [] if out is None else list(out) if isinstance(out, (tuple, list)) else [out]
    return before, after, outs


def test_the_suite_has_every_required_op_and_stays_out_of_the_flat_suite():
    assert REQUIRED <= set(SPECS), sorted(REQUIRED - set(SPECS))
    flat = {p.stem for p in (ROOT / "ops").glob("*.py")}
    assert not flat & set(SPECS)  # names stay distinct from ops/*.py, which the default globs take
    assert set(OUTPUT_DTYPES) == set(SPECS)


@pytest.mark.parametrize("stem", SPECS)
def test_spec_loads_with_its_metadata(stem):
    spec = loaded(stem)
    tree = ast.parse((SERVING / f"{stem}.py").read_text())
    doc = ast.get_docstring(tree)
    assert doc and "\n" not in doc.strip() and len(doc) < 130, "a one-line docstring naming the engine op"
    assert spec.name == stem and spec.meta["family"] == "serving" and "serving" in spec.tags
    assert set(spec.input_dtypes) == set(spec.meta["dtypes"]), spec.input_dtypes
    assert spec.n_variants >= 3  # the main inputs and at least two irregular variants
    assert spec.sizes_used and all(v >= 1 for v in spec.sizes_used.values())
    for name in spec.meta.get("fixed_sizes", []):
        assert name not in spec.sizes_used and isinstance(getattr(spec.module(), name), int)
    assert set(spec.meta.get("mutates", [])) <= set(forward_params(spec))


@pytest.mark.parametrize("stem", PREPARABLE)
def test_judge_prepares_every_case_on_a_cpu(stem):
    spec = loaded(stem)
    material = judge.prepare(spec, 1, 1, "cpu")
    trials = [c for c in material.cases if c.kind == "trial"]
    assert len(trials) == spec.n_variants
    for case in trials:  # a spec verified in several dtypes (bf16 and fp32): its outputs follow the inputs'
        floats = {str(t.dtype).removeprefix("torch.") for t in case.inputs
                  if isinstance(t, torch.Tensor) and t.is_floating_point()}
        only = floats.pop() if len(floats) == 1 else None
        want = [only if only and d in spec.meta["dtypes"] else d for d in OUTPUT_DTYPES[stem]]
        assert [str(t.dtype).removeprefix("torch.") for t in case.expected] == want, case.label
    assert len(material.mutates) == len(spec.meta.get("mutates", []))
    kinds = stress.enabled(spec.meta)
    labels = {c.label.split()[0] for c in material.cases if c.kind == "stress"}
    labels |= {s["case"].split()[0] for s in material.skipped}
    if "layouts" in kinds:
        assert "transposed" in labels
    if "scaled" in kinds and any(d.startswith(("float", "bfloat")) for d in spec.input_dtypes):
        assert "scaled" in labels
    assert material.plan and any(step.get("repeat") for step in material.plan)


@pytest.mark.parametrize("stem", SPECS)
def test_reference_mutates_exactly_what_it_declares(stem):
    spec = loaded(stem)
    before, after, outs = reference_outputs(spec)
    mutates = set(spec.meta.get("mutates", []))
    for name, x, y in zip(forward_params(spec), before, after):
        changed = not torch.equal(x.view(torch.uint8) if x.dtype == torch.float8_e4m3fn else x,
                                  y.view(torch.uint8) if y.dtype == torch.float8_e4m3fn else y)
        assert changed == (name in mutates), name
    want = OUTPUT_DTYPES[stem][: len(OUTPUT_DTYPES[stem]) - len(mutates)]
    assert [str(t.dtype).removeprefix("torch.") for t in outs] == want


def test_reshape_and_cache_writes_valid_slots_and_skips_padding():
    key, value, key_cache, value_cache, slots = reference_outputs(loaded("reshape_and_cache"))[1]
    before = reference_outputs(loaded("reshape_and_cache"))[0]
    block = key_cache.shape[1]
    assert (slots == -1).any() and (slots >= 0).any()
    for i, slot in enumerate(slots.tolist()):
        if slot >= 0:
            assert torch.equal(key_cache[slot // block, slot % block], key[i])
            assert torch.equal(value_cache[slot // block, slot % block], value[i])
    written = torch.zeros(key_cache.shape[:2], dtype=torch.bool)
    valid = slots[slots >= 0]
    written[valid // block, valid % block] = True
    assert torch.equal(key_cache[~written], before[2][~written])  # padding and unused slots untouched


def test_paged_decode_matches_contiguous_attention():
    """The paged reference equals plain attention over each sequence's keys laid out contiguously."""
    spec = loaded("paged_decode_attention")
    module = spec.module()
    torch.manual_seed(3)
    query, k_cache, v_cache, tables, lens = module.get_input_variants()[1]
    model = module.Model(*module.get_init_inputs())
    out = model(query, k_cache, v_cache, tables, lens)
    block, group = k_cache.shape[1], query.shape[1] // k_cache.shape[2]
    for b, n in enumerate(lens.tolist()):
        rows = torch.stack([tables[b, t // block].long() * block + t % block for t in range(n)])
        k = k_cache.flatten(0, 1)[rows].float().repeat_interleave(group, dim=1)
        v = v_cache.flatten(0, 1)[rows].float().repeat_interleave(group, dim=1)
        ref = torch.nn.functional.scaled_dot_product_attention(
            query[b].float().unsqueeze(1), k.transpose(0, 1), v.transpose(0, 1), scale=model.scale)
        torch.testing.assert_close(out[b].float(), ref.squeeze(1), atol=1e-2, rtol=1e-2)


def test_prefill_matches_causal_sdpa_per_sequence():
    spec = loaded("prefill_attention_causal")
    module = spec.module()
    torch.manual_seed(4)
    q, k, v, cu = module.get_input_variants()[1]
    model = module.Model(*module.get_init_inputs())
    out = model(q, k, v, cu)
    group = q.shape[1] // k.shape[1]
    for s, e in zip(cu.tolist()[:-1], cu.tolist()[1:]):
        ref = torch.nn.functional.scaled_dot_product_attention(
            q[s:e].float().transpose(0, 1), k[s:e].float().transpose(0, 1).repeat_interleave(group, 0),
            v[s:e].float().transpose(0, 1).repeat_interleave(group, 0), is_causal=True, scale=model.scale)
        torch.testing.assert_close(out[s:e].float(), ref.transpose(0, 1), atol=1e-2, rtol=1e-2)


def test_exact_outputs_do_not_hang_on_rounding():
    """Integer and -inf-mask outputs compare exactly, so the given inputs must keep them away from
    rounding steps: the same reference in float64 gives the same ids, permutation and mask."""
    for stem, exact in (("moe_topk_softmax", [1]), ("topk_topp_mask", [0])):
        module = loaded(stem).module()
        torch.manual_seed(5)
        inputs = module.get_inputs()
        model = module.Model(*module.get_init_inputs())
        outs = model(*inputs)
        wide = model(*[x.double() if x.is_floating_point() else x for x in inputs])
        outs, wide = (outs, wide) if isinstance(outs, tuple) else ((outs,), (wide,))
        for i in exact:
            if outs[i].is_floating_point():
                assert torch.equal(torch.isinf(outs[i]), torch.isinf(wide[i])), stem
            else:
                assert torch.equal(outs[i], wide[i]), stem
    module = loaded("moe_align_permute").module()
    (ids,) = module.get_inputs()
    sorted_ids, counts, offsets = module.Model(*module.get_init_inputs())(ids)
    experts = ids.reshape(-1)[sorted_ids.long()]
    assert bool((experts[1:] >= experts[:-1]).all()) and int(offsets[-1]) == ids.numel()
    same = experts[1:] == experts[:-1]
    assert bool((sorted_ids[1:][same] > sorted_ids[:-1][same]).all())  # stable: slot order within an expert


def test_quantisers_round_trip_within_half_a_step():
    module = loaded("per_token_int8_quant").module()
    x = module.get_inputs()[0]
    q, scales = module.Model()(x)
    assert int(q.abs().max()) == 127 and scales.shape == (x.shape[0], 1)
    assert bool(((q.float() * scales - x.float()).abs() <= 0.5 * scales + 1e-6).all())
    module = loaded("per_tensor_fp8_quant").module()
    x = module.get_inputs()[0]
    q, scale = module.Model()(x)
    assert float(q.float().abs().max()) == 448.0 and scale.shape == (1,)
    err = (q.float() * scale - x.float()).abs()
    assert bool((err <= x.float().abs() * 2 ** -4 + scale * 2 ** -9).all())  # 3 mantissa bits, subnormal step
