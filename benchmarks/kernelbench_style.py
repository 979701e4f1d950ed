"""KernelBench-style sets through the expert drafter, each problem capped: seconds per problem
(median, p90), verified fraction, and how fast `opforge verify` rejects a wrong kernel.

    .venv/bin/python benchmarks/kernelbench_style.py [--set kb_level1 kb_level2 | --specs PATH...] [--only SUBSTR]
        [--cap S] [--budget N] [--trials N] [--sandbox KIND] [--tree DIR] [--reject N] [--baseline JSON] [--json PATH]
    .venv/bin/python benchmarks/kernelbench_style.py --merge A.json B.json [--baseline JSON] [--json PATH]

Each problem runs in a child process (`--worker`: benchmarks/expert_coverage.run_spec, CPU verify,
throwaway registry) capped by benchmarks/capped_child.py: past --cap seconds (default 180) its
whole tree and its sandbox containers are killed and the row is `timeout`; a row says what is left
of it afterwards (`leftover`: should be empty). A timed-out problem counts as the cap in the median. --tree runs the children on another
checkout's opforge (e.g. a `git worktree` of an older commit), run with a Python whose environment
imports that tree's opforge in isolated mode (the sandbox runs `python -I`: a copy of .venv, `cp -al`,
whose editable finder names the tree); the results record which opforge was imported. --reject N: for the first N problems of each set with a kernel (verified first), the
kernel is broken (every value its kernels store scaled by 1.001) and `opforge verify` is timed on it and,
as the baseline of the same run, on the kernel as it was. --baseline: an earlier --json of this
script; medians and per-problem times are shown as ratios to it. --merge: the tables of several
--json files as one run (e.g. parallel streams), written to --json. A problem's set is the folder it lies in
(--specs /tmp/kb/level1/*.py: set level1). Targets: level-1 median < 30 s, level-2 < 60 s, a wrong kernel rejected
in < 10 s; on real KernelBench folders named level1 / level2: >= 90 % / >= 70 % verified within the cap. Exit status 0 unless the arguments are bad (2)."""
from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.capped_child import run_capped  # noqa: E402

SPEC_ROOT = ROOT / "benchmarks" / "expert_specs"
SETS = ("kb_level1", "kb_level2")
TARGET_MEDIAN_S = {"kb_level1": 30.0, "kb_level2": 60.0}
TARGET_REJECT_S = 10.0
# the goal on the real KernelBench files (a --specs folder named level1 / level2): verified within the cap
TARGET_VERIFIED = {"level1": 0.9, "level2": 0.7}


def target_median_s(set_name: str) -> float | None:
    """Our own sets by name; a --specs folder by the level its name ends in (level1 -> kb_level1's)."""
    return TARGET_MEDIAN_S.get(set_name) or next((t for s, t in TARGET_MEDIAN_S.items() if set_name.endswith(s[3:])), None)
