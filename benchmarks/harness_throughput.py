"""Harness throughput: how fast `verify` judges the suite's known-good kernels on the CPU.

Measures, in one run:
  * every suite op (ops/<name>.py against backends/triton/knowledge/<name>.py) verified with the default
    options (5 trials, Triton's interpreter), sequentially or with --jobs N in parallel;
  * verifications per minute (ops / wall clock of the whole suite loop) and median seconds per op;
  * the two targets: an elementwise op (add_mul_relu, verified alone) under 10 s, and a 512^3
    matmul at full size (a child process with OPFORGE_CPU_MAX_ELEMENTS raised, since verify reads
    it at import) under 60 s.

Run from the repo root:
    .venv/bin/python benchmarks/harness_throughput.py [--jobs 2] [--ops add_mul_relu,softmax]
                                                      [--trials 5] [--json rows.json]

Exit status: 0 even when a target is missed (it is a measurement); 1 when a known-good kernel is
judged incorrect (its reasons are printed).
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from opforge.harness.verify import VerifyOptions, verify  # noqa: E402

ELEMENTWISE_OP, ELEMENTWISE_TARGET_S = "add_mul_relu", 10.0
MATMUL_OP, MATMUL_TARGET_S, MATMUL_FULL = "matmul", 60.0, {"M": 512, "N": 512, "K": 512}
FULL_SIZE_MAX_ELEMENTS = 1 << 21  # A, B and C of a 512^3 matmul: 3 * 512 * 512 elements
console = Console(width=None if sys.stdout.isatty() else 140)  # no wrapping when piped


def suite_ops() -> list[str]:
    return sorted(p.stem for p in (ROOT / "ops").glob("*.py")
                  if (ROOT / "opforge" / "backends" / "triton" / "knowledge" / p.name).is_file())


def family_of(op: str) -> str:
    """The spec's OPFORGE["family"], read from its source without importing it."""
    for node in ast.parse((ROOT / "ops" / f"{op}.py").read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "OPFORGE" for t in node.targets):
            for kw in getattr(node.value, "keywords", []):
                if kw.arg == "family":
                    return ast.literal_eval(kw.value)
    return "?"


def verify_op(op: str, trials: int, seed: int) -> dict:
    """One verification, timed around the whole `verify` call (spec load included)."""
    started = time.perf_counter()
    try:
        verdict = verify(ROOT / "ops" / f"{op}.py", ROOT / "opforge" / "backends" / "triton" / "knowledge" / f"{op}.py",
                         VerifyOptions(seed=seed, trials=trials, device="cpu"))
    except Exception as exc:  # a spec or setup error: report it as an incorrect row
        verdict = {"correct": False, "reasons": [f"{type(exc).__name__}: {exc}"], "sizes": {}, "jobs": {}}
    jobs = verdict.get("jobs", {})
    return {"op": op, "family": family_of(op), "sizes": verdict.get("sizes", {}).get("used", {}),
            "correct": bool(verdict["correct"]), "reasons": verdict.get("reasons", []),
            "sandbox": verdict.get("sandbox"),
            "build_s": jobs.get("build", {}).get("wall_s"), "run_s": jobs.get("run", {}).get("wall_s"),
            "total_s": round(time.perf_counter() - started, 3)}


def run_suite(ops: list[str], jobs: int, trials: int, seed: int) -> tuple[list[dict], float]:
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        rows = list(pool.map(lambda op: verify_op(op, trials, seed), ops))
    return rows, time.perf_counter() - started


def measure_full_matmul(trials: int, seed: int) -> dict:
    """The matmul row from a child run with the CPU size cap raised so 512^3 is not shrunk."""
    env = {**os.environ, "OPFORGE_CPU_MAX_ELEMENTS": str(FULL_SIZE_MAX_ELEMENTS)}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        cmd = [sys.executable, __file__, "--ops", MATMUL_OP, "--trials", str(trials), "--seed", str(seed),
               "--json", str(out), "--no-targets"]
        proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
        if not out.is_file():
            return {"op": MATMUL_OP, "family": "matmul", "sizes": {}, "correct": False, "total_s": None,
                    "reasons": [f"child exited {proc.returncode}: {proc.stderr.strip()[-300:]}"]}
        return json.loads(out.read_text())["rows"][0]


