"""Tokens per second of a real vLLM engine on the engine check's tiny Llama (hidden 128, 2 layers,
float32) with the exported library's plugin and without it, in the same run: each repeat is one
engine check (scripts/engine_check.py's run_check): a fresh process per mode, a 2-token warm-up
generate, then the timed greedy generate of 4 prompts. Medians over --repeat; ratio: with / without.

On a CPU the kernels run under Triton's interpreter (TRITON_INTERPRET=1), Python executing every
program of every launch: the numbers prove vLLM's layers call the kernels and say what that costs
here, they are not a speed claim for the kernels. The check's verdict (tokens identical, logprobs
within 1e-3, every replaced op ran) is printed too, and a failing check fails the benchmark.

    .venv/bin/python benchmarks/vllm_engine.py [--library DIR] [--repeat 3] [--tokens 32] [--out FILE]

Needs the vLLM CPU env (bash scripts/vllm_env.sh). Exit status: 0 measured and passing; 1 the check
failed; 2 no env or not an exported library."""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from opforge.engines import vllm_check  # noqa: E402


def measure(library: str, env: str | None, repeat: int, tokens: int) -> list[vllm_check.Result]:
    results = []
    with tempfile.TemporaryDirectory(prefix="opforge-vllm-bench-") as tmp:
        model = None
        for i in range(repeat):
            work = Path(tmp) / f"r{i}"
            work.mkdir()
            res = vllm_check.run_check(library, env, work, model=model, new_tokens=tokens, warmup=True)
            model = model or work / "model"
            results.append(res)
    return results


def report(results: list[vllm_check.Result], console: Console) -> None:
    first = results[0]
    table = Table(title=f"vLLM {first.plugin['vllm']} on the tiny Llama, {len(first.plain['tokens'])} prompts x "
                        f"{first.plain['new_tokens'] // len(first.plain['tokens'])} new tokens, "
                        f"median of {len(results)} (CPU, TRITON_INTERPRET=1)")
    for col in ("run", "tokens/s", "generate s", "engine start s"):
        table.add_column(col)
    rates = {}
    for mode in ("plugin", "plain"):
        runs = [getattr(r, mode) for r in results]
        rates[mode] = statistics.median(run["new_tokens"] / run["seconds"] for run in runs)
        label = "with the library (its plugin)" if mode == "plugin" else 'vLLM\'s own layers (VLLM_PLUGINS="")'
        table.add_row(label, f"{rates[mode]:.1f}", f"{statistics.median(r['seconds'] for r in runs):.2f}",
                      f"{statistics.median(r['engine_start_s'] for r in runs):.1f}")
    console.print(table)
    console.print(f"tokens/s with / without the library: {rates['plugin'] / rates['plain']:.2f} "
                  "(Triton's interpreter runs the kernels in Python here: a correctness proof, not a speed claim)")
    ops = Table(title="kernel calls in the worker, warm-up and timed generate (first repeat)")
    for col in ("op", "replaces", "kernel calls", "fallbacks"):
        ops.add_column(col)
    for row in first.rows:
        ops.add_row(row.op, row.layer or "-", "n/a" if row.calls is None else str(row.calls), str(row.fallbacks))
    console.print(ops)
    worst = max(r.max_diff for r in results)
    verdicts = {"PASS" if r.passed else "FAIL: " + "; ".join(r.problems) for r in results}
    console.print(f"engine check, every repeat: {', '.join(sorted(verdicts))}; tokens identical: "
                  f"{all(r.tokens_match for r in results)}; max |logprob diff| {worst:.2e}")
    console.print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
                  f"torch {first.plugin['torch']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--library", default=str(ROOT / "kernels_generated"))
    ap.add_argument("--env")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=32, help="new tokens per prompt")
    ap.add_argument("--out", help="also write the report here (benchmarks/results/vllm_engine_cpu.txt)")
    args = ap.parse_args()
    try:
        results = measure(args.library, args.env, args.repeat, args.tokens)
    except vllm_check.CheckError as e:
        print(f"vllm_engine: {e}", file=sys.stderr)
        return 2
    console = Console(width=None if sys.stdout.isatty() else 150, record=bool(args.out))
    report(results, console)
    if args.out:
        Path(args.out).write_text(console.export_text(), encoding="utf-8")
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
