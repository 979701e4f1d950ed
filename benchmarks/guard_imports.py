"""What the run phase's guards cost to set up before a candidate's first call, in a fresh interpreter
each time (as a sandboxed worker starts): torch's import, then the module snapshot and the first op
under the ForwardGuard, as the worker does them (no torch._dynamo), against the same with
torch._dynamo imported as the worker did before (a dispatch mode that keeps torch's Dynamo-disabling
wrapper imports it on its first op). Each cell is the median of --repeat fresh processes, the two
kinds alternating; ratio: the worker's setup over the old one's.

    .venv/bin/python benchmarks/guard_imports.py [--repeat 5]

Exit status: 0 (a measurement); 1 when the worker's setup imported torch._dynamo after all.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

console = Console(width=None if sys.stdout.isatty() else 150)

PROBE = """
import json, sys, time
began = time.perf_counter()
import torch
imported = time.perf_counter()
from torch.utils._python_dispatch import TorchDispatchMode
from opforge.harness import guards
if {old}:
    class Old(TorchDispatchMode):  # torch's default: __torch_dispatch__ behind the Dynamo-disabling wrapper
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {{}}))
    mode = Old()
else:
    mode = guards.ForwardGuard()
snapshot = guards.ModuleSnapshot()
with mode:
    torch.ones(4) + 1
ready = time.perf_counter()
print(json.dumps({{"torch": imported - began, "guards": ready - imported, "dynamo": "torch._dynamo" in sys.modules,
                  "changes": snapshot.changes()}}))
"""


def probe(old: bool) -> dict:
    done = subprocess.run([sys.executable, "-I", "-c", PROBE.format(old=old)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    if done.returncode:
        raise SystemExit(f"guard_imports: the probe failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if args.repeat < 1:
        print("guard_imports: --repeat must be at least 1", file=sys.stderr)
        return 2
    runs: dict[bool, list[dict]] = {True: [], False: []}
    for n in range(args.repeat):
        for old in ((True, False) if n % 2 == 0 else (False, True)):
            runs[old].append(probe(old))
    med = {old: {k: statistics.median(r[k] for r in rs) for k in ("torch", "guards")} for old, rs in runs.items()}
    table = Table(title=f"Guards' setup in a fresh worker process (median of {args.repeat})")
    for col in ("setup", "torch import s", "snapshot + first guarded op s", "torch._dynamo imported"):
        table.add_column(col)
    for old, name in ((True, "with torch._dynamo (before)"), (False, "worker now")):
        table.add_row(name, f"{med[old]['torch']:.2f}", f"{med[old]['guards']:.2f}", str(runs[old][0]["dynamo"]))
    console.print(table)
    ratio = med[False]["guards"] / med[True]["guards"]
    console.print(f"snapshot + first guarded op, now / before: {ratio:.2f}")
    bad = [r for r in runs[False] if r["dynamo"] or r["changes"]]
    if bad:
        print(f"guard_imports: the worker's setup imported torch._dynamo or saw changes: {bad[0]}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