def fmt(value, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def fmt_sizes(sizes: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in sizes.items()) or "-"


def op_table(rows: list[dict]) -> Table:
    table = Table(title="Per-op verification (CPU, Triton interpreter)")
    for name, justify in [("op", "left"), ("family", "left"), ("sizes used", "left"), ("correct", "center"),
                          ("build s", "right"), ("run s", "right"), ("total s", "right")]:
        table.add_column(name, justify=justify, no_wrap=True)
    for r in rows:
        table.add_row(r["op"], r["family"], fmt_sizes(r["sizes"]), "yes" if r["correct"] else "[red]NO[/red]",
                      fmt(r["build_s"]), fmt(r["run_s"]), fmt(r["total_s"]))
    return table


def family_table(rows: list[dict]) -> Table:
    table = Table(title="Per-family")
    for name, justify in [("family", "left"), ("ops", "right"), ("median total s", "right")]:
        table.add_column(name, justify=justify)
    families: dict[str, list[float]] = {}
    for r in rows:
        families.setdefault(r["family"], []).append(r["total_s"])
    for family, totals in sorted(families.items()):
        table.add_row(family, str(len(totals)), fmt(statistics.median(totals)))
    return table


def target_line(name: str, row: dict, target_s: float, ok_extra: bool = True) -> list[str]:
    value = row.get("total_s")
    met = value is not None and row["correct"] and ok_extra and value < target_s
    return [name, fmt(value), f"< {target_s:.0f}", "[green]PASS[/green]" if met else "[red]MISS[/red]"]


def summary_table(rows: list[dict], wall_s: float, jobs: int, targets: list[list[str]]) -> Table:
    sandboxes = ", ".join(sorted({str(r.get("sandbox")) for r in rows}))
    table = Table(title=f"Summary (--jobs {jobs}, sandbox {sandboxes})")
    for name, justify in [("measure", "left"), ("value", "right"), ("target", "right"), ("", "center")]:
        table.add_column(name, justify=justify)
    table.add_row("suite wall clock s", fmt(wall_s), "", "")
    table.add_row("verifications per minute", fmt(len(rows) / wall_s * 60), "", "")
    table.add_row("median s per op", fmt(statistics.median(r["total_s"] for r in rows)), "", "")
    for line in targets:
        table.add_row(*line)
    return table


def measure_targets(trials: int, seed: int) -> tuple[list[list[str]], list[dict]]:
    """The two targets, each measured alone after the suite loop; returns table lines and rows."""
    elementwise = verify_op(ELEMENTWISE_OP, trials, seed)
    matmul = measure_full_matmul(trials, seed)
    full = {k: matmul["sizes"].get(k) for k in MATMUL_FULL} == MATMUL_FULL  # else a MISS: it was shrunk
    lines = [target_line(f"{ELEMENTWISE_OP} alone s ({fmt_sizes(elementwise['sizes'])})", elementwise,
                         ELEMENTWISE_TARGET_S),
             target_line(f"matmul 512^3 s ({fmt_sizes(matmul['sizes'])})", matmul, MATMUL_TARGET_S, full)]
    return lines, [elementwise, matmul]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", help="comma-separated subset of the suite (default: every op)")
    parser.add_argument("--jobs", type=int, default=1, help="verifications in parallel (default 1)")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--json", help="also write the rows to this path")
    parser.add_argument("--no-targets", action="store_true", help="skip the two target measurements")
    args = parser.parse_args(argv)
    args.ops = args.ops.split(",") if args.ops else suite_ops()
    if unknown := sorted(set(args.ops) - set(suite_ops())):
        parser.error(f"not suite ops: {', '.join(unknown)} (choose from {', '.join(suite_ops())})")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rows, wall_s = run_suite(args.ops, args.jobs, args.trials, args.seed)
    targets, target_rows = ([], []) if args.no_targets else measure_targets(args.trials, args.seed)
    if args.json:
        Path(args.json).write_text(json.dumps({"jobs": args.jobs, "wall_s": wall_s, "rows": rows,
                                               "targets": target_rows}, indent=2))
    console.print(op_table(rows), family_table(rows), summary_table(rows, wall_s, args.jobs, targets))
    failed = [r for r in rows + target_rows if not r["correct"]]
    for r in failed:
        console.print(f"[red]{r['op']} known-good kernel NOT correct:[/red] " + "; ".join(r["reasons"]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