def broken_copy(source: str) -> str | None:
    """The kernel with every value it stores scaled by 1.001 (`tl.store(p, v)` -> `tl.store(p, (v) * 1.001)`),
    None when it stores nothing that way."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    values = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "tl.store":
            value = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "value"), None)
            if value is not None:
                values.append(value)
    if not values:
        return None
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    edits = []
    for v in values:
        edits += [(starts[v.end_lineno - 1] + v.end_col_offset, ") * 1.001"), (starts[v.lineno - 1] + v.col_offset, "(")]
    for at, text in sorted(edits, key=lambda e: e[0], reverse=True):
        source = source[:at] + text + source[at:]
    return source


def imported_opforge() -> Path | None:
    """Where this Python in isolated mode (as the sandbox runs it) imports opforge from."""
    done = subprocess.run([sys.executable, "-I", "-c", "import opforge; print(opforge.__file__)"], capture_output=True,
                          text=True, timeout=60)
    return Path(done.stdout.strip()).resolve().parent if done.returncode == 0 else None


def tree_env(tree: Path | None) -> dict:
    """The environment a child needs to import opforge from `tree` (default: this checkout)."""
    return {**os.environ, "PYTHONPATH": str(tree or ROOT)}


# -- the child: one problem through the expert --------------------------------------------------------


def worker(spec: Path, out: Path, args: argparse.Namespace) -> int:
    """Run one spec with the expert (opforge imported from --tree first) and write result.json and,
    when the run drafted one, kernel.py (its promoted, else best, else latest candidate)."""
    import importlib.util
    from dataclasses import asdict

    if args.tree:
        sys.path.insert(0, str(args.tree))
    import opforge

    loader = importlib.util.spec_from_file_location("kb_expert_coverage", ROOT / "benchmarks" / "expert_coverage.py")
    coverage = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(coverage)
    from opforge.registry import Registry

    with tempfile.TemporaryDirectory(prefix="opforge-kb-") as tmp, Registry(Path(tmp) / "kb.db") as reg:
        result = coverage.run_spec(spec, coverage.run_options(args), reg)
        row = asdict(result) | {"opforge": str(Path(opforge.__file__).parent)}
        candidates = reg.run_candidates(result.run_key) if result.run_key else []
        if candidates:  # a correct one, else the latest drafted
            chosen = max(candidates, key=lambda c: (bool(c.correct), c.candidate_id)).candidate_id
            (out / "kernel.py").write_text(reg.get_candidate(chosen).source)
    (out / "result.json").write_text(json.dumps(row))
    return 0


def run_problem(spec: Path, args: argparse.Namespace, keep: Path) -> dict:
    """One problem in a capped child; the row, and its kernel copied to keep/<set>/<stem>.py."""
    with tempfile.TemporaryDirectory(prefix="opforge-kb-out-") as out:
        argv = [sys.executable, str(Path(__file__).resolve()), "--worker", str(spec), "--out", out,
                "--budget", str(args.budget), "--trials", str(args.trials)]
        argv += ["--sandbox", args.sandbox] if args.sandbox else []
        argv += ["--tree", str(args.tree)] if args.tree else []
        done = run_capped(argv, args.cap, tree_env(args.tree))
        row = {"path": str(spec), "set": set_of(spec), "op": spec.stem, "wall_s": round(done["seconds"], 2),
               "leftover": done["leftover"], "kernel": None}
        result = Path(out) / "result.json"
        if done["timed_out"]:
            row |= {"outcome": "timeout", "verified": False, "reason": f"past the cap of {args.cap:.0f} s"}
        elif result.is_file():
            row |= json.loads(result.read_text())
        else:
            tail = (done["stderr"].strip().splitlines() or ["no output"])[-1]
            row |= {"outcome": "crash", "verified": False, "reason": f"worker exit {done['rc']}: {tail}"}
        row |= {"set": set_of(spec), "problem": spec.stem}  # the key a baseline is matched on
        if (Path(out) / "kernel.py").is_file():
            dest = keep / row["set"] / f"{spec.stem}.py"
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text((Path(out) / "kernel.py").read_text())
            row["kernel"] = str(dest)
    return row


# -- a wrong kernel, rejected in how long ------------------------------------------------------------


def time_verify(spec: str, kernel: Path, args: argparse.Namespace) -> dict:
    """`opforge verify --device cpu --json` on a kernel, capped, into a throwaway registry."""
    argv = [sys.executable, "-m", "opforge", "verify", spec, str(kernel), "--device", "cpu", "--json",
            "--trials", str(args.trials)] + (["--sandbox", args.sandbox] if args.sandbox else [])
    with tempfile.TemporaryDirectory(prefix="opforge-kb-verify-") as tmp:
        # cwd: not this checkout, whose opforge `python -m` would import before PYTHONPATH's
        done = run_capped(argv, args.cap, tree_env(args.tree) | {"OPFORGE_DB": str(Path(tmp) / "verify.db")}, cwd=tmp)
    verdict = "timeout" if done["timed_out"] else {0: "correct", 1: "incorrect"}.get(done["rc"], f"exit {done['rc']}")
    try:
        found = json.loads(done["stdout"])
        reason = f"{found.get('failed_step')}: {(found.get('reasons') or [''])[0]}" if not found.get("correct") else ""
    except ValueError:
        reason = "" if done["timed_out"] else (done["stderr"].strip().splitlines() or [""])[-1]
    return {"seconds": round(done["seconds"], 2), "verdict": verdict, "reason": reason[:200],
            "leftover": done["leftover"]}


def reject_rows(rows: list[dict], args: argparse.Namespace) -> list[dict]:
    """Per set, the first --reject problems with a kernel (verified ones first): verify it broken,
    then as drafted (the baseline of the ratio)."""
    measured = []
    for set_name in sorted({r["set"] for r in rows}):
        pool = sorted((r for r in rows if r["set"] == set_name and r.get("kernel")), key=lambda r: not r["verified"])
        pool = [r for r in pool if broken_copy(Path(r["kernel"]).read_text())]
        for row in pool[:args.reject]:
            kernel = Path(row["kernel"])
            broken = kernel.with_name(kernel.stem + "_broken.py")
            broken.write_text(broken_copy(kernel.read_text()))
            wrong, right = time_verify(row["path"], broken, args), time_verify(row["path"], kernel, args)
            measured.append({"set": set_name, "problem": row["problem"], "kernel_verified": row["verified"],
                             "broken": "stores x1.001", "reject_s": wrong["seconds"], "reject_verdict": wrong["verdict"],
                             "reject_reason": wrong["reason"], "accept_s": right["seconds"],
                             "accept_verdict": right["verdict"], "accept_reason": right["reason"],
                             "ratio": round(wrong["seconds"] / right["seconds"], 2) if right["seconds"] else None,
                             "leftover": wrong["leftover"] + right["leftover"]})
    return measured


# -- summaries and tables --------------------------------------------------------------------------


def set_of(path: Path) -> str:
    """A spec's set: the folder it lies in (ours under expert_specs/, or a --specs folder such as level1/)."""
    return path.resolve().parent.name


