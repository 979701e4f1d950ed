"""The CPU run's cost model (opforge/harness/cost.py) against what verifications take, measured in
the same run: per spec, the offline expert's first draft verified on the CPU (Triton's interpreter
with the memory model, the default sandbox) at the sizes the harness picks for the budget.

    .venv/bin/python benchmarks/cpu_cost.py [SPEC ...] [--set kb_level1,kb_level2] [--budget S] [--json PATH]

Columns: the sizes used, the estimate, the verification's wall seconds (spec loading excluded: the
judge's preparation, the sandboxed build and run), measured over estimated, the first call's and all
calls' seconds by the worker's clock, whether the kernel verified. A ratio far from 1 on a family of
specs is what to calibrate the backend's `cpu_cost` on; the budget holds when wall / budget stays under 1.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from opforge.codegen import Unsupported, generate  # noqa: E402
from opforge.harness import cost  # noqa: E402
from opforge.harness.errors import OpforgeError  # noqa: E402
from opforge.harness.verify import VerifyOptions, prepare, verify_source  # noqa: E402


def specs_of(args) -> list[Path]:
    found = [Path(p) for p in args.specs]
    for name in filter(None, (args.set or "").split(",")):
        folder = ROOT / "benchmarks" / "expert_specs" / name
        if not folder.is_dir():
            raise SystemExit(f"cpu_cost: no spec set {name!r} (no folder {folder})")
        found += sorted(folder.glob("*.py"))
    if not found:
        raise SystemExit("cpu_cost: name specs or a --set")
    return found


def measure(path: Path, options: VerifyOptions) -> dict:
    row: dict = {"spec": path.stem}
    try:
        spec, hardware = prepare(path, options)
    except OpforgeError as exc:
        return {**row, "problem": str(exc)[:120]}
    row.update(sizes=spec.sizes_used, estimated_s=(spec.cost or {}).get("estimated_s"))
    try:
        kernel = generate(spec.source, spec.name, spec.sizes_used, backend=options.backend)
    except Unsupported as exc:
        return {**row, "problem": f"unsupported: {str(exc)[:100]}"}
    began = time.perf_counter()
    verdict = verify_source(spec, hardware, kernel.render(kernel.space[0]), options)
    row.update(wall_s=round(time.perf_counter() - began, 1), correct=verdict["correct"],
               measured=verdict["sizes"].get("measured_s"), reason=(verdict["reasons"] or [""])[0][:80])
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("specs", nargs="*")
    parser.add_argument("--set", help="comma-separated folders of benchmarks/expert_specs/")
    parser.add_argument("--budget", type=float, help="OPFORGE_CPU_BUDGET_S for this run")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.budget is not None:
        os.environ["OPFORGE_CPU_BUDGET_S"] = str(args.budget)
        cost.BUDGET_S = args.budget
    options = VerifyOptions(device="cpu", seed=1, profile=False)
    rows = []
    print(f"{'spec':34} {'est s':>6} {'wall s':>7} {'wall/est':>8} {'1st call':>8} {'calls s':>7}  ok  sizes")
    for path in specs_of(args):
        row = measure(path, options)
        rows.append(row)
        if "problem" in row:
            print(f"{row['spec']:34} {row['problem']}")
            continue
        est, wall, m = row["estimated_s"], row["wall_s"], row["measured"] or {}
        ratio = f"{wall / est:8.2f}" if est else f"{'-':>8}"
        print(f"{row['spec']:34} {est or '-':>6} {wall:7.1f} {ratio} {m.get('first_call') or 0:8.2f} "
              f"{m.get('calls') or 0:7.1f}  {'yes' if row['correct'] else 'no ':3} {row['sizes']}", flush=True)
    timed = [r for r in rows if r.get("estimated_s") and "wall_s" in r]
    if timed:
        ratios = [r["wall_s"] / r["estimated_s"] for r in timed]
        walls = sorted(r["wall_s"] for r in timed)
        print(f"\n{len(timed)} specs: wall/estimate median {statistics.median(ratios):.2f}, max {max(ratios):.2f}; "
              f"wall median {statistics.median(walls):.1f} s, p90 {walls[max(0, -(-9 * len(walls) // 10) - 1)]:.1f} s, "
              f"over the {cost.BUDGET_S:g} s budget: {sum(w > cost.BUDGET_S for w in walls)}; "
              f"load {os.getloadavg()[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "budget_s": cost.BUDGET_S}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
