"""Verification time per backend, this tree against a baseline revision, measured in one run.

Each suite op (ops/<op>.py) with a known-good kernel in a backend's knowledge folder is verified on
the CPU (`opforge verify SPEC KERNEL --backend B --device cpu --seed 1 --json`) by this tree and by
the baseline (`git archive REV` unpacked beside, with a venv that borrows this one's libraries, as
scripts/mutation_check.py makes its copies), alternating per op with the order rotating, so drift in
the machine's speed hits both. The time is the CLI's wall clock (process start, spec loading, the
sandboxed build and run, the judge). Ratio: this tree over the baseline; per backend the median.

    .venv/bin/python benchmarks/verify_time.py --baseline 9309f4f [--backends triton,triton_ascend]
        [--ops softmax,rms_norm] [--repeat 1]

9309f4f is the tree before issue #32 (the CPU run's memory model, compiled = executed, resources,
coverage): that issue's budget is a median of at most 1.5x. Exit status 1 when a known-good kernel
is refused by either tree.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from mutation_check import check_imports, overlay_venv  # noqa: E402

BACKENDS = ("triton", "triton_ascend")


def unpack(rev: str, dest: Path) -> Path:
    """The baseline's tracked files under dest, with a venv whose opforge is that tree's."""
    archive = subprocess.run(["git", "archive", "--format=tar", rev], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    python = overlay_venv(dest)
    for shared in ("ascend", "cuda"):  # the toolchain prefixes make setup installs into .venv/
        if (ROOT / ".venv" / shared).is_dir():
            (dest / ".venv" / shared).symlink_to(ROOT / ".venv" / shared)
    if problem := check_imports(python, dest):
        raise SystemExit(f"verify_time: {problem}")
    return python


def cases(backends: list[str], ops: list[str] | None) -> list[tuple[str, str, Path, Path]]:
    found = []
    for backend in backends:
        for kernel in sorted((ROOT / "opforge" / "backends" / backend / "knowledge").glob("*.py")):
            spec = ROOT / "ops" / kernel.name
            if spec.is_file() and (ops is None or kernel.stem in ops):
                found.append((backend, kernel.stem, spec, kernel))
    return found


def timed(python: Path, cwd: Path, backend: str, spec: Path, kernel: Path) -> tuple[float, dict]:
    cmd = [str(python), "-m", "opforge.cli", "verify", str(spec), str(kernel), "--backend", backend,
           "--device", "cpu", "--seed", "1", "--json"]
    began = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - began
    try:
        verdict = json.loads(done.stdout)
    except ValueError:
        verdict = {"correct": False, "reasons": [done.stderr.strip()[-200:]]}
    return wall, verdict


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="9309f4f", help="git revision to compare with (default 9309f4f)")
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--ops", help="comma-separated suite ops (default: every op with a known-good kernel)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per cell, the median kept")
    args = parser.parse_args(argv)
    todo = cases(args.backends.split(","), set(args.ops.split(",")) if args.ops else None)
    base = Path(tempfile.mkdtemp(prefix="opforge-verify-time-"))
    bad = 0
    try:
        old_python = unpack(args.baseline, base)
        trees = {"baseline": (old_python, base), "this tree": (ROOT / ".venv" / "bin" / "python", ROOT)}
        rows: list[tuple] = []
        for n, (backend, op, spec, kernel) in enumerate(todo):
            order = list(trees) if n % 2 == 0 else list(reversed(trees))
            walls: dict[str, list[float]] = {name: [] for name in trees}
            for _ in range(args.repeat):
                for name in order:
                    python, cwd = trees[name]
                    wall, verdict = timed(python, cwd, backend, spec, kernel)
                    walls[name].append(wall)
                    if not verdict.get("correct"):
                        bad += 1
                        print(f"{name}: {backend} {op}: refused: {(verdict.get('reasons') or ['?'])[0][:160]}",
                              file=sys.stderr)
            old, new = statistics.median(walls["baseline"]), statistics.median(walls["this tree"])
            rows.append((backend, op, old, new, new / old))
            print(f"{backend:14} {op:18} baseline {old:7.1f} s   this tree {new:7.1f} s   ratio {new / old:5.2f}",
                  flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"\n{'backend':14} {'ops':>4} {'baseline s':>11} {'this tree s':>12} {'median ratio':>13}")
    for backend in dict.fromkeys(r[0] for r in rows):
        mine = [r for r in rows if r[0] == backend]
        print(f"{backend:14} {len(mine):>4} {statistics.median(r[2] for r in mine):>11.1f} "
              f"{statistics.median(r[3] for r in mine):>12.1f} {statistics.median(r[4] for r in mine):>13.2f}")
    print(f"(baseline {args.baseline}; {args.repeat} run(s) per cell; the CLI's wall clock, CPU, seed 1)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