def p90(values: list[float]) -> float:
    """Nearest-rank 90th percentile."""
    ordered = sorted(values)
    return ordered[max(0, -(-9 * len(ordered) // 10) - 1)]


def summarize(rows: list[dict], cap: float, baseline: dict | None = None) -> dict:
    """Per set: problems, verified fraction, median and p90 seconds (a timed-out problem counts as
    the cap: a lower bound), timeouts, leftovers, and the baseline's median with the ratio."""
    sets = {}
    for name in sorted({r["set"] for r in rows}):
        mine = [r for r in rows if r["set"] == name]
        seconds = [min(r["wall_s"], cap) if r["outcome"] == "timeout" else r["wall_s"] for r in mine]
        entry = {"problems": len(mine), "verified": sum(r["verified"] for r in mine),
                 "verified_fraction": round(sum(r["verified"] for r in mine) / len(mine), 3),
                 "median_s": round(statistics.median(seconds), 1), "p90_s": round(p90(seconds), 1),
                 "timeouts": sum(r["outcome"] == "timeout" for r in mine),
                 "leftover": sum(bool(r["leftover"]) for r in mine), "target_median_s": target_median_s(name),
                 "target_verified_fraction": TARGET_VERIFIED.get(name)}
        before = (baseline or {}).get("sets", {}).get(name)
        if before:
            entry["baseline_median_s"] = before["median_s"]
            entry["median_ratio"] = round(entry["median_s"] / before["median_s"], 2) if before["median_s"] else None
        sets[name] = entry
    return sets


def problem_table(rows: list[dict], baseline: dict | None) -> Table:
    before = {(r["set"], r["problem"]): r for r in (baseline or {}).get("results", [])}
    table = Table(title="problems")
    for column in ("set", "problem", "outcome", "s", "before s", "ratio", "kernels", "left", "reason"):
        table.add_column(column)
    for r in rows:
        old = before.get((r["set"], r["problem"]))
        ratio = f"{r['wall_s'] / old['wall_s']:.2f}" if old and old["wall_s"] else ""
        table.add_row(r["set"], escape(r["problem"]), r["outcome"], f"{r['wall_s']:.1f}", f"{old['wall_s']:.1f}" if old else "",
                      ratio, str(r.get("kernels") or ""), str(len(r["leftover"])), escape((r.get("reason") or "")[:90]))
    return table


def set_table(sets: dict) -> Table:
    table = Table(title="per set")
    for column in ("set", "n", "verified", "target", "median s", "p90 s", "timeouts", "left", "target median",
                   "before median", "ratio"):
        table.add_column(column)
    for name, s in sets.items():
        goal = s.get("target_verified_fraction")
        table.add_row(name, str(s["problems"]), f"{s['verified']}/{s['problems']} ({s['verified_fraction']:.0%})",
                      f">= {goal:.0%}" if goal else "",
                      f"{s['median_s']:.1f}", f"{s['p90_s']:.1f}", str(s["timeouts"]), str(s["leftover"]),
                      f"< {s['target_median_s']:.0f}" if s["target_median_s"] else "",
                      str(s.get("baseline_median_s", "")), str(s.get("median_ratio", "")))
    return table


def reject_table(measured: list[dict]) -> Table:
    table = Table(title=f"wrong kernel rejected in s (target < {TARGET_REJECT_S:.0f} s; baseline: the kernel as drafted)")
    for column in ("set", "problem", "kernel", "broken", "reject s", "verdict", "accept s", "verdict ", "ratio"):
        table.add_column(column)
    for m in measured:
        table.add_row(m["set"], escape(m["problem"]), "verified" if m["kernel_verified"] else "drafted", m["broken"],
                      f"{m['reject_s']:.1f}", m["reject_verdict"], f"{m['accept_s']:.1f}", m["accept_verdict"],
                      str(m["ratio"]))
    return table


# -- entry point -----------------------------------------------------------------------------------


def positive(kind):
    def parse(value: str):
        number = kind(value)
        if number <= 0:
            raise argparse.ArgumentTypeError(f"must be above 0, got {value}")
        return number
    return parse


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, list[Path]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--set", nargs="+", choices=SETS, default=list(SETS), help="spec sets (default: both)")
    chosen.add_argument("--specs", nargs="+", type=Path, help="spec files instead of the sets")
    parser.add_argument("--only", help="keep the specs whose file name contains this")
    parser.add_argument("--cap", type=positive(float), default=180.0, help="seconds per problem (default 180)")
    parser.add_argument("--budget", type=positive(int), default=2, help="rounds per run (default 2)")
    parser.add_argument("--trials", type=positive(int), default=5, help="verification trials per variant (default 5)")
    parser.add_argument("--sandbox", choices=("docker", "jail", "none"), help="isolation (default: auto)")
    parser.add_argument("--tree", type=Path, help="a checkout whose opforge the children import (default: this one)")
    parser.add_argument("--reject", type=int, default=2, help="problems per set for the wrong-kernel measure (default 2)")
    parser.add_argument("--baseline", type=Path, help="an earlier --json of this script to compare with")
    parser.add_argument("--json", type=Path, help="write the rows and summaries here (after each problem)")
    parser.add_argument("--kernels", type=Path, help="keep each problem's kernel (and its broken copy) here")
    parser.add_argument("--note", default="", help="a note kept in the JSON (e.g. the machine's load)")
    parser.add_argument("--merge", nargs="+", type=Path, help="print (and --json) these result files as one run")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return args, [args.worker]
    if args.merge:
        if missing := [str(p) for p in args.merge if not p.is_file()]:
            parser.error(f"--merge: no such file: {', '.join(missing)}")
        return args, []
    if args.tree and not (args.tree / "opforge" / "__init__.py").is_file():
        parser.error(f"--tree {args.tree}: no opforge package there")
    if args.tree and (found := imported_opforge()) != (args.tree / "opforge").resolve():
        parser.error(f"--tree {args.tree}: {sys.executable} -I imports opforge from {found} (the sandboxed worker runs "
                     "python -I, which ignores PYTHONPATH): run with a Python whose environment imports that tree's")
    if args.baseline and not args.baseline.is_file():
        parser.error(f"--baseline {args.baseline}: no such file")
    if args.reject < 0:
        parser.error(f"--reject must be 0 or more, got {args.reject}")
    paths = [p.resolve() for p in args.specs] if args.specs else sorted(
        p for s in args.set for p in (SPEC_ROOT / s).glob("*.py") if not p.name.startswith("_"))
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        parser.error(f"spec file not found: {', '.join(missing)}")
    paths = [p for p in paths if not args.only or args.only in p.name]
    if not paths:
        parser.error("no spec to run" + (f" (--only {args.only!r} matched none)" if args.only else ""))
    return args, paths


def main(argv: list[str] | None = None) -> int:
    args, paths = parse_args(argv)
    if args.worker:
        return worker(args.worker, args.out, args)
    console = Console(width=200)
    baseline = json.loads(args.baseline.read_text()) if args.baseline else None
    if args.merge:
        return merge(args, baseline, console)
    report = {"cap_s": args.cap, "budget": args.budget, "trials": args.trials, "sandbox": args.sandbox or "auto",
              "tree": str(args.tree or ROOT), "opforge": str(imported_opforge()), "python": sys.executable, "cpus": os.cpu_count(), "note": args.note,
              "load_before": os.getloadavg(), "results": [], "sets": {}, "reject": []}
    with tempfile.TemporaryDirectory(prefix="opforge-kb-kernels-") as tmp:
        keep = args.kernels or Path(tmp)
        for i, path in enumerate(paths, 1):
            row = run_problem(path, args, keep)
            report["results"].append(row)
            report["sets"] = summarize(report["results"], args.cap, baseline)
            console.print(f"[{i}/{len(paths)}] {row['set']}/{row['problem']}: {row['outcome']} in {row['wall_s']:.1f}s"
                          + (f" LEFTOVER {row['leftover']}" if row["leftover"] else ""), highlight=False, markup=False)
            write(args.json, report)
        report["reject"] = reject_rows(report["results"], args) if args.reject else []
    report["load_after"] = os.getloadavg()
    show(report, args.json, baseline, console)
    return 0


def show(report: dict, path: Path | None, baseline: dict | None, console: Console) -> None:
    write(path, report)
    for table in (problem_table(report["results"], baseline), set_table(report["sets"]), reject_table(report["reject"])):
        console.print(table)
    if path:
        console.print(f"wrote {path}")


def merge(args: argparse.Namespace, baseline: dict | None, console: Console) -> int:
    """Several reports as one: rows and reject rows joined, sets summarized again, the rest kept per part."""
    parts = [json.loads(p.read_text()) for p in args.merge]
    cap = max(p["cap_s"] for p in parts)
    results = [r for p in parts for r in p["results"]]
    report = {"cap_s": cap, "merged": [str(p) for p in args.merge],
              "parts": [{k: v for k, v in p.items() if k not in ("results", "sets", "reject")} for p in parts],
              "results": results, "sets": summarize(results, cap, baseline), "reject": [m for p in parts for m in p["reject"]]}
    show(report, args.json, baseline, console)
    return 0


def write(path: Path | None, report: dict) -> None:
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    sys.exit(main())
