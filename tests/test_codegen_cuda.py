"""The expert's CUDA emitter (opforge/backends/cuda/emit/): every suite op of the pointwise and
rowwise families gets a candidate in opforge's CUDA format that passes the CUDA static checks,
compiles with nvcc for sm_90 (ptxas: no spills) and, run on CPU tensors through load_cuda (the
emulator, three thread schedules), matches the spec's Model on its inputs and input variants within
the harness's tolerance. One configuration per op; the emulator caches builds by source hash."""
from __future__ import annotations

import importlib.util
import re

import pytest
import torch

from conftest import ROOT
from opforge.codegen import Unsupported, generate
from opforge.harness.compare import compare_outputs
from opforge.harness.spec import load_spec
from opforge.harness.verify import CPU_MAX_ELEMENTS

POINTWISE = ["add_mul_relu", "gelu_erf", "gelu_tanh", "silu", "softplus", "swiglu"]
ROWWISE = ["cross_entropy", "cumsum", "layer_norm", "log_softmax", "rms_norm", "row_argmax", "row_max",
           "row_mean", "row_sum", "softmax"]


def _spec(op: str):
    return load_spec(ROOT / "ops" / f"{op}.py", max_elements=CPU_MAX_ELEMENTS, max_bytes=1 << 34)


def _candidate(op: str, config_index: int = 0) -> tuple[str, object]:
    spec = _spec(op)
    kernel = generate(spec.source, spec.name, spec.sizes_used, backend="cuda")
    return kernel.render(kernel.space[config_index]), kernel


def _load(source: str, tmp_path, name: str = "candidate"):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_suite_ops_of_the_two_families_are_exactly_these():
    """The lists below are the suite: a new suite op of either family joins them (or fails here)."""
    families = {}
    for path in sorted((ROOT / "ops").glob("*.py")):
        spec = _spec(path.stem)
        families[path.stem] = generate(spec.source, spec.name, spec.sizes_used).family
    assert sorted(op for op, f in families.items() if f == "pointwise") == POINTWISE
    assert sorted(op for op, f in families.items() if f == "rowwise") == ROWWISE


@pytest.mark.parametrize("op", POINTWISE + ROWWISE)
def test_the_cuda_candidate_matches_the_reference_in_the_emulator(op, tmp_path):
    source, kernel = _candidate(op)
    assert kernel.family == ("pointwise" if op in POINTWISE else "rowwise")
    assert "from opforge.cuda import load_cuda" in source and 'extern "C" void' in source
    spec = _spec(op)
    module = spec.module()
    init = module.get_init_inputs() if hasattr(module, "get_init_inputs") else []
    torch.manual_seed(0)
    reference = module.Model(*init).eval()
    candidate = _load(source, tmp_path).ModelNew(*init)
    candidate.load_state_dict(reference.state_dict())
    lists = [module.get_inputs()] + list(getattr(module, "get_input_variants", lambda: [])())
    atol, rtol = (spec.meta.get("atol"), spec.meta.get("rtol"))
    for inputs in lists:
        with torch.no_grad():
            want, got = reference(*inputs), candidate(*inputs)
        problems = [r.problem for r in compare_outputs(want, got, atol, rtol) if r.problem]
        assert not problems, (op, [tuple(getattr(x, "shape", ())) for x in inputs], problems)


@pytest.mark.parametrize("op", POINTWISE + ROWWISE)
def test_the_cuda_candidate_passes_the_static_checks_and_compiles_without_spills(op):
    from opforge.backends.cuda import nvcc, static, toolchain
    source, _ = _candidate(op)
    report = static.check_cuda_candidate(source, float32_spec=True)
    assert report.reasons == [], report.reasons
    if toolchain.find_nvcc() is None:
        pytest.skip("no nvcc on this machine")
    cuda_src = re.search(r'CUDA_SRC = r"""\n(.*?)"""', source, re.S).group(1)
    kernels = nvcc.compile_cubin(cuda_src, arch=90)["kernels"]
    assert kernels and all(k["spill_stores"] == 0 and k["spill_loads"] == 0 for k in kernels), kernels


def test_every_configuration_renders_a_distinct_candidate():
    """The tuning space changes the source (block size, elements per thread), not only a comment."""
    for op in ("silu", "softmax"):
        _, kernel = _candidate(op)
        sources = [re.search(r'CUDA_SRC = r"""(.*?)"""', kernel.render(c), re.S).group(1) for c in kernel.space]
        assert len(kernel.space) >= 4 and len(set(sources)) == len(sources), op


def test_ops_outside_the_two_families_are_unsupported_with_each_emitters_reason():
    spec = _spec("matmul")
    with pytest.raises(Unsupported) as caught:
        generate(spec.source, spec.name, spec.sizes_used, backend="cuda")
    assert "rowwise:" in str(caught.value) and "pointwise:" in str(caught.value) and "aten.mm" in str(caught.value)
    with pytest.raises(Unsupported, match="no expert emitter for backend 'metal'"):
        generate(spec.source, spec.name, spec.sizes_used, backend="metal")


def test_the_expert_drafter_drafts_cuda_for_a_cuda_run():
    from opforge.agents.drafters.base import DraftRequest
    from opforge.agents.drafters.expert import ExpertDrafter
    spec = _spec("softmax")
    request = DraftRequest(op=spec.name, spec_source=spec.source, backend="cuda",
                           hardware="cpu/x86_64/opforge-cuda-emu", sizes=dict(spec.sizes_used), n=2)
    drafts = ExpertDrafter().draft(request)
    assert len(drafts) == 1, "no timings on a CPU: one configuration a round"
    assert "CUDA_SRC = r" in drafts[0].source and "triton" not in drafts[0].source
    assert drafts[0].meta == {"family": "rowwise", "config": {"THREADS": 256}, "kernels": 1}
    gpu = ExpertDrafter().draft(DraftRequest(**{**request.__dict__, "hardware": "cuda/NVIDIA H200/sm_90", "round": 1}))
    assert [d.meta["config"] for d in gpu] == [{"THREADS": 1024}, {"THREADS": 128}]


def test_every_elementwise_op_has_a_cuda_formatter():
    from opforge.backends.cuda.emit.exprs import EXPR
    from opforge.codegen.exprs import ELEMENTWISE
    assert EXPR.keys() == ELEMENTWISE
