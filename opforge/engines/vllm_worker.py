"""The engine check's part inside vLLM's environment (run with that env's python, never imported by
opforge: it needs vllm, and opforge is not installed there; stdlib, torch, safetensors and vllm only).

    python vllm_worker.py model DIR [--seed N]          write the tiny Llama: config.json + seeded weights
    python vllm_worker.py generate DIR --out JSON ...   greedy generation with logprobs, one engine run

`generate` runs in a fresh process per mode: the caller sets VLLM_PLUGINS ("" turns every plugin off),
VLLM_ENABLE_V1_MULTIPROCESSING=0 (engine and worker in this process, so what the model's layers are is
readable here), TRITON_INTERPRET and PYTHONPATH (the exported package installed with --target). It writes
the tokens, per position the top logprobs, the time, which vLLM layers the exported package replaced
(CustomOp's out-of-tree registry, and the classes of the model's own modules), which vLLM IR ops have
its provider, and the package's per-op call statistics read in the worker (`<package>.stats()`, or
torch.profiler events named `<package>::<op>` when the package has no stats())."""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import time
from collections import Counter

# The tiny Llama: CPU attention needs head_dim 32 (it rejects 16). rms_norm_eps is the caller's: the
# exported RMSNorm kernels are verified at one epsilon, and a layer with another one falls back.
CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 128, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "intermediate_size": 256,
    "vocab_size": 256, "max_position_embeddings": 128, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
    "hidden_act": "silu", "tie_word_embeddings": False, "torch_dtype": "float32", "bos_token_id": 1,
    "eos_token_id": 2, "attention_bias": False, "mlp_bias": False,
}


def write_model(path: str, seed: int, eps: float) -> None:
    """config.json and model.safetensors with seeded real-scale weights: linears ~ N(0, 1/fan_in),
    embeddings ~ N(0, 1), norm weights 1 + N(0, 0.2) (a kernel that drops or alters the weight
    multiply, or the epsilon, moves the logprobs; vLLM's dummy weights, all +-1e-3, would hide it)."""
    import torch
    from safetensors.torch import save_file

    cfg = dict(CONFIG, rms_norm_eps=eps)
    h, inter, vocab = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    q, kv = cfg["num_attention_heads"] * cfg["head_dim"], cfg["num_key_value_heads"] * cfg["head_dim"]
    gen = torch.Generator().manual_seed(seed)

    def linear(out_f: int, in_f: int) -> torch.Tensor:
        return torch.randn(out_f, in_f, generator=gen) / in_f ** 0.5

    def norm(n: int) -> torch.Tensor:
        return 1.0 + 0.2 * torch.randn(n, generator=gen)

    weights = {"model.embed_tokens.weight": torch.randn(vocab, h, generator=gen)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        weights |= {p + "self_attn.q_proj.weight": linear(q, h), p + "self_attn.k_proj.weight": linear(kv, h),
                    p + "self_attn.v_proj.weight": linear(kv, h), p + "self_attn.o_proj.weight": linear(h, q),
                    p + "mlp.gate_proj.weight": linear(inter, h), p + "mlp.up_proj.weight": linear(inter, h),
                    p + "mlp.down_proj.weight": linear(h, inter), p + "input_layernorm.weight": norm(h),
                    p + "post_attention_layernorm.weight": norm(h)}
    weights |= {"model.norm.weight": norm(h), "lm_head.weight": linear(vocab, h) * 4.0}
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=1)
    save_file({k: v.contiguous() for k, v in weights.items()}, os.path.join(path, "model.safetensors"))


def _replaced_layers(package: str) -> dict[str, str]:
    """vLLM layer class name -> the class the package registered for it (CustomOp.register_oot)."""
    try:
        from vllm.model_executor import custom_op
    except ImportError:
        return {}
    registry = getattr(custom_op, "op_registry_oot", {})
    return {name: f"{cls.__module__}.{cls.__qualname__}" for name, cls in registry.items()
            if cls.__module__.split(".")[0] == package}


def _ir_providers(package: str) -> dict[str, list[str]]:
    """vLLM IR op -> the package's providers registered on it (vllm.ir exists in this vLLM)."""
    try:
        from vllm.ir import ops as ir_ops
    except ImportError:
        return {}
    found = {}
    for name in ("rms_norm", "fused_add_rms_norm", "silu_and_mul", "gelu_and_mul", "gelu_tanh_and_mul"):
        op = getattr(ir_ops, name, None)
        providers = [p for p in getattr(op, "impls", {}) if package in p]
        if providers:
            found[name] = providers
    return found


