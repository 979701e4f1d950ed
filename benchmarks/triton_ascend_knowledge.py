"""Every known-good Triton-Ascend kernel (opforge/backends/triton_ascend/knowledge/<op>.py) through the whole
`verify --backend triton_ascend` ladder, in one shared sandbox: verdict, level, the front end's
seconds, the interpreter run's seconds and the total per op. tests/test_knowledge_triton_ascend.py
verifies three of them; this covers all (about 4 minutes on 2 cores at the default 5 trials).

Run from the repo root:
    .venv/bin/python benchmarks/triton_ascend_knowledge.py [--ops softmax,rms_norm] [--trials 5]
Exit status: 1 when a known-good kernel is judged incorrect (its reasons are printed), else 0.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from opforge.harness.verify import VerifyOptions, prepare, verify_source
from opforge.sandbox import get_sandbox

ROOT = Path(__file__).resolve().parent.parent
KNOWLEDGE = ROOT / "opforge" / "backends" / "triton_ascend" / "knowledge"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", help="comma-separated ops (default: every example)")
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    ops = args.ops.split(",") if args.ops else sorted(p.stem for p in KNOWLEDGE.glob("*.py") if not p.stem.startswith("_"))
    options = VerifyOptions(backend="triton_ascend", device="cpu", sandbox="none", trials=args.trials)
    sandbox, failed = get_sandbox("none"), 0
    print(f"{'op':<16}{'verdict':<10}{'level':<20}{'frontend s':>11}{'cpu_run s':>11}{'total s':>9}")
    try:
        for op in ops:
            began = time.perf_counter()
            spec, hardware = prepare(ROOT / "ops" / f"{op}.py", options)
            verdict = verify_source(spec, hardware, (KNOWLEDGE / f"{op}.py").read_text(), options, sandbox)
            steps = verdict["steps"]
            front, run = steps["frontend_compile"]["seconds"] or 0.0, steps["cpu_run"]["seconds"] or 0.0
            print(f"{op:<16}{'correct' if verdict['correct'] else 'WRONG':<10}{verdict['level']:<20}"
                  f"{front:>11.2f}{run:>11.2f}{time.perf_counter() - began:>9.1f}")
            if not verdict["correct"]:
                failed += 1
                print("  " + "\n  ".join(verdict["reasons"]))
    finally:
        sandbox.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
