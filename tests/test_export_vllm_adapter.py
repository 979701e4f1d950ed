"""The exported package's vLLM adapter (<package>/_vllm.py, from opforge/exporter/vllm_adapter.py):
which ops stand for which vLLM layer and when a call falls back, straight on the code; that the
package ships it and imports no engine; and, in vLLM's own environment, that vLLM's in-tree layers
built after the plugin registered are the adapter's, run the package's ops with the in-tree
values, and fall back with one log line where the kernel does not apply."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from opforge.engines import vllm_check
from opforge.engines.vllm_check import CheckError
from opforge.exporter import export_library, vllm_adapter
from opforge.registry import Registry

pytestmark = pytest.mark.xdist_group("export_small")
DATA = ROOT / "tests" / "data"
VERDICT = {"correct": True, "failed_step": None, "reasons": [], "sizes": {"used": {}}}


def config(n: int, implements: list[str], init=None, dtypes=None, kinds=None) -> dict:
    kinds = kinds or ["tensor"] * n
    return {"inputs": [{"name": f"a{i}", "kind": k, "dtype": "float32", "ranks": [2]} for i, k in enumerate(kinds)],
            "implements": implements, "init_args": [init or [], {}], "dtype_sets": dtypes or [["float32"] * n]}


def test_ops_stand_for_a_vllm_layer_by_their_implements_key_and_the_contract_signature():
    found, notes = vllm_adapter.find_ops({
        "my_norm": config(2, ["vllm:rms_norm"], [1e-6]),
        "three_inputs": config(3, ["vllm:rms_norm"], [1e-6]),  # not the contract's (x, weight)
        "no_eps": config(2, ["vllm:rms_norm"], []),
        "rope": config(4, ["vllm:rotary_embedding:neox"]),
        "rope_sized": config(4, ["vllm:rotary_embedding:gptj"], [128]),  # init args the contract has not
        "gelu": config(1, ["vllm:gelu_tanh_and_mul"], ["tanh"]),
        "gelu_wrong": config(1, ["vllm:gelu_and_mul"], ["tanh"]),
        "scalar": config(1, ["vllm:silu_and_mul"], kinds=["float"]),
        "unknown": config(1, ["vllm:fancy_norm"]),
        "plain": config(1, []), "other_engine": config(1, ["sglang:silu_and_mul"]),
    })
    assert {k: [e.op for e in v] for k, v in found.items()} == {
        "vllm:rms_norm": ["my_norm"], "vllm:rotary_embedding:neox": ["rope"], "vllm:gelu_tanh_and_mul": ["gelu"]}
    assert notes == [
        "three_inputs: declares vllm:rms_norm but takes 3 inputs (tensor, tensor, tensor), vllm:rms_norm takes 2 tensors",
        "no_eps: declares vllm:rms_norm but its init args [] are not one eps, as vllm:rms_norm has",
        "rope_sized: declares vllm:rotary_embedding:gptj but its init args [128] are not "
        "vllm:rotary_embedding:gptj's (none)",
        "gelu_wrong: declares vllm:gelu_and_mul but its init args ['tanh'] are not vllm:gelu_and_mul's",
        "scalar: declares vllm:silu_and_mul but takes 1 inputs (float), vllm:silu_and_mul takes 1 tensors",
        "unknown: vllm:fancy_norm is not an engine op this adapter knows (vllm:rms_norm, vllm:fused_add_rms_norm, "
        "vllm:silu_and_mul, vllm:gelu_and_mul, vllm:gelu_tanh_and_mul, vllm:rotary_embedding:neox, "
        "vllm:rotary_embedding:gptj)"]


def test_a_layer_runs_the_kernel_only_with_the_verified_eps_and_dtypes(monkeypatch):
    import torch

    bf16 = vllm_adapter.Entry("norm_bf16", config(2, ["vllm:rms_norm"], [1e-6], [["bfloat16", "bfloat16"]]))
    f32 = vllm_adapter.Entry("norm_f32", config(2, ["vllm:rms_norm"], [1e-5]))
    assert vllm_adapter.eps_problem([bf16, f32], 1e-6, "vllm:rms_norm") == ([bf16], "")
    assert vllm_adapter.eps_problem([bf16, f32], 1e-3, "vllm:rms_norm") == (
        [], "eps 0.001, vllm:rms_norm verified with eps 1e-06 or 1e-05 only")
    asked = []
    monkeypatch.setattr(vllm_adapter, "_select", lambda entry, args: asked.append(entry.op) or "")
    x, w = torch.ones(2, 4), torch.ones(4)
    assert vllm_adapter.pick([bf16, f32], (x, w), "vllm:rms_norm") == (f32, "")
    assert vllm_adapter.pick([bf16, f32], (x.bfloat16(), w.bfloat16()), "vllm:rms_norm") == (bf16, "")
    assert asked == ["norm_f32", "norm_bf16"]  # the package's select() has the last word, eagerly
    assert vllm_adapter.pick([bf16, f32], (x.bfloat16(), w), "vllm:rms_norm") == (
        None, "dtypes (bfloat16, float32), vllm:rms_norm verified for (bfloat16, bfloat16) or (float32, float32)")
    monkeypatch.setattr(vllm_adapter, "_select", lambda entry, args: "verified on cpu only, this device is sm_90")
    assert vllm_adapter.pick([f32], (x, w), "vllm:rms_norm") == (
        None, "norm_f32: verified on cpu only, this device is sm_90")
    assert vllm_adapter.pick([], (x, w), "vllm:rms_norm") == (None, "no op of opforge.exporter implements vllm:rms_norm")


def test_a_subclass_is_replaced_under_its_own_name_only_when_it_runs_the_same_forward():
    class Rope:
        def forward_native(self):
            pass

    class Scaled(Rope):  # another cache only
        pass

    class Fourier(Rope):
        def forward_native(self):
            pass

    class ScaledAgain(Scaled):
        pass

    class FourierScaled(Fourier):  # inherits Fourier's forward
        pass

    notes = []
    assert vllm_adapter.family(Rope, {"ScaledAgain": Rope}, notes) == [Rope, Scaled]
    assert notes == [f"ScaledAgain: already replaced by {__name__}; left as it is"]


def export(tmp_path: Path) -> Path:
    """The specs of tests/data/vllm_adapter_specs.py, recorded by hand and exported: the library's root."""
    sys.path.insert(0, str(DATA))
    try:
        from vllm_adapter_specs import specs
    finally:
        sys.path.remove(str(DATA))
    with Registry(tmp_path / "reg.db") as reg:
        for name, (spec, kernel) in specs().items():
            cand = reg.record_candidate(reg.record_spec(name, f"ops/{name}.py", spec), kernel, "triton", "user")
            reg.record_evaluation(cand, "cpu/x86_64/triton-interpreter", {}, VERDICT)
            reg.promote(cand)
        export_library(reg, tmp_path / "lib")
    return tmp_path / "lib"


