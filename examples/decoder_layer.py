"""A Llama-style decoder layer served from opforge's exported op library, checked against plain PyTorch.

    opforge batch ops/serving/ && opforge export --out /tmp/lib     # verify the serving suite, export it
    KERNELS_GENERATED_NO_FALLBACK=1 TRITON_INTERPRET=1 python examples/decoder_layer.py --library /tmp/lib

One decode step for several sequences at once, the way an engine runs it: RMSNorm (fused with the
residual add after the first layer), the fused QKV projection, NeoX rotary embeddings on q and k,
the new token's key and value written into a paged KV cache by slot, decode attention over the
cache through each sequence's block table (GQA), the output projection, the fused residual add +
RMSNorm, and the SwiGLU MLP (gate_up projection, silu_and_mul, down projection). Every computing
call is `torch.ops.<library>.<op>`; between them there are only views and `.contiguous()`. The same
layer is written a second time in plain PyTorch (`TorchOps`), with its own cache, and the two are
compared step by step: the hidden state, the residual and both caches.

With KERNELS_GENERATED_NO_FALLBACK=1 an op whose verified kernel does not apply raises instead of
running its PyTorch reference, so a pass means every step ran a generated kernel. On a CPU the
kernels run in Triton's interpreter (TRITON_INTERPRET=1, set here when no GPU is present); on a GPU
they run natively (--device cuda). Exit status: 0 when the layers agree, 1 when they do not, 2 for a
library that lacks an op."""
from __future__ import annotations

import argparse
import functools
import importlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

# The serving suite's ops this layer calls; their shapes follow the ops' bound init arguments (paged
# attention's 128 ** -0.5) and, for rotary_neox, its inputs (vLLM's cos/sin cache, heads of 128).
OPS = ("rms_norm_bf16", "linear_bf16", "rotary_neox", "reshape_and_cache", "paged_decode_attention",
       "fused_add_rms_norm", "silu_and_mul")
HEAD_SIZE, ROPE_BASE, MAX_POSITION, EPS = 128, 500000.0, 8192, 1e-6


@dataclass(frozen=True)
class Config:
    hidden: int = 256
    heads: int = 4
    kv_heads: int = 2
    intermediate: int = 384
    block_size: int = 16
    sequences: int = 3
    steps: int = 3
    max_context: int = 40  # each sequence starts with a random context of 1..max_context tokens


@dataclass
class Weights:
    input_norm: torch.Tensor
    qkv: torch.Tensor
    o: torch.Tensor
    post_norm: torch.Tensor
    gate_up: torch.Tensor
    down: torch.Tensor


def weights(cfg: Config, device: torch.device) -> Weights:
    def linear(n: int, k: int) -> torch.Tensor:
        return (torch.randn(n, k) * k ** -0.5).to(torch.bfloat16).to(device)

    def norm() -> torch.Tensor:
        return (1.0 + 0.1 * torch.randn(cfg.hidden)).to(torch.bfloat16).to(device)

    qkv_width = (cfg.heads + 2 * cfg.kv_heads) * HEAD_SIZE
    return Weights(norm(), linear(qkv_width, cfg.hidden), linear(cfg.hidden, cfg.heads * HEAD_SIZE), norm(),
                   linear(2 * cfg.intermediate, cfg.hidden), linear(cfg.hidden, cfg.intermediate))


@functools.cache
def rope_cache(device: torch.device) -> torch.Tensor:
    """vLLM's cos/sin cache [MAX_POSITION, HEAD_SIZE] (full rotary): fp32, cast to the model's bf16."""
    inv_freq = 1.0 / (ROPE_BASE ** (torch.arange(0, HEAD_SIZE, 2, dtype=torch.float32) / HEAD_SIZE))
    freqs = torch.outer(torch.arange(MAX_POSITION, dtype=torch.float32), inv_freq)
    return torch.cat((freqs.cos(), freqs.sin()), dim=-1).to(torch.bfloat16).to(device)


# -- the ops: the exported library's, and the same contracts in plain PyTorch ----------------------

