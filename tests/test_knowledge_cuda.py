"""The known-good CUDA kernels the drafter reads (opforge/backends/cuda/knowledge/<op>.py) are what they claim:
each passes the CUDA static checks, compiles for sm_90 without spills, and matches its spec's Model
on every input variant in opforge's CUDA emulator (three thread schedules, guarded buffers). The
full ladder (`opforge verify --backend cuda`) on each is benchmarks/cuda_backend.py's job."""
from __future__ import annotations

import ast
import importlib.util

import pytest
import torch

from conftest import ROOT
from opforge.backends.cuda.static import check_cuda_candidate

KNOWLEDGE = ROOT / "opforge" / "backends" / "cuda" / "knowledge"
OPS = sorted(p.stem for p in KNOWLEDGE.glob("*.py") if not p.stem.startswith("_"))


def load(path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cuda_src(op: str) -> str:
    tree = ast.parse((KNOWLEDGE / f"{op}.py").read_text())
    return next(ast.literal_eval(n.value) for n in tree.body
                if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "CUDA_SRC")


def test_every_cuda_example_has_a_suite_spec():
    assert len(OPS) >= 10
    assert all((ROOT / "ops" / f"{op}.py").is_file() for op in OPS), OPS


def test_the_device_benchmark_finds_every_cuda_example():
    """benchmarks/cuda_backend.py (run by scripts/gpu_check.sh, never by make test) verifies and times
    these kernels on the GPU: it must find them where the backend's folder keeps them (after the
    tree moved, it looked in the old place and benchmarked nothing on the H200)."""
    bench = load(ROOT / "benchmarks" / "cuda_backend.py", "cuda_backend_bench")
    assert bench.cuda_ops() == OPS


@pytest.mark.parametrize("op", OPS)
def test_a_cuda_example_passes_the_static_checks(op):
    report = check_cuda_candidate((KNOWLEDGE / f"{op}.py").read_text(), float32_spec=True)
    assert report.format == "opforge" and not report.reasons, report.reasons
    assert report.kernels and report.launchers == [f"{op}_launch"]


@pytest.mark.parametrize("op", OPS)
def test_a_cuda_example_compiles_for_sm_90_without_spills(op, tmp_path):
    from opforge.backends.cuda.nvcc import compile_cubin
    from opforge.backends.cuda.toolchain import find_nvcc

    if find_nvcc() is None:
        pytest.skip("no nvcc on this machine (make setup installs NVIDIA's compiler wheels)")
    kernels = compile_cubin(cuda_src(op), 90, cache_dir=str(tmp_path))["kernels"]
    assert kernels and all(k["arch"] == "sm_90" and k["registers"] for k in kernels), kernels
    assert all(k["spill_stores"] == 0 and k["spill_loads"] == 0 for k in kernels), kernels


@pytest.mark.parametrize("op", OPS)
def test_a_cuda_example_matches_its_spec_in_the_emulator(op):
    spec = load(ROOT / "ops" / f"{op}.py", f"spec_{op}")
    candidate = load(KNOWLEDGE / f"{op}.py", f"cuda_{op}")
    torch.manual_seed(0)
    reference = spec.Model(*spec.get_init_inputs())
    new = candidate.ModelNew(*spec.get_init_inputs())
    new.load_state_dict(reference.state_dict())
    for inputs in spec.get_input_variants():
        with torch.no_grad():
            want, got = reference(*inputs), new(*inputs)
        shapes = [tuple(x.shape) for x in inputs]
        assert got.shape == want.shape and got.dtype == want.dtype, (shapes, got.shape, got.dtype)
        torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5, msg=lambda m: f"{op} {shapes}: {m}")
