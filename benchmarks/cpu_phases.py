"""One CPU verification job or two: the build and the interpreted run forked from one worker that
imported torch once (worker.run_phases, the default) against the two jobs of old, one process each
(`verify.PHASED = False`), measured in one run.

For each op, the wall clock of `verify_source` (spec loading excluded) of ops/<name>.py against
backends/triton/knowledge/<name>.py, and of a wrong kernel (that known-good kernel with its output
scaled by 1.01, so the run finds the mismatch), under the chosen runtime (default jail), Triton's
interpreter, seed 1. Runs alternate per op (two jobs, one job; the order rotating from op to op, so
drift spreads over both); one untimed verification warms the page cache first; --repeat N keeps each
cell's median. Ratio: one job's time over two jobs'.

    .venv/bin/python benchmarks/cpu_phases.py [--ops add_mul_relu,softmax] [--repeat 3] [--sandbox jail]

Exit status: 0 (a measurement); 1 when a known-good kernel is judged incorrect or a wrong one correct,
either way.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from opforge.harness import verify as verify_module  # noqa: E402
from opforge.harness.verify import VerifyOptions, prepare, read_candidate, verify_source  # noqa: E402

console = Console(width=None if sys.stdout.isatty() else 150)
KNOWLEDGE = ROOT / "opforge" / "backends" / "triton" / "knowledge"
DEFAULT_OPS = "add_mul_relu,softmax,layer_norm,cross_entropy"


def wrong(source: str) -> str:
    """The known-good kernel with ModelNew's output scaled by 1.01 on the host: wrong values (and
    host compute) that the run must find."""
    return source.replace("class ModelNew(", "class _Right(", 1) + """

class ModelNew(_Right):
    def forward(self, *args):
        return super().forward(*args) * 1.01
"""


def timed(op: str, source: str, phased: bool, sandbox: str) -> tuple[float, dict]:
    verify_module.PHASED = phased
    options = VerifyOptions(seed=1, device="cpu", sandbox=sandbox)
    spec, hardware = prepare(ROOT / "ops" / f"{op}.py", options)
    began = time.perf_counter()
    verdict = verify_source(spec, hardware, source, options)
    return time.perf_counter() - began, verdict


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default=DEFAULT_OPS)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--sandbox", default="jail")
    args = parser.parse_args()
    ops = [op for op in args.ops.split(",") if op]
    missing = [op for op in ops if not (KNOWLEDGE / f"{op}.py").is_file() or not (ROOT / "ops" / f"{op}.py").is_file()]
    if missing:
        print(f"cpu_phases: no suite op with a known-good Triton kernel: {', '.join(missing)}", file=sys.stderr)
        return 2
    timed(ops[0], read_candidate(KNOWLEDGE / f"{ops[0]}.py"), True, args.sandbox)  # page cache
    table = Table(title=f"CPU verification: one phased job against two jobs ({args.sandbox}, "
                        f"median of {args.repeat}, load {os.getloadavg()[0]:.1f})")
    for column in ("op", "kernel", "two jobs s", "one job s", "one / two"):
        table.add_column(column, justify="left" if column in ("op", "kernel") else "right")
    bad, totals = [], {True: 0.0, False: 0.0}
    for index, op in enumerate(ops):
        good = read_candidate(KNOWLEDGE / f"{op}.py")
        for kind, source, expect in (("known-good", good, True), ("wrong", wrong(good), False)):
            seconds: dict[bool, list[float]] = {True: [], False: []}
            for _ in range(args.repeat):
                for phased in ((True, False) if index % 2 else (False, True)):
                    spent, verdict = timed(op, source, phased, args.sandbox)
                    seconds[phased].append(spent)
                    if verdict["correct"] != expect:
                        bad.append(f"{op} {kind} ({'one job' if phased else 'two jobs'}): "
                                   f"{verdict['reasons'][:1] or 'correct'}")
            two, one = statistics.median(seconds[False]), statistics.median(seconds[True])
            totals[False] += two
            totals[True] += one
            table.add_row(op, kind, f"{two:.1f}", f"{one:.1f}", f"{one / two:.2f}")
    table.add_row("all", "", f"{totals[False]:.1f}", f"{totals[True]:.1f}", f"{totals[True] / totals[False]:.2f}")
    console.print(table)
    for line in bad:
        print(f"cpu_phases: {line}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