class LibraryOps:
    """torch.ops.<library>.<op> for each op the layer calls."""

    def __init__(self, library: str) -> None:
        namespace = getattr(torch.ops, library)
        missing = [op for op in OPS if not hasattr(namespace, op)]
        if missing:
            raise LookupError(f"the {library} library has no {', '.join(missing)} (export the serving suite)")
        for op in OPS:
            setattr(self, op, getattr(namespace, op))


class TorchOps:
    """The same contracts written directly in PyTorch (vLLM's forward_native forms)."""

    def __init__(self, device: torch.device) -> None:
        self.device = device

    @staticmethod
    def _norm(h: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + EPS)).to(weight.dtype) * weight

    def rms_norm_bf16(self, x, weight):
        return self._norm(x.float(), weight).to(x.dtype)

    def fused_add_rms_norm(self, x, residual, weight):
        h = x.float() + residual.float()
        return self._norm(h, weight).to(x.dtype), h.to(x.dtype)

    def linear_bf16(self, x, weight):
        return torch.nn.functional.linear(x, weight)

    def silu_and_mul(self, x):
        gate, up = x.chunk(2, dim=-1)
        return torch.nn.functional.silu(gate) * up

    def rotary_neox(self, positions, query, key, cos_sin_cache):
        cos, sin = cos_sin_cache[positions].chunk(2, dim=-1)

        def embed(x):  # [T, heads, HEAD_SIZE], full rotary, in the inputs' dtype like vLLM's native path
            x1, x2 = x.chunk(2, dim=-1)
            c, s = cos.unsqueeze(1), sin.unsqueeze(1)
            return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1)

        return embed(query), embed(key)

    def reshape_and_cache(self, key, value, key_cache, value_cache, slot_mapping):
        block = key_cache.shape[1]
        for i, slot in enumerate(slot_mapping.tolist()):
            if slot >= 0:
                key_cache[slot // block, slot % block] = key[i]
                value_cache[slot // block, slot % block] = value[i]

    def paged_decode_attention(self, query, key_cache, value_cache, block_tables, seq_lens):
        block, group = key_cache.shape[1], query.shape[1] // key_cache.shape[2]
        out = torch.empty_like(query)
        for b, n in enumerate(seq_lens.tolist()):
            rows = [(int(block_tables[b, t // block]), t % block) for t in range(n)]
            k = torch.stack([key_cache[blk, r] for blk, r in rows]).float().repeat_interleave(group, dim=1)
            v = torch.stack([value_cache[blk, r] for blk, r in rows]).float().repeat_interleave(group, dim=1)
            probs = (torch.einsum("hd,nhd->hn", query[b].float(), k) * HEAD_SIZE ** -0.5).softmax(dim=-1)
            out[b] = torch.einsum("hn,nhd->hd", probs, v).to(query.dtype)
        return out


# -- the layer ----------------------------------------------------------------------------------------

def layer_step(ops, w: Weights, cfg: Config, hidden, residual, positions, caches, slots, block_tables, seq_lens):
    """One decoder layer over one new token per sequence; writes the tokens' K/V into `caches`."""
    tokens, q_width, kv_width = hidden.shape[0], cfg.heads * HEAD_SIZE, cfg.kv_heads * HEAD_SIZE
    if residual is None:
        x, residual = ops.rms_norm_bf16(hidden, w.input_norm), hidden
    else:
        x, residual = ops.fused_add_rms_norm(hidden, residual, w.input_norm)
    qkv = ops.linear_bf16(x, w.qkv)
    q, k, v = (t.contiguous() for t in qkv.split([q_width, kv_width, kv_width], dim=-1))
    q, k = ops.rotary_neox(positions, q.view(tokens, cfg.heads, HEAD_SIZE), k.view(tokens, cfg.kv_heads, HEAD_SIZE),
                           rope_cache(hidden.device))
    key_cache, value_cache = caches
    ops.reshape_and_cache(k, v.view(tokens, cfg.kv_heads, HEAD_SIZE), key_cache, value_cache, slots)
    attn = ops.paged_decode_attention(q, key_cache, value_cache, block_tables, seq_lens)
    o = ops.linear_bf16(attn.view(tokens, q_width), w.o)
    x, residual = ops.fused_add_rms_norm(o, residual, w.post_norm)
    mlp = ops.linear_bf16(ops.silu_and_mul(ops.linear_bf16(x, w.gate_up)), w.down)
    return mlp, residual


@dataclass
class StepDiff:
    step: int
    hidden: float  # max |library - torch| / max |torch|
    residual: float
    cache: float


def relative(a: torch.Tensor, b: torch.Tensor) -> float:
    scale = b.float().abs().max().item() or 1.0
    return (a.float() - b.float()).abs().max().item() / scale


def run(library: str, cfg: Config = Config(), device: str = "cpu", seed: int = 0) -> list[StepDiff]:
    """The layer on the library's ops and on plain PyTorch, side by side for cfg.steps decode steps."""
    dev = torch.device(device)
    torch.manual_seed(seed)
    w = weights(cfg, dev)
    lib, ref = LibraryOps(library), TorchOps(dev)
    blocks_per_seq = (cfg.max_context + cfg.steps + cfg.block_size - 1) // cfg.block_size
    num_blocks = cfg.sequences * blocks_per_seq + 2  # two blocks no sequence owns
    shape = (num_blocks, cfg.block_size, cfg.kv_heads, HEAD_SIZE)
    caches = [torch.randn(shape).to(torch.bfloat16).to(dev) for _ in range(2)]  # earlier tokens' K/V
    lib_caches, ref_caches = [c.clone() for c in caches], [c.clone() for c in caches]
    block_tables = torch.randperm(num_blocks)[: cfg.sequences * blocks_per_seq].to(torch.int32)
    block_tables = block_tables.reshape(cfg.sequences, blocks_per_seq).to(dev)
    lengths = torch.randint(1, cfg.max_context + 1, (cfg.sequences,))
    lib_state = ref_state = None
    diffs = []
    for step in range(cfg.steps):
        positions = lengths.clone()  # the new token's position: the context so far
        blocks = block_tables.cpu().long()[torch.arange(cfg.sequences), positions // cfg.block_size]
        slots = (blocks * cfg.block_size + positions % cfg.block_size).to(dev)
        lengths += 1
        seq_lens, positions = lengths.to(torch.int32).to(dev), positions.to(dev)
        hidden = torch.randn(cfg.sequences, cfg.hidden).to(torch.bfloat16).to(dev)  # this step's embeddings
        lib_out, lib_res = layer_step(lib, w, cfg, hidden, lib_state, positions, lib_caches, slots, block_tables,
                                      seq_lens)
        ref_out, ref_res = layer_step(ref, w, cfg, hidden, ref_state, positions, ref_caches, slots, block_tables,
                                      seq_lens)
        lib_state, ref_state = lib_res, ref_res
        cache = max(relative(a, b) for a, b in zip(lib_caches, ref_caches))
        diffs.append(StepDiff(step, relative(lib_out, ref_out), relative(lib_res, ref_res), cache))
    return diffs


TOLERANCE = 3e-2  # bf16 rounds each op's output (2^-8 relative); errors compound over a layer's ~10 ops


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", type=Path, default=None,
                        help="folder holding the exported package (`opforge export --out`); default: installed")
    parser.add_argument("--package", default="kernels_generated", help="the package's import name")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--steps", type=int, default=Config.steps)
    parser.add_argument("--sequences", type=int, default=Config.sequences)
    args = parser.parse_args(argv)
    if args.device == "cpu":
        os.environ.setdefault("TRITON_INTERPRET", "1")  # read when triton is first imported (by the package)
    if args.library is not None:
        sys.path.insert(0, str(args.library.resolve()))
    try:
        importlib.import_module(args.package)
        diffs = run(args.package, Config(steps=args.steps, sequences=args.sequences), args.device)
    except (ImportError, LookupError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{'step':>4}  {'hidden':>9}  {'residual':>9}  {'kv cache':>9}   (max |library - torch| / max |torch|)")
    for d in diffs:
        print(f"{d.step:>4}  {d.hidden:9.2e}  {d.residual:9.2e}  {d.cache:9.2e}")
    worst = max(max(d.hidden, d.residual, d.cache) for d in diffs)
    agree = worst <= TOLERANCE
    print(f"{'agree' if agree else 'DISAGREE'}: worst {worst:.2e} (tolerance {TOLERANCE:g})")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
