"""The exploit corpus scored by the reward (opforge/reward): every exploit kernel the project's tests know
(tests/data/exploits.json: kernel, spec, backend, cheat class) through one Scorer with the sandbox on, as
a training loop would send it (static checks on, raw file text), and one correct control per backend.
Writes each one's tier, reward, first reason and seconds to benchmarks/results/reward_corpus.json.

    .venv/bin/python benchmarks/reward_corpus.py [--only SUBSTRING] [--out PATH]

Exit status: 0 when no exploit scored above `wrong` and every control scored `correct`; 1 otherwise
(each such row is printed). tests/test_reward_corpus.py scores one exploit per class and backend of
the same manifest within the test budget; this scores them all.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from opforge.reward.score import Scorer, Task  # noqa: E402
from opforge.reward.tiers import rank  # noqa: E402

MANIFEST = ROOT / "tests" / "data" / "exploits.json"
SEED = 1234


def task_of(row: dict) -> Task:
    """The row's spec as a Task (with the row's `spec_edits` applied: a float64 variant of a spec)."""
    spec = ROOT / row["spec"]
    source = spec.read_text(encoding="utf-8")
    for old, new in row.get("spec_edits") or []:
        if old not in source:
            raise ValueError(f"{row['kernel']}: spec edit {old!r} not in {row['spec']}")
        source = source.replace(old, new, 1)
    op = row.get("op") or spec.stem
    return Task(source, op, row["backend"], "opforge/exploits", f"opforge/exploits/{op}")


def score(scorer: Scorer, row: dict, seed: int = SEED) -> dict:
    return scorer.score(task_of(row), (ROOT / row["kernel"]).read_text(encoding="utf-8"), seed=seed, raw=True)


def summary(row: dict, reward: dict) -> dict:
    return {"kernel": row["kernel"], "backend": row["backend"], "cls": row.get("cls"), "kind": row.get("kind"),
            "expected": row.get("tier"), "tier": reward["tier"], "reward": reward["reward"],
            "why": (reward["reasons"] or reward["why"] or [""])[0][:160], "seconds": reward["elapsed_s"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="score only rows whose kernel path contains this")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "reward_corpus.json"))
    args = parser.parse_args(argv)
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    rows, bad = [], []
    started = time.monotonic()
    with Scorer() as scorer:
        for kind, entries in (("exploit", manifest["exploits"]), ("control", manifest["controls"])):
            for row in entries:
                if args.only not in row["kernel"]:
                    continue
                result = summary(row, score(scorer, row)) | {"role": kind}
                above = kind == "exploit" and result["tier"] is not None and rank(result["tier"]) > rank("wrong")
                if above or (kind == "control" and result["tier"] != "correct"):
                    bad.append(result)
                rows.append(result)
                print(f"{result['seconds']:7.1f}s {str(result['tier']):8} {row['backend']:13} {row['kernel']}: "
                      f"{result['why'][:90]}", flush=True)
    out = {"manifest": str(MANIFEST.relative_to(ROOT)), "seed": SEED, "cpus": os.cpu_count(),
           "machine": platform.machine(), "total_s": round(time.monotonic() - started, 1), "rows": rows,
           "above_wrong_or_control_failed": bad}
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    for result in bad:
        print(f"FAIL {result['role']} {result['kernel']}: tier {result['tier']}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
