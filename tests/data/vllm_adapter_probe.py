"""Run by tests/test_export_vllm_adapter.py in vLLM's own environment (it cannot import opforge),
with an exported package (the specs of vllm_adapter_specs.py) on PYTHONPATH and TRITON_INTERPRET=1:
builds vLLM's in-tree layers after the package's plugin registered, compares each with vLLM's own
forward_native, and prints one JSON object: per case the class that was built, the max |difference|
and the package's kernel calls it caused; the adapter's log lines; what install() reported."""
import json
import logging
import sys

import torch

PACKAGE = sys.argv[1] if len(sys.argv) > 1 else "kernels_generated"


class Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def main() -> dict:
    from vllm.config import VllmConfig, set_current_vllm_config

    lines = Lines()
    logging.getLogger(f"vllm.{PACKAGE}").addHandler(lines)
    logging.getLogger(f"vllm.{PACKAGE}").setLevel(logging.INFO)  # an LLM() sets vLLM's level (INFO) itself
    package = __import__(PACKAGE)
    out = {"cases": {}}
    with set_current_vllm_config(VllmConfig()):
        __import__(f"{PACKAGE}.plugins").plugins.register()
        out["installed"] = sys.modules[f"{PACKAGE}._vllm"].install()  # a second call: the same, nothing redone
        with torch.inference_mode():  # as vLLM runs a model
            cases(out["cases"], package)
    out["log"] = lines.lines
    return out


def case(into: dict, name: str, package, layer, run, expected):
    before = sum(package.stats()["kernel_calls"].values())
    got = run()
    got, expected = (got if isinstance(got, tuple) else (got,)), (expected if isinstance(expected, tuple) else (expected,))
    diff = max(float((g.float() - e.float()).abs().max()) for g, e in zip(got, expected))
    into[name] = {"class": f"{type(layer).__module__}.{type(layer).__name__}", "diff": diff,
                  "kernel_calls": sum(package.stats()["kernel_calls"].values()) - before}


def cases(into: dict, package) -> None:
    from vllm import ir
    from vllm.model_executor.layers.activation import GeluAndMul, SiluAndMul
    from vllm.model_executor.layers.layernorm import GemmaRMSNorm, RMSNorm
    from vllm.model_executor.layers.rotary_embedding import get_rope
    from vllm.model_executor.layers.rotary_embedding.base import RotaryEmbedding

    torch.manual_seed(0)
    x, res = torch.randn(7, 64), torch.randn(7, 64)
    for eps, tag in ((1e-6, ""), (1e-5, "_eps"), ):
        norm = RMSNorm(64, eps=eps)
        norm.weight.data = 1 + 0.1 * torch.randn(64)
        inner = type(norm).__mro__[1]  # vLLM's RMSNorm
        case(into, "rms" + tag, package, norm, lambda: norm(x), inner.forward_native(norm, x))
        case(into, "rms_cpu" + tag, package, norm, lambda: norm.forward_cpu(x), inner.forward_native(norm, x))
        case(into, "add_rms" + tag, package, norm, lambda: norm.forward_native(x, res),
             inner.forward_native(norm, x, res))
    bare = RMSNorm(64, eps=1e-6, has_weight=False)
    case(into, "rms_no_weight", package, bare, lambda: bare(x), type(bare).__mro__[1].forward_native(bare, x))
    gemma = GemmaRMSNorm(64, eps=1e-6)
    case(into, "gemma", package, gemma, lambda: gemma(x), gemma.forward_native(x))

    act, g = SiluAndMul(), torch.randn(7, 128)
    case(into, "silu", package, act, lambda: act(g), SiluAndMul.forward_native(g))
    # vLLM compiles forward_native here (custom ops "none"): the traced adapter runs the op too
    case(into, "silu_bf16", package, act, lambda: act.forward_cpu(g.bfloat16()), SiluAndMul.forward_native(g.bfloat16()))
    for approximate in ("tanh", "none"):  # an op implements gelu_tanh_and_mul only
        gelu = GeluAndMul(approximate=approximate)
        case(into, f"gelu_{approximate}", package, gelu, lambda: gelu.forward_cpu(g),
             GeluAndMul.forward_native(gelu, g))

    positions = torch.tensor([0, 3, 5, 9, 1, 30, 2])
    for neox in (True, False):
        tag = "neox" if neox else "gptj"
        for rot in (32, 16):
            rope = get_rope(32, 64, is_neox_style=neox, rope_parameters={"rope_theta": 10000.0,
                                                                       "partial_rotary_factor": rot / 32},
                            dtype=torch.float32)
            qkv = torch.randn(7, (4 + 2 + 2) * 32)
            q, k, _ = qkv.split([128, 64, 64], dim=-1)  # non-contiguous views, as in vLLM's attention
            want = RotaryEmbedding.forward_native(rope, positions, q.clone(), k.clone())
            case(into, f"rope_{tag}_{rot}", package, rope, lambda: rope.forward_native(positions, q, k), want)
            case(into, f"rope_{tag}_{rot}_cpu", package, rope, lambda: rope.forward_cpu(positions, q, k), want)
            into[f"rope_{tag}_{rot}_cpu"]["in_place"] = float((q - want[0]).abs().max())
    # Llama 3's scaled RoPE: a subclass that only computes another cache, replaced under its own name
    llama3 = get_rope(32, 64, is_neox_style=True, dtype=torch.float32, rope_parameters={
        "rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
        "high_freq_factor": 4.0, "original_max_position_embeddings": 16})
    q, k = torch.randn(7, 128), torch.randn(7, 64)
    case(into, "rope_llama3", package, llama3, lambda: llama3.forward_native(positions, q, k),
         type(llama3).__mro__[1].forward_native(llama3, positions, q, k))
    rope = get_rope(32, 64, is_neox_style=True, rope_parameters={"rope_theta": 10000.0}, dtype=torch.float32)
    q = torch.randn(7, 128)
    case(into, "rope_no_key", package, rope, lambda: rope.forward_native(positions, q, None)[0],
         RotaryEmbedding.forward_native(rope, positions, q, None)[0])

    w = 1 + 0.1 * torch.randn(64)
    into["ir_providers"] = {n: sorted(getattr(ir.ops, n).impls) for n in ("rms_norm", "fused_add_rms_norm")}
    with ir.ops.rms_norm.set_priority([PACKAGE, "native"]), ir.ops.fused_add_rms_norm.set_priority([PACKAGE, "native"]):
        native = ir.ops.rms_norm.impls["native"].impl_fn
        case(into, "ir_rms", package, ir.ops.rms_norm, lambda: ir.ops.rms_norm(x, w, 1e-6), native(x, w, 1e-6))
        case(into, "ir_rms_eps", package, ir.ops.rms_norm, lambda: ir.ops.rms_norm(x, w, 1e-5), native(x, w, 1e-5))
        fused = ir.ops.fused_add_rms_norm.impls["native"].impl_fn
        case(into, "ir_add_rms", package, ir.ops.fused_add_rms_norm,
             lambda: ir.ops.fused_add_rms_norm(x, res, w, 1e-6), fused(x, res, w, 1e-6))


if __name__ == "__main__":
    print(json.dumps(main()))
