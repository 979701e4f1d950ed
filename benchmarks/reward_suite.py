"""The suite's known-good kernels through the training interfaces: every op of the suite (ops/*.py)
and of the serving suite (ops/serving/*.py) with the Triton kernel the knowledge keeps for it
(opforge/backends/triton/knowledge/), as a model's reply, scored by verl's reward function from the
dataset row's ground truth (the spec travels in it) and by the Gymnasium environment. Each must be
`correct`; the table says the tier and seconds per op, and the script exits 1 if any is not.

    .venv/bin/python benchmarks/reward_suite.py [--json benchmarks/results/reward_suite.json] [--gym N]

`--gym N`: also run the first N ops as one-turn Gymnasium episodes (default 3; every op costs a
scoring). The sandbox is on (the default runtime); seeds are fixed, so a rerun scores the same."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from opforge.reward import dataset, verl  # noqa: E402

KNOWLEDGE = ROOT / "opforge" / "backends" / "triton" / "knowledge"
SEED = 1234


def reply(kernel: Path) -> str:
    return f"Here is the kernel.\n\n```python\n{kernel.read_text(encoding='utf-8')}```\n"


def pairs() -> list[tuple[dict, Path]]:
    """(dataset row, known-good kernel) for each suite and serving op that has one."""
    rows = dataset.rows(dataset.collect(suite=True, serving=True), knowledge_k=0)
    found = []
    for row in rows:
        op, source = row["extra_info"]["op"], row["data_source"]
        kernel = KNOWLEDGE / ("serving" if "serving" in source else "") / f"{op}.py"
        if kernel.is_file():
            found.append((row, kernel))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--gym", type=int, default=3, help="ops also run as Gymnasium episodes")
    args = parser.parse_args(argv)
    results, started = [], time.monotonic()
    load = os.getloadavg()[0]
    for row, kernel in pairs():
        t0 = time.monotonic()
        score = verl.compute_score(row["data_source"], reply(kernel), row["reward_model"]["ground_truth"],
                                   {"seed": SEED})
        results.append({"op": row["extra_info"]["op"], "source": row["data_source"], "via": "verl",
                        "tier": score["tier"], "score": score["score"], "why": score["why"],
                        "seconds": round(time.monotonic() - t0, 1)})
        print(f"{results[-1]['op']:26s} verl {score['tier']:8s} {score['score']:5.2f} {results[-1]['seconds']:6.1f} s"
              + ("" if score["tier"] == "correct" else f"  {score['why']}"), flush=True)
    verl.close()
    if args.gym:
        import gymnasium

        import opforge.reward.gym_env  # noqa: F401  registers opforge/Kernel-v0

        env = gymnasium.make("opforge/Kernel-v0", max_turns=1, knowledge=0)
        for row, kernel in pairs()[: args.gym]:
            t0 = time.monotonic()
            env.reset(seed=SEED, options={"spec": row["reward_model"]["ground_truth"]})
            _, reward, terminated, _, info = env.step(reply(kernel))
            results.append({"op": row["extra_info"]["op"], "source": row["data_source"], "via": "gym",
                            "tier": info["tier"], "score": reward, "why": info["reward"]["why"],
                            "seconds": round(time.monotonic() - t0, 1)})
            print(f"{results[-1]['op']:26s} gym  {info['tier']:8s} {reward:5.2f} {results[-1]['seconds']:6.1f} s",
                  flush=True)
        env.close()
    bad = [r for r in results if r["tier"] != "correct"]
    total = round(time.monotonic() - started, 1)
    print(f"{len(results) - len(bad)} of {len(results)} correct in {total} s (load {load:.1f} at the start)")
    if args.json:
        Path(args.json).write_text(json.dumps({"total_s": total, "load_at_start": round(load, 2), "seed": SEED,
                                               "cpus": os.cpu_count(), "results": results}, indent=1) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
