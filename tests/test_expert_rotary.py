"""Rotary embeddings through the pointwise family's mapped mode (issue #19): the half-split, rotate and
concatenate pattern read from the ATen graph, run in Triton's CPU interpreter against the reference."""
import importlib.util
import os
from pathlib import Path

import pytest
import torch

os.environ.setdefault("TRITON_INTERPRET", "1")

from opforge.codegen import Unsupported, generate  # noqa: E402
from opforge.codegen.families.pointwise.plan import Plan  # noqa: E402
from opforge.codegen.lower import lower  # noqa: E402
from opforge.harness.spec import load_module, load_spec  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SPECS = ["ops/serving/rotary_neox.py", "ops/serving/rotary_gptj.py",
         "benchmarks/expert_specs/serving/hf_llama_rope_rotate_half.py",
         "benchmarks/expert_specs/serving/hf_gptj_rope_interleaved.py"]


def _candidate(spec: Path, tmp_path: Path, backend: str = "triton"):
    sizes = load_spec(spec, max_elements=None, max_bytes=1 << 30).sizes_used
    return generate(spec.read_text(), spec.stem, sizes, backend=backend)


@pytest.mark.parametrize("spec", SPECS)
def test_rotary_is_one_pointwise_kernel_matching_the_reference(spec, tmp_path):
    path = ROOT / spec
    kernel = _candidate(path, tmp_path)
    assert kernel.family == "pointwise"
    source = tmp_path / "cand.py"
    source.write_text(kernel.render(kernel.space[0]))
    loaded = importlib.util.spec_from_file_location("cand", source)
    cand = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(cand)
    module = load_module(path)
    torch.manual_seed(0)
    ref = module.Model(*module.get_init_inputs())
    new = cand.ModelNew(*module.get_init_inputs())
    new.load_state_dict(ref.state_dict())
    for inputs in module.get_input_variants():  # decode and a ragged prefill: sizes the export never saw
        expected, got = ref(*inputs), new(*inputs)
        for e, g in zip(expected, got):
            assert e.shape == g.shape and e.dtype == g.dtype
            # every op rounded to its dtype as the reference rounds: bit-exact
            torch.testing.assert_close(g, e, rtol=0, atol=0)


def test_q_and_k_are_two_sections_of_one_plan():
    lowered = lower(ROOT / SPECS[0])
    with pytest.raises(Unsupported, match="a view .* of a computed value"):
        Plan(lowered, index_maps=True)  # the chain alone cannot hold it
    plan = Plan(lowered, index_maps=True, sections=True)
    assert len(plan.sections) == 2 and not plan.ops
    # the cache row is gathered by positions: an integer load feeds a load's offset
    loads = [expr for statements, _ in plan.sections for _, expr in statements
             if isinstance(expr, tuple) and expr[0] == "load"]
    assert any(not plan.dtype(plan.region.leaves[e[1]].name).is_floating_point for e in loads)


@pytest.mark.parametrize("backend", ["cuda", "triton_ascend", "ascendc"])
def test_other_backends_refuse_rather_than_crash(backend, tmp_path):
    with pytest.raises(Unsupported):
        _candidate(ROOT / SPECS[0], tmp_path, backend)
