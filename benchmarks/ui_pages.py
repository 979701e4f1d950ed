"""Workbench page load times on a large registry: fills one with 5,000 candidates (50 ops x 100,
each with a real verdict, a quarter of them timed, runs, LLM calls, reviews and a promoted version
per op) through the Registry API, then renders each page with Streamlit's AppTest and times it.

Run from the repo root:
    .venv/bin/python benchmarks/ui_pages.py [--candidates 5000] [--ops 50] [--repeat 5] [--db PATH]

Target: every page under 2 s (warm: the server has the registry open, as after the first view).
The timings in the filled registry are synthetic (a fixed verdict with made-up GPU numbers): they
exercise the timing plot, they measure nothing. Exit status 1 when a page misses the target.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from opforge.agents.drafters.base import LLMCall  # noqa: E402
from opforge.registry import Registry  # noqa: E402

TARGET_S = 2.0
VERDICT = json.loads((ROOT / "tests" / "data" / "verdict_softmax_cpu.json").read_text())
CPU, GPU = "cpu/x86_64/triton-interpreter", "cuda/bench/sm_90"
KERNEL = (ROOT / "opforge" / "backends" / "triton" / "knowledge" / "softmax.py").read_text()


def timed_verdict(i: int) -> dict:
    ms = 0.05 + (i % 7) * 0.01
    return copy.deepcopy(VERDICT) | {"hardware": GPU, "stage": "profile", "timings": {
        "kernel_ms": ms, "eager_ms": 0.08, "compile_ms": 0.07, "speedup_eager": 0.08 / ms, "speedup_compile": 0.07 / ms}}


def fill_op(reg: Registry, op: int, per_op: int) -> str:
    name = f"bench_op_{op:03d}"
    spec = reg.record_spec(name, f"bench/{name}.py", f"# {name}\n")
    run = reg.create_run(f"r-bench-{op:03d}", name, spec, "triton", "llm", CPU, {"budget": {"rounds": 4}})
    parent = best = None
    for i in range(per_op):
        cand = reg.record_candidate(spec, KERNEL + f"\n# variant {op}-{i}\n", "triton", "llm", parent_id=parent,
                                    run_id=run.id, round=i // 2)
        failed = i % 3 == 1
        verdict = copy.deepcopy(VERDICT) | ({"correct": False, "stage": "compare", "reasons": ["max abs err 1e-2"]}
                                            if failed else {})
        reg.record_evaluation(cand, CPU, {}, verdict)
        if i % 4 == 0 and not failed:
            reg.record_evaluation(cand, GPU, {}, timed_verdict(i))
        if i % 10 == 0:
            reg.record_llm_call(run.id, cand, i // 2, LLMCall(model="bench", temperature=0.2, reply="```python\n...```",
                                messages=({"role": "user", "content": "draft " + name},), prompt_tokens=800))
        parent = cand
        if not failed and i % 4:
            best = cand  # correct and untimed: promotable by any policy
    reg.promote(best, note="bench")
    reg.review(best, "approved", "bench")
    reg.update_run(run.run_key, status="done", best_candidate_id=best)
    return run.run_key


def fill(db: Path, ops: int, per_op: int) -> tuple[str, int]:
    started = time.time()
    with Registry(db) as reg:
        keys = [fill_op(reg, op, per_op) for op in range(ops)]
        last = reg.list_kernels(limit=1)[0].candidate_id
    print(f"filled {db}: {ops * per_op} candidates in {time.time() - started:.1f} s")
    return keys[-1], last


def time_page(page: str, query: dict[str, str], repeat: int) -> list[float]:
    from streamlit.testing.v1 import AppTest

    times = []
    for _ in range(repeat):
        at = AppTest.from_file(str(ROOT / "opforge" / "app.py"), default_timeout=120)
        for key, value in query.items():
            at.query_params[key] = value
        start = time.perf_counter()
        at.switch_page(f"ui/pages/{page}.py").run()
        times.append(time.perf_counter() - start)
        if at.exception:
            raise SystemExit(f"{page}: {at.exception[0].value}")
    return times


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--candidates", type=int, default=5000)
    p.add_argument("--ops", type=int, default=50)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--db", help="registry to fill (default: a temporary file)")
    args = p.parse_args()
    db = Path(args.db or Path(tempfile.mkdtemp(prefix="opforge-ui-bench-")) / "opforge.db")
    run_key, candidate = fill(db, args.ops, args.candidates // args.ops)
    os.environ["OPFORGE_DB"] = str(db)
    pages = {"request": {}, "watch": {"run": run_key}, "review": {"candidate": str(candidate)}, "export": {}}
    table = Table("page", "first s", "median s", "max s", f"target < {TARGET_S:g} s")
    missed = False
    for page, query in pages.items():
        times = time_page(page, query, args.repeat + 1)
        warm = times[1:]
        ok = max(warm) < TARGET_S
        missed |= not ok
        table.add_row(page, f"{times[0]:.2f}", f"{statistics.median(warm):.2f}", f"{max(warm):.2f}", "met" if ok else "MISSED")
    Console().print(table)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
