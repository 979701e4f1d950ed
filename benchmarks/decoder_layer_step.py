"""Decoder-layer step time: examples/decoder_layer.py's Llama-style layer on an exported library's
kernels against the same layer on the serving specs' own PyTorch references (the vectorised forms
the kernels were verified against), eager and under torch.compile, timed in one process.

    opforge --db /tmp/s.db batch ops/serving/{rms_norm_bf16,linear_bf16,rotary_neox,reshape_and_cache,\\
        paged_decode_attention,fused_add_rms_norm,silu_and_mul}.py --device cuda
    opforge --db /tmp/s.db export --out /tmp/lib
    python benchmarks/decoder_layer_step.py --library /tmp/lib [--sequences 32 --context 1024] [--json r.json]

One step is the layer over one new token per sequence, its K/V written into the paged cache (the
same slots each call, so every call does the same work). On a GPU each variant is timed with
triton.testing.do_bench (warm-up, L2 flush, median); on a CPU the library's kernels run in Triton's
interpreter, so its row measures the interpreter, not the kernels (the table says so), and
torch.compile is left out unless --compile. Before timing, each variant's step output is compared
with eager's: a variant that disagrees is reported, not timed as if it were right."""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "ops" / "serving"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # the example's dataclasses look their module up while it runs
    spec.loader.exec_module(module)
    return module


DECODER = _load(ROOT / "examples" / "decoder_layer.py", "decoder_layer")


class SpecOps:
    """Each op the layer calls as its serving spec's Model (bound to the spec's init inputs), optionally
    compiled: plain PyTorch as an engine's native fallback writes it, vectorised."""

    def __init__(self, device: torch.device, compile: bool = False) -> None:
        for op in DECODER.OPS:
            module = _load(SPECS / f"{op}.py", f"_spec_{op}")
            model = module.Model(*module.get_init_inputs()).to(device).eval()
            setattr(self, op, torch.compile(model, dynamic=False) if compile else model)


def _timer(device: torch.device):
    if device.type == "cuda":
        from triton.testing import do_bench

        return lambda fn: do_bench(fn, warmup=25, rep=100)

    def cpu(fn, repeats: int = 3) -> float:
        fn()  # the first call compiles or traces
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append((time.perf_counter() - start) * 1e3)
        return statistics.median(times)
    return cpu


def measure(library: str | None, cfg, device: str, compile: bool, seed: int = 0) -> list[dict]:
    """One row per variant: its step time (ms), its ratio to eager and its output's distance from eager's."""
    dev = torch.device(device)
    torch.manual_seed(seed)
    w = DECODER.weights(cfg, dev)
    blocks_per_seq = (cfg.max_context + cfg.block_size) // cfg.block_size + 1
    num_blocks = cfg.sequences * blocks_per_seq + 2
    shape = (num_blocks, cfg.block_size, cfg.kv_heads, DECODER.HEAD_SIZE)
    caches = [torch.randn(shape).to(torch.bfloat16).to(dev) for _ in range(2)]
    tables = torch.randperm(num_blocks)[: cfg.sequences * blocks_per_seq].to(torch.int32)
    tables = tables.reshape(cfg.sequences, blocks_per_seq).to(dev)
    positions = torch.randint(1, cfg.max_context + 1, (cfg.sequences,))
    blocks = tables.cpu().long()[torch.arange(cfg.sequences), positions // cfg.block_size]
    slots = (blocks * cfg.block_size + positions % cfg.block_size).to(dev)
    seq_lens, positions = (positions + 1).to(torch.int32).to(dev), positions.to(dev)
    hidden = torch.randn(cfg.sequences, cfg.hidden).to(torch.bfloat16).to(dev)
    residual = torch.randn(cfg.sequences, cfg.hidden).to(torch.bfloat16).to(dev)

    variants = [("pytorch eager", SpecOps(dev))]
    if compile:
        variants.append(("torch.compile", SpecOps(dev, compile=True)))
    if library:
        variants.append((f"{library} kernels", DECODER.LibraryOps(library)))
    timer, rows, baseline = _timer(dev), [], None
    for name, ops in variants:
        own = [c.clone() for c in caches]

        def step(ops=ops, own=own):
            return DECODER.layer_step(ops, w, cfg, hidden, residual, positions, own, slots, tables, seq_lens)

        out = step()[0]
        if baseline is None:
            baseline = out
        error = DECODER.relative(out, baseline)
        agrees = error <= DECODER.TOLERANCE
        ms = timer(step) if agrees else None
        rows.append({"variant": name, "ms": ms, "error_vs_eager": error, "agrees": agrees})
        if dev.type == "cuda":
            torch.cuda.synchronize()
    eager = rows[0]["ms"]
    for row in rows:
        row["vs_eager"] = eager / row["ms"] if row["ms"] else None  # > 1: faster than eager
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", type=Path, help="folder holding the exported package (`opforge export --out`)")
    parser.add_argument("--package", default="kernels_generated", help="the package's import name")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--sequences", type=int, default=8)
    parser.add_argument("--context", type=int, default=256, help="most tokens of context per sequence")
    parser.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None,
                        help="time torch.compile too (default: on a GPU)")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args(argv)
    if args.device == "cpu":
        os.environ.setdefault("TRITON_INTERPRET", "1")
    if args.library is not None:
        if not args.library.is_dir():
            print(f"error: no library folder {args.library}", file=sys.stderr)
            return 2
        sys.path.insert(0, str(args.library.resolve()))
    cfg = DECODER.Config(sequences=args.sequences, max_context=args.context)
    compile = args.device != "cpu" if args.compile is None else args.compile
    try:
        if args.library is not None:
            importlib.import_module(args.package)
        rows = measure(args.package if args.library is not None else None, cfg, args.device, compile)
    except (ImportError, LookupError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    where = torch.cuda.get_device_name(0) if args.device == "cuda" else \
        "cpu (the library's kernels run in Triton's interpreter: its time is the interpreter's, not the kernels')"
    print(f"decoder layer, one decode step: {cfg.sequences} sequences, up to {cfg.max_context} tokens of context, "
          f"hidden {cfg.hidden}, {cfg.heads} heads / {cfg.kv_heads} KV heads; {where}")
    print(f"{'variant':<28} {'step ms':>10} {'vs eager':>9} {'error vs eager':>15}")
    for row in rows:
        ms = f"{row['ms']:10.3f}" if row["ms"] is not None else f"{'-':>10}"
        ratio = f"{row['vs_eager']:8.2f}x" if row["vs_eager"] is not None else f"{'-':>9}"
        note = "" if row["agrees"] else "  DISAGREES: not timed"
        print(f"{row['variant']:<28} {ms} {ratio} {row['error_vs_eager']:15.2e}{note}")
    if args.json:
        args.json.write_text(json.dumps({"device": where, "config": vars(cfg), "rows": rows}, indent=1))
    return 0 if all(row["agrees"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
