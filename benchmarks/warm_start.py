"""The jail's warm start against its cold start, measured in one run: each verification job forked
from a zygote that imported torch once (sandbox/warm.py, the default) against a fresh `python -I -B`
that imports it (`OPFORGE_WARM=0`), in the same bubblewrap jail.

For each op, the wall clock of `verify_source` (spec loading excluded) of a known-good kernel and of a
wrong one (its output scaled by 1.01 on the host), seed 1, Triton's interpreter: the test suite's tiny
softmax (tests/data) and suite ops with their known-good kernels. Runs alternate per op (the order
rotating from op to op); the zygote is started, and timed, before the first cell; --repeat N keeps
each cell's median. Ratio: warm over cold.

    .venv/bin/python benchmarks/warm_start.py [--ops tiny_softmax,add_mul_relu,softmax] [--repeat 3]

Exit status: 0 (a measurement); 1 when a verdict is wrong either way, or a warm job ran cold; 2 when
the machine has no bubblewrap jail.
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

from benchmarks.cpu_phases import wrong  # noqa: E402  (the known-good kernel, output scaled by 1.01 on the host)
from opforge.harness.verify import VerifyOptions, prepare, read_candidate, verify_source  # noqa: E402
from opforge.sandbox import jail  # noqa: E402

console = Console(width=None if sys.stdout.isatty() else 150)
KNOWLEDGE = ROOT / "opforge" / "backends" / "triton" / "knowledge"
TESTS = ROOT / "tests" / "data"
DEFAULT_OPS = "tiny_softmax,add_mul_relu,softmax,layer_norm"


def sources(op: str) -> tuple[Path, str] | None:
    """(spec, known-good kernel) of a suite op or of the tests' tiny softmax."""
    if op == "tiny_softmax":
        return TESTS / "specs" / "tiny_softmax.py", read_candidate(TESTS / "kernels" / "good.py")
    spec, kernel = ROOT / "ops" / f"{op}.py", KNOWLEDGE / f"{op}.py"
    return (spec, read_candidate(kernel)) if spec.is_file() and kernel.is_file() else None


def timed(spec_path: Path, source: str, warm_on: bool) -> tuple[float, dict]:
    os.environ["OPFORGE_WARM"] = "1" if warm_on else "0"
    options = VerifyOptions(seed=1, device="cpu", sandbox="jail")
    spec, hardware = prepare(spec_path, options)
    began = time.perf_counter()
    verdict = verify_source(spec, hardware, source, options)
    return time.perf_counter() - began, verdict


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default=DEFAULT_OPS)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    if reason := jail.unavailable() or (jail.tool() != "bwrap" and "the warm start needs bubblewrap"):
        print(f"warm_start: no bubblewrap jail here: {reason}", file=sys.stderr)
        return 2
    ops = [op for op in args.ops.split(",") if op]
    found = {op: sources(op) for op in ops}
    if missing := [op for op, pair in found.items() if pair is None]:
        print(f"warm_start: no suite op with a known-good Triton kernel: {', '.join(missing)}", file=sys.stderr)
        return 2
    began = time.perf_counter()
    spec_path, good = found[ops[0]]
    timed(spec_path, good, True)  # starts this process's zygote (and warms the page cache)
    first = time.perf_counter() - began
    table = Table(title=f"CPU verification in the jail: warm against cold start (median of {args.repeat}, "
                        f"load {os.getloadavg()[0]:.1f})")
    for column in ("op", "kernel", "cold s", "warm s", "warm / cold"):
        table.add_column(column, justify="left" if column in ("op", "kernel") else "right")
    bad, totals = [], {True: 0.0, False: 0.0}
    for index, op in enumerate(ops):
        spec_path, good = found[op]
        for kind, source, expect in (("known-good", good, True), ("wrong", wrong(good), False)):
            seconds: dict[bool, list[float]] = {True: [], False: []}
            for _ in range(args.repeat):
                for warm_on in ((True, False) if index % 2 else (False, True)):
                    spent, verdict = timed(spec_path, source, warm_on)
                    seconds[warm_on].append(spent)
                    if verdict["correct"] != expect:
                        bad.append(f"{op} {kind} ({'warm' if warm_on else 'cold'}): {verdict['reasons'][:1] or 'correct'}")
            cold, hot = statistics.median(seconds[False]), statistics.median(seconds[True])
            totals[False] += cold
            totals[True] += hot
            table.add_row(op, kind, f"{cold:.1f}", f"{hot:.1f}", f"{hot / cold:.2f}")
    table.add_row("all", "", f"{totals[False]:.1f}", f"{totals[True]:.1f}", f"{totals[True] / totals[False]:.2f}")
    console.print(table)
    console.print(f"first verification, with the zygote's start: {first:.1f} s")
    if jail._warm_broken:
        bad.append(f"warm starts broke and jobs ran cold: {jail._warm_broken}")
    for line in bad:
        print(f"warm_start: {line}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
