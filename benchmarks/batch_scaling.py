"""Batch scaling: the op suite through `run_batch` with --jobs 1 and --jobs 2 (local worker
processes), and Ray's overhead per op against local execution.

In one invocation, each configuration gets a fresh registry (so no op is skipped as already
verified) and runs the same ops with the offline expert drafter on the CPU (Triton's interpreter):
  * local, jobs 1 and local, jobs 2: the ratio of their walls is the speed-up from a second worker
    (at most 2x on a 2-core machine, less when verification itself uses both cores);
  * ray, jobs 1 (a local Ray instance started before the clock, its start-up reported apart):
    (ray wall - local jobs-1 wall) / ops is Ray's overhead per op: task dispatch, a fresh worker
    importing the loop, the throwaway registry and the import into the driver's registry.
The load average is printed alongside: the numbers mean little if something else heavy ran.

    .venv/bin/python benchmarks/batch_scaling.py [--ops 4] [--budget 1] [--trials 2] [--no-ray] [--json out.json]

Exit status: 0 even when scaling is poor (it is a measurement); 1 when an op that verified under one
configuration did not under another (the report rows are printed).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from opforge.agents.batch import BatchOptions, run_batch  # noqa: E402
from opforge.agents.config import Budget  # noqa: E402
from opforge.agents.run import RunOptions  # noqa: E402
from opforge.harness.verify import VerifyOptions  # noqa: E402
from opforge.registry import Registry  # noqa: E402

console = Console(width=None if sys.stdout.isatty() else 140)


def one_batch(specs: list[Path], executor: str, jobs: int, args) -> dict:
    run = RunOptions(drafter="expert", budget=Budget(rounds=args.budget, candidates=1),
                     verify=VerifyOptions(device="cpu", trials=args.trials, sandbox=args.sandbox))
    with tempfile.TemporaryDirectory(prefix="opforge-bench-") as tmp, Registry(Path(tmp) / "opforge.db") as reg:
        started = time.perf_counter()
        report = run_batch(specs, BatchOptions(run=run, jobs=jobs, executor=executor), reg)
        wall = time.perf_counter() - started
    times = sorted(r["time_s"] for r in report.rows if r["time_s"] is not None)
    return {"config": f"{executor}, jobs {jobs}", "wall_s": wall, "ops": len(report.rows),
            "verified": sorted(r["op"] for r in report.rows if r["status"] == "verified"),
            "median_op_s": times[len(times) // 2] if times else None, "rows": report.rows}


def ray_batch(specs: list[Path], args) -> tuple[dict, float]:
    import ray

    started = time.perf_counter()
    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
    init_s = time.perf_counter() - started
    try:
        return one_batch(specs, "ray", 1, args), init_s
    finally:
        ray.shutdown()


def render(results: list[dict], ray_init_s: float | None) -> None:
    base = results[0]
    table = Table("configuration", "ops", "verified", "wall s", "median s/op", "vs local jobs 1",
                  title=f"batch scaling ({base['ops']} ops, load average {os.getloadavg()[0]:.2f})")
    for r in results:
        ratio = base["wall_s"] / r["wall_s"] if r["wall_s"] else 0.0
        table.add_row(r["config"], str(r["ops"]), str(len(r["verified"])), f"{r['wall_s']:.1f}",
                      f"{r['median_op_s']:.1f}" if r["median_op_s"] is not None else "—", f"{ratio:.2f}x")
    console.print(table)
    ray_row = next((r for r in results if r["config"].startswith("ray")), None)
    if ray_row:
        per_op = (ray_row["wall_s"] - base["wall_s"]) / max(1, base["ops"])
        console.print(f"Ray overhead per op vs local (jobs 1): {per_op:+.2f} s; Ray start-up {ray_init_s:.1f} s "
                      "(once per batch, not in the walls above)")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ops", type=int, help="the first N suite ops (default: all)")
    p.add_argument("--budget", type=int, default=1, help="rounds per op (default 1)")
    p.add_argument("--trials", type=int, default=2, help="trials per input variant (default 2)")
    p.add_argument("--sandbox", help="docker, jail or none (default: auto)")
    p.add_argument("--no-ray", action="store_true", help="skip the Ray measurement")
    p.add_argument("--json", help="write the results (with every report row) here")
    args = p.parse_args()
    specs = sorted((ROOT / "ops").glob("*.py"))[: args.ops]
    results = [one_batch(specs, "local", 1, args), one_batch(specs, "local", 2, args)]
    ray_init_s = None
    if not args.no_ray:
        ray_result, ray_init_s = ray_batch(specs, args)
        results.append(ray_result)
    render(results, ray_init_s)
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results, "ray_init_s": ray_init_s}, indent=2, default=str))
    verified = [set(r["verified"]) for r in results]
    if any(v != verified[0] for v in verified):
        for r in results:
            console.print(r["config"], [(row["op"], row["status"], row["error"]) for row in r["rows"]])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
