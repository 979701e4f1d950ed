"""The exported package's contract with inference-engine adapters, on a registry filled by hand (no
verification: the verdict is recorded as given): every verified dtype combination is recorded and
only those run the kernel, the spec's `implements` keys reach configs/ and metadata.json, and the
package counts the calls that ran its kernel (`stats()`), through the module and torch.ops."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from opforge.exporter import ExportError, export_library
from opforge.registry import Registry

pytestmark = pytest.mark.xdist_group("export_small")

SPEC = '''"""x * weight, rounded to x's dtype."""
import torch

OPFORGE = dict(name="scale_rows", dtypes=["float32", "bfloat16"], implements=IMPLEMENTS)


class Model(torch.nn.Module):
    def forward(self, x, weight):
        return (x.float() * weight.float()).to(x.dtype)


def get_inputs():
    return [torch.randn(4, 8), torch.randn(8)]


def get_init_inputs():
    return []


def get_input_variants():
    return [[torch.randn(3, 8).bfloat16(), torch.randn(8).bfloat16()], [torch.randn(2, 8), torch.randn(8)]]
'''
KERNEL = '''import torch


class ModelNew(torch.nn.Module):
    def forward(self, x, weight):
        return (x.float() * weight.float()).to(x.dtype) + 0  # plain PyTorch: the runtime's choice is what is tested
'''
VERDICT = {"correct": True, "failed_step": None, "reasons": [], "sizes": {"used": {}}}


def export(tmp_path, implements: str = '["vllm:scale_rows"]'):
    with Registry(tmp_path / "reg.db") as reg:
        spec = reg.record_spec("scale_rows", "ops/scale_rows.py", SPEC.replace("IMPLEMENTS", implements))
        cand = reg.record_candidate(spec, KERNEL, "triton", "user")
        reg.record_evaluation(cand, "cpu/x86_64/triton-interpreter", {}, VERDICT)
        reg.promote(cand)
        return export_library(reg, tmp_path / "lib")


def test_every_verified_dtype_combination_and_the_implements_keys_are_exported(tmp_path):
    export(tmp_path)
    pkg = tmp_path / "lib" / "kernels_generated"
    config = json.loads((pkg / "configs" / "scale_rows.json").read_text())
    assert config["dtype_sets"] == [["float32", "float32"], ["bfloat16", "bfloat16"]]  # each once, in order
    assert config["implements"] == ["vllm:scale_rows"]
    meta = json.loads((pkg / "metadata.json").read_text())["ops"]["scale_rows"]
    assert meta["implements"] == ["vllm:scale_rows"] and meta["dtype_sets"] == config["dtype_sets"]
    with pytest.raises(ExportError, match="engine op keys"):
        export(tmp_path / "bad", implements='"vllm:scale_rows"')  # a string, not a list


def test_only_verified_dtype_combinations_run_the_kernel_and_calls_are_counted(tmp_path):
    export(tmp_path)
    code = (
        "import torch, kernels_generated as k\n"
        "f32, bf = torch.randn(3, 8), torch.randn(3, 8).bfloat16()\n"
        "k.scale_rows(f32, torch.randn(8)); torch.ops.kernels_generated.scale_rows(bf, torch.randn(8).bfloat16())\n"
        "k.ScaleRows()(f32, torch.randn(8))\n"
        "print(k.stats())\n"
        "k.scale_rows(bf, torch.randn(8))\n"  # both dtypes were verified, this mix was not
        "k.scale_rows(f32.double(), torch.randn(8).double())\n"
        "print(k.stats())\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KERNELS_GENERATED")} | {"TRITON_INTERPRET": "1"}
    ran = subprocess.run([sys.executable, "-c", code], cwd=tmp_path / "lib", env=env, capture_output=True,
                         text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.splitlines() == ["{'kernel_calls': {'scale_rows': 3}, 'fallbacks': {}}",
                                       "{'kernel_calls': {'scale_rows': 3}, 'fallbacks': {'scale_rows': 2}}"]
    assert ("dtypes (x bfloat16, weight float32) given, verified for (x float32, weight float32) "
            "or (x bfloat16, weight bfloat16)") in ran.stderr
    assert "dtypes (x float64, weight float64) given" in ran.stderr


def test_the_committed_library_holds_the_engine_ops_with_their_keys_and_dtypes():
    """kernels_generated/ (make kernels) carries every serving spec that implements an engine op, with
    its keys and float32 beside its 16-bit dtype: what an engine adapter looks up (committed == fresh
    export is tests/test_export_suite.py's)."""
    from conftest import ROOT
    from opforge.exporter.suite import implements, suite_pairs

    configs = ROOT / "kernels_generated" / "kernels_generated" / "configs"
    engine = [spec for spec, _ in suite_pairs() if spec.parent.name == "serving"]
    keys = {k for spec in engine for k in implements(spec)}
    assert {"vllm:rms_norm", "vllm:fused_add_rms_norm", "vllm:silu_and_mul", "vllm:rotary_embedding:neox"} <= keys
    for spec in engine:
        config = json.loads((configs / f"{spec.stem}.json").read_text())
        assert config["implements"] == implements(spec), f"{spec.stem}: run `make kernels`"
        floats = {d for dtypes in config["dtype_sets"] for d in dtypes if d and d.startswith(("float", "bfloat"))}
        assert "float32" in floats and len(floats) >= 2, (spec.stem, config["dtype_sets"])
