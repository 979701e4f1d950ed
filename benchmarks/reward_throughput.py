"""Reward throughput: rewards per minute of `opforge reward-server` on this machine, sandbox on.

A mixed batch of the suite's small ops (ops/*.py), sent over HTTP by concurrent clients, as a
training step would: correct kernels (the suite's own), wrong ones (a softmax without the max
subtraction, one without its row mask), cheats (zeros, a cached copy, PyTorch's softmax behind a
launch), a kernel that does not compile (an arange of 3), unusable replies (no code, a syntax error), and a hostile
one that never returns (it costs its sandbox job's full time limit, as it would in training).

Measures, in one run:
  * local executor, --workers N (default 2): rewards per minute over the batch (after one warm-up
    request per worker, which is reported apart: a server pays it once), and per tier the scoring
    latency (the worker's time on the request: median, p90);
  * Ray executor on a local Ray instance with 2 then 4 worker processes (`--ray 0` skips it): the
    same batch without the hang, rewards per minute and the 4/2 ratio;
  * the load average at the start and end: other work on the machine slows every number here.

    .venv/bin/python benchmarks/reward_throughput.py [--workers 2] [--rounds 1] [--ray 1]
                                                     [--json benchmarks/results/reward_throughput.json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from opforge.reward.server import RewardServer, make_pool  # noqa: E402

KNOWLEDGE = ROOT / "opforge" / "backends" / "triton" / "knowledge"
DATA = ROOT / "tests" / "data" / "kernels"
CORRECT_OPS = ("add_mul_relu", "softmax", "silu", "rms_norm", "row_sum", "gelu_tanh", "layer_norm", "softplus")
CLIENTS, PER_POST = 4, 2  # concurrent HTTP clients, requests per POST


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def item(op: str, answer: str, kind: str, raw: bool = True) -> tuple[str, dict]:
    return kind, {"task": {"spec": text(ROOT / "ops" / f"{op}.py"), "op": op, "backend": "triton"}, "answer": answer,
                  "seed": 1234, "raw": raw}


def mixed(hostile: bool = True) -> list[tuple[str, dict]]:
    """(expected tier, request) for the mixed batch."""
    softmax = text(KNOWLEDGE / "softmax.py")
    rows = [item(op, text(KNOWLEDGE / f"{op}.py"), "correct") for op in CORRECT_OPS]
    rows += [item("softmax", text(DATA / "hostile_softmax_no_max.py"), "wrong"),  # NaN on scaled inputs
             item("gelu_erf", text(DATA / "hostile_gelu_tanh.py"), "wrong"),
             item("softmax", text(DATA / "hostile_system_exit.py"), "wrong")]
    rows += [item("softmax", text(DATA / name), "cheat") for name in ("cheat_cache_copy.py", "cheat_torch_compute.py")]
    rows.append(item("softmax", text(DATA / "cheat_zeros.py"), "wrong"))  # constant output beside failed values: wrong
    rows += [item("softmax", softmax.replace("tl.arange(0, BLOCK)", "tl.arange(0, 3)", 1), "build"),
             item("softmax", "I would write this kernel with Triton, but here is only my plan.", "unusable", raw=False),
             item("silu", "```python\nimport torch\nclass ModelNew(torch.nn.Module:\n```", "unusable", raw=False)]
    if hostile:  # first: a stream keeps the other workers busy while it runs out its limit (at the end, a
        rows.insert(0, item("softmax", text(DATA / "hang.py"), "wrong"))  # lone tail would time only the limit)
    return rows


def post(url: str, reqs: list[dict]) -> list[dict]:
    body = json.dumps({"requests": reqs}).encode()
    while True:
        request = urllib.request.Request(url + "/score", data=body, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=1800) as resp:
                return json.loads(resp.read())["results"]
        except urllib.error.HTTPError as exc:
            if exc.code != 503:
                raise
            time.sleep(float(exc.headers.get("Retry-After", "1")))


def run_batch(url: str, rows: list[tuple[str, dict]]) -> tuple[float, list[tuple[str, dict]]]:
    """Wall seconds and (expected, reward) for every row, sent by CLIENTS threads in POSTs of PER_POST."""
    chunks = [rows[i:i + PER_POST] for i in range(0, len(rows), PER_POST)]
    out: list = [None] * len(chunks)
    lock = threading.Lock()
    todo = list(range(len(chunks)))

    def client() -> None:
        while True:
            with lock:
                if not todo:
                    return
                i = todo.pop(0)
            out[i] = list(zip([k for k, _ in chunks[i]], post(url, [r for _, r in chunks[i]])))

    started = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.monotonic() - started, [pair for chunk in out for pair in chunk]


def served(executor: str, workers: int, rows, sandbox: str | None = None, warm: bool = True) -> dict:
    options = {"trials": 2, "timeout_s": 600.0, "sandbox": sandbox}
    started = time.monotonic()
    pool = make_pool(executor, workers, 256, options, 4 * 600.0 + 60.0)
    server = RewardServer(("127.0.0.1", 0), pool)
    server.start()
    try:
        if warm:  # one request per worker: the worker's imports, its sandbox and the spec's preparation
            run_batch(server.url, [item("softmax", text(KNOWLEDGE / "softmax.py"), "correct")] * workers)
        warm_s = time.monotonic() - started
        wall, results = run_batch(server.url, rows)
    finally:
        server.close()
    return {"executor": executor, "workers": workers, "requests": len(rows), "warmup_s": round(warm_s, 1),
            "wall_s": round(wall, 1), "rewards_per_min": round(60 * len(rows) / wall, 1), "results": results}


def tiers(results) -> dict:
    by: dict[str, list[float]] = {}
    misses = []
    for expected, reward in results:
        got = reward.get("tier") or "error"
        if got != expected:
            misses.append(f"{reward.get('op')}: expected {expected}, got {got} ({reward.get('why') or reward.get('error')})")
        by.setdefault(got, []).append(reward.get("elapsed_s") or 0.0)
    table = {}
    for tier, times in sorted(by.items()):
        times = sorted(times)
        table[tier] = {"n": len(times), "median_s": round(statistics.median(times), 2),
                       "p90_s": round(times[min(len(times) - 1, int(0.9 * len(times)))], 2)}
    return {"latency": table, "mismatches": misses}


def ray_run(workers: int, rows, sandbox: str) -> dict:
    import ray

    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    try:
        return served("ray", workers, rows, sandbox)
    finally:
        ray.shutdown()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1, help="copies of the mixed batch (seeds differ per round)")
    parser.add_argument("--sandboxes", default="docker,jail", help="sandbox runtimes for the local runs (Ray: the first)")
    parser.add_argument("--ray", type=int, default=1, help="1: also measure Ray with 2 and 4 workers")
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "reward_throughput.json"))
    args = parser.parse_args()
    load_start = os.getloadavg()
    rows = [(k, r | {"seed": 1234 + n}) for n in range(args.rounds) for k, r in mixed()]
    report = {"cpus": os.cpu_count(), "load_start": [round(x, 2) for x in load_start], "local": {}}
    for sandbox in args.sandboxes.split(","):
        local = served("local", args.workers, rows, sandbox)
        report["local"][sandbox] = {k: v for k, v in local.items() if k != "results"} | tiers(local["results"])
        print(f"local, {args.workers} workers, sandbox {sandbox}: {len(rows)} rewards in {local['wall_s']} s = "
              f"{local['rewards_per_min']} rewards/min (warm-up {local['warmup_s']} s, apart)")
        print(f"{'tier':10} {'n':>3} {'median s':>9} {'p90 s':>7}")
        for tier, row in report["local"][sandbox]["latency"].items():
            print(f"{tier:10} {row['n']:>3} {row['median_s']:>9} {row['p90_s']:>7}")
        for miss in report["local"][sandbox]["mismatches"]:
            print(f"  tier mismatch: {miss}")
    if args.ray:
        quick = [(k, r) for k, r in rows if "while True" not in r["answer"]]  # no hang: it would time the limit
        sandbox = args.sandboxes.split(",")[0]
        runs = {n: ray_run(n, quick, sandbox) for n in (2, 4)}
        report["ray_sandbox"] = sandbox
        report["ray"] = {str(n): {k: v for k, v in run.items() if k != "results"} | tiers(run["results"])
                         for n, run in runs.items()}
        ratio = runs[4]["rewards_per_min"] / runs[2]["rewards_per_min"]
        report["ray_scaling_4_over_2"] = round(ratio, 2)
        for n, run in runs.items():
            print(f"ray, {n} worker processes: {run['requests']} rewards in {run['wall_s']} s = {run['rewards_per_min']} rewards/min")
        print(f"ray scaling 2 -> 4 processes: x{ratio:.2f} (linear would be x2.00; this machine has {os.cpu_count()} cores)")
    report["load_end"] = [round(x, 2) for x in os.getloadavg()]
    print(f"load average: start {report['load_start']}, end {report['load_end']}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