def _model_layers(model, package: str) -> list[dict]:
    """Per class of the model's modules that the package provides: how many instances and the
    attributes the adapter dispatches on (rotary style, head size, eps)."""
    seen: dict[tuple, int] = Counter()
    for module in model.modules():
        cls = type(module)
        if cls.__module__.split(".")[0] != package:
            continue
        attrs = tuple((a, getattr(module, a)) for a in ("is_neox_style", "head_size", "rotary_dim",
                                                         "variance_epsilon", "has_weight")
                      if isinstance(getattr(module, a, None), (bool, int, float)))
        bases = tuple(b.__name__ for b in cls.__mro__[1:] if b.__module__.split(".")[0] != package)
        seen[(cls.__name__, bases, attrs)] += 1
    return [{"class": c, "replaces": b[0] if b else "", "bases": list(b), "attrs": dict(a), "count": n}
            for (c, b, a), n in sorted(seen.items())]


def _stats(package: str) -> dict | None:
    mod = sys.modules.get(package)
    fn = getattr(mod, "stats", None)
    if not callable(fn):
        return None
    got = fn()
    return {k: {str(op): int(n) for op, n in v.items()} for k, v in got.items() if isinstance(v, dict)}


def _installed(package: str) -> dict | None:
    """What the package's vLLM adapter says it installed (its install() is once per process and
    returns the same record again), when the plugin imported one."""
    adapter = sys.modules.get(f"{package}._vllm")
    install = getattr(adapter, "install", None)
    if not callable(install):
        return None
    got = install()
    return json.loads(json.dumps(got, default=str)) if isinstance(got, dict) else None


class _Lines(logging.Handler):
    """The package's log lines (what the adapter replaced, each fallback to vLLM's code and why)."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record):
        if record.getMessage() not in self.lines:
            self.lines.append(record.getMessage())


def generate(args) -> dict:
    import torch
    from vllm import LLM, SamplingParams

    package = args.package
    lines = _Lines()
    for name in (package, f"vllm.{package}"):  # the plugin's logger and the adapter's (under vLLM's)
        logging.getLogger(name).addHandler(lines)
        logging.getLogger(name).setLevel(logging.INFO)
    prompts = [json.loads(p) for p in args.prompt]
    t0 = time.perf_counter()
    llm = LLM(model=args.model, skip_tokenizer_init=True, enforce_eager=True, dtype="float32",
              max_model_len=128, kv_cache_memory_bytes=32 << 20, seed=0)
    started = time.perf_counter() - t0
    params = SamplingParams(temperature=0.0, max_tokens=args.max_tokens, logprobs=args.logprobs,
                            ignore_eos=True, detokenize=False)
    batch = [{"prompt_token_ids": p} for p in prompts]
    if args.warmup:
        llm.generate(batch[:1], SamplingParams(temperature=0.0, max_tokens=2, ignore_eos=True, detokenize=False),
                     use_tqdm=False)
    loaded = package in sys.modules
    profiled = loaded and _stats(package) is None
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) if profiled \
        else contextlib.nullcontext()
    t1 = time.perf_counter()
    with prof:
        outs = llm.generate(batch, params, use_tqdm=False)
    seconds = time.perf_counter() - t1
    tokens, logprobs = [], []
    for out in outs:
        comp = out.outputs[0]
        tokens.append(list(comp.token_ids))
        logprobs.append([{str(t): float(lp.logprob) for t, lp in pos.items()} for pos in (comp.logprobs or [])])
    calls = None
    if profiled:
        tag = f"{package}::"
        calls = dict(Counter(e.name[len(tag):] for e in prof.events() if e.name.startswith(tag)))
    layers = llm.apply_model(lambda model: _model_layers(model, package))[0] if loaded else []
    stats = _stats(package) if loaded else None
    return {"plugins": os.environ.get("VLLM_PLUGINS"), "package_loaded": loaded, "tokens": tokens,
            "logprobs": logprobs, "seconds": seconds, "engine_start_s": started,
            "new_tokens": sum(len(t) for t in tokens), "replaced": _replaced_layers(package) if loaded else {},
            "ir_providers": _ir_providers(package) if loaded else {}, "model_layers": layers,
            "installed": _installed(package) if loaded else None, "log": lines.lines, "stats": stats,
            "profiler_calls": calls,
            "vllm": __import__("vllm").__version__,
            "torch": torch.__version__}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="vllm_worker.py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("model")
    m.add_argument("dir")
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--eps", type=float, default=1e-6)
    g = sub.add_parser("generate")
    g.add_argument("model")
    g.add_argument("--out", required=True)
    g.add_argument("--package", default="kernels_generated")
    g.add_argument("--prompt", action="append", required=True, help="a JSON list of token ids")
    g.add_argument("--max-tokens", type=int, default=16)
    g.add_argument("--logprobs", type=int, default=5)
    g.add_argument("--warmup", action="store_true")
    args = ap.parse_args(argv)
    if args.cmd == "model":
        write_model(args.dir, args.seed, args.eps)
        return 0
    result = generate(args)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
