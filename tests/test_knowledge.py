"""Knowledge retrieval: the notes are well-formed (their Python fragments parse), spec tags come from
the AST without running the spec, and ranking puts the same op first, related ops next, each serving
spec's own note first among the notes, and the GPU-rules note always in."""
from __future__ import annotations

import ast

import pytest

from conftest import ROOT, write
from opforge.knowledge import KnowledgeError, load_examples, load_notes, retrieve, spec_tags
from opforge.knowledge.corpus import notes_dir, parse_note, verified_example

INTERPRETER_NOTE = "backends/triton/notes/interpreter_vs_gpu.md"

KERNELBENCH_GELU = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """Simple model that performs a GELU activation."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x)


batch_size = 16
dim = 16384


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''


def spec(op: str) -> str:
    return (ROOT / "ops" / f"{op}.py").read_text()


def kinds(items, kind):
    return [i for i in items if i.kind == kind]


# --- notes -------------------------------------------------------------------------------------

@pytest.mark.parametrize("backend, minimum", [("triton", 8), ("cuda", 2), ("ascendc", 2)])
def test_every_note_has_a_title_tags_and_substance(backend, minimum):
    paths = sorted(notes_dir(backend).glob("*.md"))
    assert len(paths) >= minimum, f"{backend}: {len(paths)} notes, want at least {minimum}"
    for path in paths:
        lines = path.read_text().splitlines()
        assert lines[0].startswith("# ") and lines[1].startswith("tags:"), path.name
        note = parse_note(path)
        assert note.title and len(note.tags) >= 3, path.name
        assert len(note.text) >= 800 and "```" in note.text, f"{path.name}: too thin or no code snippet"
    assert len(load_notes(backend)) == len(paths)


def test_a_note_without_tags_is_rejected(tmp_path):
    bad = write(tmp_path / "bad.md", "# Title\nno tags line here\nbody\n")
    with pytest.raises(KnowledgeError, match="tags"):
        parse_note(bad)


def test_only_notes_of_the_requested_backend_are_returned():
    for backend in ("triton", "cuda", "ascendc"):
        items = retrieve(spec("softmax"), backend=backend, k=20)
        sources = [i.source for i in kinds(items, "note")]
        assert sources and all(s.startswith(f"backends/{backend}/notes/") for s in sources), sources
    for backend in ("triton", "cuda"):  # and only that backend's known-good kernels
        examples = [i.source for i in kinds(retrieve(spec("softmax"), backend=backend, k=20), "example")]
        assert examples and all(s.startswith(f"backends/{backend}/knowledge/") for s in examples), examples


def test_a_backend_name_cannot_reach_other_folders():
    with pytest.raises(KnowledgeError, match="backend"):
        retrieve(spec("softmax"), backend="../ops")


# --- spec tags ---------------------------------------------------------------------------------

def test_spec_tags_of_softmax_include_its_tags_and_family():
    tags = spec_tags(spec("softmax"))
    assert "softmax" in tags and "reduction" in tags and "row" in tags


def test_spec_tags_never_execute_the_spec(tmp_path):
    marker = tmp_path / "executed"
    source = (f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
              "raise RuntimeError('a spec that fails at import')\n"
              "OPFORGE = dict(name='fused_op', tags=['elementwise', 'gelu'], family='activation')\n")
    assert spec_tags(source) == ["elementwise", "gelu", "activation", "fused_op", "fused", "op"]
    assert not marker.exists()


def test_spec_tags_read_a_dict_literal_and_skip_non_literal_entries():
    source = "X = 3\nOPFORGE = {'name': 'row_sum', 'tags': ['reduction', X], 'family': 'reduction'}\n"
    assert spec_tags(source) == ["reduction", "row_sum", "row", "sum"]  # X is not a literal: skipped


def test_spec_tags_are_empty_without_opforge_or_when_the_spec_does_not_parse():
    assert spec_tags(KERNELBENCH_GELU) == []
    assert spec_tags("def broken(:\n") == []


def test_examples_pair_each_suite_kernel_with_its_spec_tags():
    folder = ROOT / "opforge" / "backends" / "triton" / "knowledge"
    examples = {e.source: e for e in load_examples("triton")}
    assert set(examples) == {f"backends/triton/knowledge/{p.relative_to(folder).as_posix()}" for p in folder.rglob("*.py")}
    assert len({e.op for e in examples.values()}) == len(examples)  # the title names one example
    rms = examples["backends/triton/knowledge/rms_norm.py"]
    assert rms.tags[:2] == ("norm", "rmsnorm") and rms.spec == spec("rms_norm")
    paged = examples["backends/triton/knowledge/serving/paged_decode_attention.py"]
    assert paged.spec == (ROOT / "ops" / "serving" / "paged_decode_attention.py").read_text()
    assert "attention" in paged.tags and "sha256" not in paged.kernel


# --- ranking -----------------------------------------------------------------------------------

def test_rms_norm_ranks_its_own_example_first_then_another_norm():
    items = retrieve(spec("rms_norm"))
    examples = [i.title for i in kinds(items, "example")]
    assert examples[0] == "Known-good Triton kernel for rms_norm"
    # the serving suite's RMSNorms (bf16, fused with the residual add) are closer than LayerNorm
    norms = {f"Known-good Triton kernel for {op}" for op in ("layer_norm", "rms_norm_bf16", "fused_add_rms_norm")}
    assert len(examples) == 3 and set(examples[1:]) <= norms, examples
    first = kinds(items, "example")[0]
    assert first.source == "backends/triton/knowledge/rms_norm.py" and "def _rms_norm_kernel" in first.text


def test_every_suite_op_ranks_its_own_example_first():
    for example in load_examples("triton"):
        first = kinds(retrieve(example.spec), "example")[0]
        assert first.title == f"Known-good Triton kernel for {example.op}", example.op


def test_every_cuda_example_ranks_first_for_its_op_and_the_contract_note_is_always_there():
    examples = load_examples("cuda")
    assert {e.op for e in examples} >= {"softmax", "log_softmax", "rms_norm", "layer_norm", "silu", "gelu_tanh",
                                        "add_mul_relu", "row_sum", "row_max", "row_mean"}
    for example in examples:
        items = retrieve(example.spec, backend="cuda", k=3)
        assert kinds(items, "example")[0].title == f"Known-good CUDA kernel for {example.op}", example.op
        assert "backends/cuda/notes/opforge_contract.md" in [i.source for i in items], example.op
        assert "CUDA_SRC = r" in example.kernel and "load_cuda(CUDA_SRC)" in example.kernel


def test_matmul_gets_the_tl_dot_note():
    notes = [i.source for i in kinds(retrieve(spec("matmul")), "note")]
    assert "backends/triton/notes/tl_dot.md" in notes


def test_a_kernelbench_gelu_without_opforge_ranks_activations_above_matmul(tmp_path):
    source = write(tmp_path / "19_GELU_.py", KERNELBENCH_GELU).read_text()
    items = retrieve(source, k=20)
    examples = [i.title.rsplit(" ", 1)[1] for i in kinds(items, "example")]
    assert examples[:2] in (["gelu_erf", "gelu_tanh"], ["gelu_tanh", "gelu_erf"]), examples
    assert "matmul" not in examples and "bmm" not in examples


def kernelbench(forward: str, init: str = "") -> str:
    return ("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
            "    def __init__(self, dim):\n        super(Model, self).__init__()\n"
            f"        self.dim = dim\n{init}\n    def forward(self, x):\n        return {forward}\n")


def test_a_kernelbench_spec_gets_tags_from_the_words_its_code_uses():
    layer_norm = retrieve(kernelbench("self.ln(x)", "        self.ln = nn.LayerNorm(dim)\n"))
    assert kinds(layer_norm, "example")[0].title == "Known-good Triton kernel for layer_norm"
    matmul = retrieve(kernelbench("torch.matmul(x, x.T)"))
    assert [i.title for i in kinds(matmul, "example")][:2] == [
        "Known-good Triton kernel for matmul", "Known-good Triton kernel for bmm"]
    assert "backends/triton/notes/tl_dot.md" in [i.source for i in matmul]


def test_a_kernelbench_log_softmax_brings_the_softmax_family():
    items = retrieve(kernelbench("torch.log_softmax(x, dim=self.dim)"))
    examples = {i.title.rsplit(" ", 1)[1] for i in kinds(items, "example")}
    assert examples == {"log_softmax", "softmax", "cross_entropy"}, examples


def test_unrelated_examples_do_not_take_the_place_of_notes():
    items = retrieve(kernelbench("torch.cumsum(x, dim=self.dim)"), k=6)
    assert [i.title for i in kinds(items, "example")] == ["Known-good Triton kernel for cumsum"]
    assert "backends/triton/notes/scans.md" in [i.source for i in items]
    relu = retrieve(kernelbench("torch.relu(x)"), k=6)
    assert [i.title for i in kinds(relu, "example")] == ["Known-good Triton kernel for add_mul_relu"]


def test_the_mix_caps_code_and_keeps_notes():
    items = retrieve(spec("softmax"), k=10)
    assert len(items) == 10
    assert len([i for i in items if i.kind in ("example", "history")]) == 3
    assert len(kinds(items, "note")) == 7
    assert [i.score for i in items] == sorted((i.score for i in items), reverse=True)


@pytest.mark.parametrize("k", [1, 2, 3, 6, 9])
def test_k_is_respected_and_the_interpreter_note_is_always_there(k):
    items = retrieve(spec("cumsum"), k=k)
    assert len(items) == k
    assert INTERPRETER_NOTE in [i.source for i in items]
    if k >= 2:
        assert len(kinds(items, "note")) >= 2


def test_k_zero_returns_nothing():
    assert retrieve(spec("cumsum"), k=0) == []


def test_results_are_deterministic():
    history = [("rms_norm", spec("rms_norm"), "# registry rms_norm kernel\n", 1.4)]
    first = retrieve(spec("layer_norm"), k=8, history=history)
    again = retrieve(spec("layer_norm"), k=8, history=iter(history))
    assert first == again


# --- the serving suite ---------------------------------------------------------------------------

# Each vLLM-layout spec of ops/serving/ and the note written for it.
SERVING_NOTES = {
    "prefill_attention_causal": "flash_attention", "paged_decode_attention": "paged_kv_cache",
    "reshape_and_cache": "paged_kv_cache", "rotary_neox": "rotary_embedding", "rotary_gptj": "rotary_embedding",
    "moe_topk_softmax": "moe_routing", "moe_align_permute": "moe_routing",
    "per_token_int8_quant": "quantization", "per_tensor_fp8_quant": "quantization",
    "int8_gemm_scaled": "quantization", "fp8_gemm_scaled": "quantization", "topk_topp_mask": "sampling",
}


@pytest.mark.parametrize("op, note", sorted(SERVING_NOTES.items()))
def test_each_serving_spec_ranks_its_note_first_among_the_notes(op, note):
    items = retrieve((ROOT / "ops" / "serving" / f"{op}.py").read_text(), k=6)
    notes = sorted(kinds(items, "note"), key=lambda i: -i.score)
    assert notes and notes[0].source == f"backends/triton/notes/{note}.md", [(i.source, i.score) for i in notes]
    assert INTERPRETER_NOTE in [i.source for i in items]


def test_the_serving_notes_stay_out_of_unrelated_ops():
    serving = {f"backends/triton/notes/{n}.md" for n in SERVING_NOTES.values()}
    for op in ("softmax", "layer_norm", "matmul", "gelu_tanh", "row_sum"):
        best = max(kinds(retrieve(spec(op), k=6), "note"), key=lambda i: i.score)
        assert best.source not in serving, (op, best.source)


def test_every_python_fragment_in_a_triton_note_parses():
    for path in sorted(notes_dir("triton").glob("*.md")):
        blocks = path.read_text().split("```python\n")[1:]
        for n, block in enumerate(blocks):
            try:
                ast.parse(block.split("```", 1)[0])
            except SyntaxError as exc:
                pytest.fail(f"{path.name}: python block {n}: {exc}")


# --- history -----------------------------------------------------------------------------------

def registry_kernel(op: str) -> str:
    return (ROOT / "opforge" / "backends" / "triton" / "knowledge" / f"{op}.py").read_text() + "\n# variant recorded by a run\n"


# How a run might have recorded rms_norm: a plain KernelBench spec, worded unlike ops/rms_norm.py.
RMS_NORM_KERNELBENCH = '''import torch


class Model(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.features = features

    def forward(self, x):
        return x / torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + 1e-5)
'''


def test_history_in_another_language_is_left_out():
    cuda = (ROOT / "opforge" / "backends" / "cuda" / "knowledge" / "rms_norm.py").read_text() + "\n# variant recorded by a run\n"
    history = [("rms_norm", spec("rms_norm"), registry_kernel("rms_norm"), 1.5),
               ("rms_norm", spec("rms_norm"), cuda, 2.0)]  # each the faster one for the other run
    for backend, wanted in (("triton", "@triton.jit"), ("cuda", "load_cuda(CUDA_SRC)")):
        found = kinds(retrieve(spec("rms_norm"), backend=backend, k=6, history=history), "history")
        assert len(found) == 1 and wanted in found[0].text, (backend, [f.title for f in found])


def test_history_of_the_same_op_outranks_unrelated_history():
    history = [("layer_norm", spec("layer_norm"), registry_kernel("layer_norm"), 3.0),
               ("rms_norm", RMS_NORM_KERNELBENCH, registry_kernel("rms_norm"), 1.2)]
    items = retrieve(spec("rms_norm"), k=6, history=history)
    found = kinds(items, "history")
    assert found, [i.title for i in items]
    assert found[0].title == "Verified kernel for rms_norm from the registry (1.20x vs PyTorch)"
    assert found[0].source == "registry" and found[0].text == registry_kernel("rms_norm")
    ranked = kinds(retrieve(spec("layer_norm"), k=6, history=history), "history")
    assert ranked[0].title.startswith("Verified kernel for layer_norm")


def test_history_keeps_the_fastest_kernel_per_op_and_drops_copies_of_suite_kernels():
    suite_copy = (ROOT / "opforge" / "backends" / "triton" / "knowledge" / "softmax.py").read_text()
    history = [("softmax", spec("softmax"), "# slow\n", 1.1), ("softmax", spec("softmax"), "# fast\n", 2.5),
               ("softmax", spec("softmax"), "# unmeasured\n", None), ("softmax", spec("softmax"), suite_copy, 9.0)]
    found = kinds(retrieve(spec("softmax"), k=6, history=history), "history")
    assert [(h.title, h.text) for h in found] == [
        ("Verified kernel for softmax from the registry (2.50x vs PyTorch)", "# fast\n")]


# --- the serving suite's known-good kernels ---------------------------------------------------------

SERVING_EXAMPLES = ROOT / "opforge" / "backends" / "triton" / "knowledge" / "serving"
# Not generated by the expert (README: the full-row sort, cumsum and slice write of top-p).
NO_SERVING_EXAMPLE = {"topk_topp_mask"}


def _sha256(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_every_serving_op_the_expert_verifies_has_its_example():
    specs = {p.stem for p in (ROOT / "ops" / "serving").glob("*.py")}
    assert {p.stem for p in SERVING_EXAMPLES.glob("*.py")} == specs - NO_SERVING_EXAMPLE


@pytest.mark.parametrize("path", sorted(SERVING_EXAMPLES.glob("*.py")), ids=lambda p: p.stem)
def test_a_serving_example_is_the_kernel_verified_for_its_spec_as_it_is(path):
    """The header's hashes are of the spec and the kernel scripts/serving_examples.py verified: a
    spec edited since, or a kernel touched by hand, needs `make serving-examples` again."""
    hashes, kernel = verified_example(path.read_text())
    assert set(hashes) == {"spec", "kernel"}, f"{path.name}: no verification header (make serving-examples)"
    assert hashes["spec"] == _sha256((ROOT / "ops" / "serving" / path.name).read_text()), f"{path.stem}: spec changed"
    assert hashes["kernel"] == _sha256(kernel), f"{path.stem}: kernel changed after its verification"
    assert "class ModelNew" in kernel and "@triton.jit" in kernel
    ast.parse(path.read_text())


@pytest.mark.parametrize("path", sorted(SERVING_EXAMPLES.glob("*.py")), ids=lambda p: p.stem)
def test_a_serving_example_is_what_the_offline_expert_drafts_for_its_spec(path):
    """The header's hashes can be recomputed by anyone who edits the example: the kernel below it must
    also be, byte for byte, what the offline expert drafts for the spec (the draft
    scripts/serving_examples.py verified), so a hand-edited kernel that was rehashed is caught without
    verifying anything."""
    from opforge.agents.drafters.base import DraftRequest
    from opforge.agents.drafters.expert import ExpertDrafter
    from opforge.harness.verify import CPU_MAX_BYTES, CPU_MAX_ELEMENTS
    from opforge.harness.spec import load_spec

    spec_path = ROOT / "ops" / "serving" / path.name
    spec = load_spec(spec_path, max_elements=CPU_MAX_ELEMENTS, max_bytes=CPU_MAX_BYTES)
    request = DraftRequest(op=spec.name, spec_source=spec_path.read_text(), backend="triton",
                           hardware="cpu/x86_64/triton-interpreter", sizes=dict(spec.sizes_used))
    (draft,) = ExpertDrafter().draft(request)
    assert draft.source is not None, draft.problem
    drafted = draft.source if draft.source.endswith("\n") else draft.source + "\n"
    assert verified_example(path.read_text())[1] == drafted, f"{path.stem}: not the expert's draft (make serving-examples)"


# Engine-style specs the corpus has never seen (benchmarks/expert_specs/serving/) and the serving
# example of the same pattern.
ENGINE_SPECS = {
    "paged_decode_attention_loop": "paged_decode_attention", "hf_llama_rope_rotate_half": "rotary_neox",
    "hf_gptj_rope_interleaved": "rotary_gptj", "reshape_and_cache_paged": "reshape_and_cache",
    "moe_topk_mixtral": "moe_topk_softmax",
}


@pytest.mark.parametrize("stem, example", sorted(ENGINE_SPECS.items()))
def test_an_engine_spec_gets_the_serving_example_of_its_pattern(stem, example):
    source = (ROOT / "benchmarks" / "expert_specs" / "serving" / f"{stem}.py").read_text()
    examples = [i.source for i in kinds(retrieve(source), "example")]
    assert f"backends/triton/knowledge/serving/{example}.py" in examples, examples