def test_the_package_ships_the_adapter_and_imports_no_engine(tmp_path):
    lib = export(tmp_path)
    shipped = (lib / "kernels_generated" / "_vllm.py").read_text()
    assert shipped.endswith((ROOT / "opforge" / "exporter" / "vllm_adapter.py").read_text())
    code = ("import sys, kernels_generated, kernels_generated.plugins as p, kernels_generated._vllm as v\n"
            "p.register(); print(v.PACKAGE, 'vllm' in sys.modules, 'sglang' in sys.modules)\n")
    ran = subprocess.run([sys.executable, "-c", code], cwd=lib, capture_output=True, text=True, timeout=300,
                         env=os.environ | {"TRITON_INTERPRET": "1"})
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.split() == ["kernels_generated", "False", "False"]


def vllm_python() -> Path:
    try:
        return vllm_check.find_env()
    except CheckError as e:
        if os.environ.get("OPFORGE_CI"):
            pytest.fail(f"the vLLM env is required here (.ci/run builds it): {e}")
        pytest.skip(str(e))


REPLACED = "kernels_generated._vllm"


def test_vllm_layers_call_the_exported_ops_and_fall_back_with_a_reason(tmp_path):
    py = vllm_python()
    lib = export(tmp_path)
    ran = subprocess.run([str(py), str(DATA / "vllm_adapter_probe.py")], cwd=tmp_path, capture_output=True,
                         text=True, timeout=600, env=os.environ | {"TRITON_INTERPRET": "1", "PYTHONPATH": str(lib)})
    assert ran.returncode == 0, ran.stderr[-3000:]
    out = json.loads(ran.stdout.strip().splitlines()[-1])
    cases = out["cases"]
    assert out["installed"]["layers"] == {"RMSNorm": ["rms_w", "add_rms_w"], "SiluAndMul": ["silu_mul"],
                                          "GeluAndMul": ["gelu_tanh_mul"], "RotaryEmbedding": ["rope_neox", "rope_gptj"]}
    assert out["installed"]["ir"] == ["rms_norm", "fused_add_rms_norm"]
    ran_kernel = ["rms", "rms_cpu", "add_rms", "silu", "gelu_tanh", "rope_llama3", "ir_rms", "ir_add_rms"] + [
        f"rope_{style}{how}" for style in ("neox_32", "neox_16", "gptj_32") for how in ("", "_cpu")]
    own_code = ["rms_eps", "rms_cpu_eps", "add_rms_eps", "rms_no_weight", "silu_bf16", "gelu_none", "rope_no_key",
                "rope_gptj_16", "rope_gptj_16_cpu", "ir_rms_eps"]
    for name in ran_kernel + own_code:
        assert cases[name]["diff"] <= 1e-6, (name, cases[name])  # the in-tree layer's values, kernel or not
    assert {n: cases[n]["kernel_calls"] for n in ran_kernel} == dict.fromkeys(ran_kernel, 1)
    assert {n: cases[n]["kernel_calls"] for n in own_code + ["gemma"]} == dict.fromkeys(own_code + ["gemma"], 0)
    assert all(cases[n]["class"].startswith(REPLACED) for n in ran_kernel[:6] + own_code[:-1])
    assert cases["rope_llama3"]["class"] == f"{REPLACED}.Llama3RotaryEmbedding"
    assert {"Llama3RotaryEmbedding", "YaRNScalingRotaryEmbedding"} <= set(out["installed"]["also"]["RotaryEmbedding"])
    assert "FourierRotaryEmbedding" not in out["installed"]["also"]["RotaryEmbedding"]  # a forward of its own
    assert cases["gemma"]["class"].startswith("vllm.")  # exact class names only: GemmaRMSNorm keeps vLLM's code
    assert all(cases[f"rope_{s}_{r}_cpu"]["in_place"] <= 1e-6 for s in ("neox", "gptj") for r in (32, 16))
    assert out["log"][0].startswith("kernels_generated: vLLM layers calling its kernels: RMSNorm (rms_w, add_rms_w), "
                                    "SiluAndMul (silu_mul), GeluAndMul (gelu_tanh_mul), RotaryEmbedding (rope_neox, "
                                    "rope_gptj) and its subclasses ")
    assert [re.sub(r"\(\w+ of \w+ dims\)", "(SIZE of SIZE dims)", line) for line in out["log"][1:]] == [  # once per layer and reason, though each case called twice or more
        "kernels_generated: vLLM's RMSNorm (vllm:rms_norm) runs its own code: eps 1e-05, vllm:rms_norm verified "
        "with eps 1e-06 only",
        "kernels_generated: vLLM's RMSNorm (vllm:fused_add_rms_norm) runs its own code: eps 1e-05, "
        "vllm:fused_add_rms_norm verified with eps 1e-06 only",
        "kernels_generated: vLLM's RMSNorm (vllm:rms_norm) runs its own code: has_weight=False "
        "(the kernel multiplies by a weight)",
        "kernels_generated: vLLM's SiluAndMul runs its own code: dtypes (bfloat16), vllm:silu_and_mul verified "
        "for (float32)",
        "kernels_generated: vLLM's GeluAndMul runs its own code: no op of kernels_generated implements "
        "vllm:gelu_and_mul",
        "kernels_generated: vLLM's RotaryEmbedding runs its own code: rope_gptj: the reference rejects these shapes "
        "(ValueError: partial rotary (SIZE of SIZE dims) is not covered by this spec)",  # sizes as the fake run has them
        "kernels_generated: vLLM's RotaryEmbedding runs its own code: key is None (the kernel rotates a query and "
        "a key)"]
