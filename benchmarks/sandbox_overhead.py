"""Sandbox overhead: what isolating the candidate costs when verifying the suite on the CPU.

Measures, in one run, the wall clock of `verify_source` (spec loading excluded) for every suite op
(ops/<name>.py against backends/triton/knowledge/<name>.py, Triton's interpreter, seed 1) under:
  * none          no isolation, a plain child process per job (the baseline);
  * jail          bubblewrap, a fresh sandbox per verification;
  * docker-fresh  a new container per verification ("fresh sandbox per op run");
  * docker-warm   one container reused for the whole suite (a batch, or an agent loop with many
                  candidates per op); its start is paid by the first op measured under it.
Runs are interleaved per op (all four runtimes, then the next op), the order rotating from op to op
so drift spreads over all runtimes; one untimed verification under `none` warms the page cache
first. --repeat N keeps each (op, runtime) cell's median. Overhead: a runtime's suite total against
the total under `none`; the target is at most 15 %. The load average is printed alongside, since
the numbers mean little if something else heavy ran meanwhile.

    .venv/bin/python benchmarks/sandbox_overhead.py [--ops add_mul_relu,softmax] [--repeat 3] [--json rows.json]

Needs a Docker engine and bubblewrap. Exit status: 0 even when the target is missed (it is a
measurement); 1 when a known-good kernel is judged incorrect under any runtime (reasons printed).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from opforge.harness.verify import VerifyOptions, prepare, read_candidate, verify_source  # noqa: E402
from opforge.sandbox import get_sandbox  # noqa: E402

# label -> (sandbox runtime, one instance kept warm for the whole suite?)
POLICIES = {"none": ("none", False), "jail": ("jail", False),
            "docker-fresh": ("docker", False), "docker-warm": ("docker", True)}
TARGET_PCT = 15.0
console = Console(width=None if sys.stdout.isatty() else 140)


def suite_ops() -> list[str]:
    return sorted(p.stem for p in (ROOT / "ops").glob("*.py")
                  if (ROOT / "opforge" / "backends" / "triton" / "knowledge" / p.name).is_file())


def measure(op: str, policy: str, spec, hw, source: str, warm: dict) -> dict:
    """One timed verification of `op` under `policy`; a setup error becomes an incorrect row."""
    runtime, _ = POLICIES[policy]
    started = time.perf_counter()
    try:
        verdict = verify_source(spec, hw, source, VerifyOptions(device="cpu", seed=1, sandbox=runtime),
                                sandbox=warm.get(policy))
    except Exception as exc:  # e.g. SandboxUnavailable from get_sandbox
        verdict = {"correct": False, "reasons": [f"{type(exc).__name__}: {exc}"], "jobs": {}}
    jobs = verdict.get("jobs", {})
    return {"op": op, "runtime": policy, "wall_s": round(time.perf_counter() - started, 3),
            "correct": bool(verdict["correct"]), "reasons": verdict.get("reasons", []),
            **{f"{mode}_{k}": jobs.get(mode, {}).get(k) for mode in ("build", "run") for k in ("wall_s", "cpu_s")}}


def load(op: str) -> tuple:
    spec, hw = prepare(ROOT / "ops" / f"{op}.py", VerifyOptions(device="cpu"))
    return spec, hw, read_candidate(ROOT / "opforge" / "backends" / "triton" / "knowledge" / f"{op}.py")


def run_all(ops: list[str], repeat: int) -> list[dict]:
    """Every op under every policy, interleaved per op with a rotating order; all raw rows."""
    measure(ops[0], "none", *load(ops[0]), {})  # untimed warm-up
    warm = {p: get_sandbox(rt) for p, (rt, keep) in POLICIES.items() if keep}
    rows, labels = [], list(POLICIES)
    try:
        for r in range(repeat):
            for i, op in enumerate(ops):
                loaded, shift = load(op), (i + r) % len(labels)
                for policy in labels[shift:] + labels[:shift]:
                    rows.append({**measure(op, policy, *loaded, warm), "repeat": r})
                console.print(f"[dim]{r + 1}/{repeat} {op}: "
                              + " ".join(f"{x['runtime']}={x['wall_s']:.2f}" for x in rows[-len(labels):]) + "[/dim]")
    finally:
        for sb in warm.values():
            sb.close()
    return rows


def cell_seconds(rows: list[dict]) -> dict[tuple[str, str], float]:
    """(op, runtime) -> median wall seconds over the repeats."""
    keys = {(r["op"], r["runtime"]) for r in rows}
    return {k: statistics.median(r["wall_s"] for r in rows if (r["op"], r["runtime"]) == k) for k in keys}


def summary(ops: list[str], rows: list[dict], cells: dict) -> list[dict]:
    base = sum(cells[(op, "none")] for op in ops)
    out = []
    for policy in POLICIES:
        per_op = [cells[(op, policy)] for op in ops]
        total = sum(per_op)
        out.append({"runtime": policy, "total_s": round(total, 3), "median_s": round(statistics.median(per_op), 3),
                    "overhead_pct": round((total - base) / base * 100, 1) if base else None,
                    "all_correct": all(r["correct"] for r in rows if r["runtime"] == policy)})
    return out


def summary_table(lines: list[dict], n_ops: int, repeat: int, load: str) -> Table:
    table = Table(title=f"Sandbox overhead: {n_ops} ops, --repeat {repeat} (target: <= {TARGET_PCT:.0f} % over none)",
                  caption=f"load average (1 min) before/after: {load}")
    for name, justify in [("runtime", "left"), ("total s", "right"), ("median s/op", "right"),
                          ("overhead vs none", "right"), ("all correct", "center"), ("target", "center")]:
        table.add_column(name, justify=justify, no_wrap=True)
    for s in lines:
        pct = s["overhead_pct"]
        verdict = "-" if s["runtime"] == "none" else (
            "[green]PASS[/green]" if pct is not None and pct <= TARGET_PCT else "[red]MISS[/red]")
        table.add_row(s["runtime"], f"{s['total_s']:.2f}", f"{s['median_s']:.2f}",
                      "-" if pct is None else f"{pct:+.1f} %", "yes" if s["all_correct"] else "[red]NO[/red]", verdict)
    return table


def op_table(ops: list[str], cells: dict) -> Table:
    table = Table(title="Per-op wall seconds (verify_source; median over repeats)")
    table.add_column("op", no_wrap=True)
    for policy in POLICIES:
        table.add_column(policy, justify="right", no_wrap=True)
    for op in ops:
        table.add_row(op, *(f"{cells[(op, p)]:.2f}" for p in POLICIES))
    return table


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", help="comma-separated subset of the suite (default: every op)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per (op, runtime); the median is kept")
    parser.add_argument("--json", help="also write the raw rows and the summary to this path")
    args = parser.parse_args(argv)
    args.ops = args.ops.split(",") if args.ops else suite_ops()
    if unknown := sorted(set(args.ops) - set(suite_ops())):
        parser.error(f"not suite ops: {', '.join(unknown)} (choose from {', '.join(suite_ops())})")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so `finally` removes the warm container
    load_before = os.getloadavg()[0]
    rows = run_all(args.ops, args.repeat)
    load = f"{load_before:.2f} / {os.getloadavg()[0]:.2f}"
    cells = cell_seconds(rows)
    lines = summary(args.ops, rows, cells)
    if args.json:
        Path(args.json).write_text(json.dumps({"ops": args.ops, "repeat": args.repeat, "target_pct": TARGET_PCT,
                                               "load_avg": load, "summary": lines, "rows": rows}, indent=2))
    console.print(summary_table(lines, len(args.ops), args.repeat, load), op_table(args.ops, cells))
    failed = [r for r in rows if not r["correct"]]
    for r in failed:
        console.print(f"[red]{r['op']} under {r['runtime']} NOT correct:[/red] " + "; ".join(r["reasons"]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
