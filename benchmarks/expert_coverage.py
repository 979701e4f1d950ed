"""Coverage of the offline expert drafter: specs supported, verified, time to verdict, kernels per
spec, bad promotions, per spec set and per family.

Each spec goes through the library entry point (`agents.run.start_run` with the expert drafter,
verified on the CPU) into a throwaway registry:

    .venv/bin/python benchmarks/expert_coverage.py [--set NAME | --specs PATH...] [--only SUBSTR]
                                                   [--budget N] [--trials N] [--sandbox KIND] [--json PATH]

Spec sets, by where a spec lies: base (benchmarks/expert_specs/*.py but indexmap_*, and ops/*.py),
indexmap (expert_specs/indexmap_*.py), conv, fusion, level3 (the expert_specs/ folders of those
names; any other folder is a set of its name), serving (the inference-engine suite, ops/serving/),
serving-extra (expert_specs/serving/: the same ops written other ways, engine and HF styles), all
(the default: every one of them).

Targets: verified >= 90% of the conv set, >= 80% of serving and serving-extra, >= 70% of fusion,
>= 60% of every other set; median time
to verdict < 60 s; 0 incorrect kernels promoted. Kernels per spec come from the run's promoted
candidate, else its best, else its latest draft: the drafter's `kernels` meta, else the
`@triton.jit` functions of its source. A spec the expert cannot handle is a row of the table, never
the end of the loop; the exit status is 0 unless the arguments are bad (2). --json writes the rows,
the overall summary and the summaries by set and by family."""
from __future__ import annotations

import argparse
import ast
import json
import sys
import tempfile
import time
import traceback
from dataclasses import asdict
from pathlib import Path

from rich.console import Console

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.coverage_report import (  # noqa: E402
    SpecResult, by_family, by_set, family_table, kernels_in, overall, results_table, set_table, summary_table,
)
from opforge.agents.config import Budget  # noqa: E402
from opforge.agents.run import RunOptions, RunSummary, start_run  # noqa: E402
from opforge.harness.errors import OpforgeError  # noqa: E402
from opforge.harness.verify import VerifyOptions  # noqa: E402
from opforge.registry import Registry  # noqa: E402

SPEC_ROOT = ROOT / "benchmarks" / "expert_specs"
SETS = ("base", "conv", "fusion", "level3", "indexmap", "serving", "serving-extra", "all")
CANDIDATES_PER_ROUND = 4
# Family guessed from a file name when the spec has no OPFORGE["family"]: first keyword found wins,
# so the specific names come before the general ones ("softmax" before "max", "l2_norm" before "norm").
FAMILY_KEYWORDS = (
    ("loss", "loss"), ("cross_entropy", "loss"), ("kl_div", "loss"), ("pool", "pooling"),
    ("cumsum", "scan"), ("cumprod", "scan"), ("scan", "scan"),
    ("matmul", "matmul"), ("bmm", "matmul"), ("gemm", "matmul"), ("matvec", "matmul"), ("linear", "matmul"),
    ("matrix", "matmul"),
    ("softmax", "norm"), ("layer_norm", "norm"), ("rms_norm", "norm"), ("instance_norm", "norm"),
    ("group_norm", "norm"), ("batch_norm", "norm"),
    ("l1_norm", "reduction"), ("l2_norm", "reduction"), ("frobenius", "reduction"), ("logsumexp", "reduction"),
    ("argmax", "reduction"), ("argmin", "reduction"), ("sum", "reduction"), ("mean", "reduction"),
    ("max", "reduction"), ("min", "reduction"), ("prod", "reduction"), ("var", "reduction"), ("std", "reduction"),
    ("norm", "norm"),
    ("bias", "elementwise"), ("add", "elementwise"), ("mul", "elementwise"), ("residual", "elementwise"),
    ("standardize", "elementwise"), ("scale", "elementwise"), ("quant", "elementwise"),
    ("relu", "activation"), ("gelu", "activation"), ("elu", "activation"), ("silu", "activation"),
    ("swish", "activation"), ("glu", "activation"), ("mish", "activation"), ("soft", "activation"),
    ("hard", "activation"), ("sigmoid", "activation"), ("tanh", "activation"), ("clamp", "activation"),
    ("where", "activation"),
)


# -- specs -----------------------------------------------------------------------------------------


def all_specs() -> list[Path]:
    """Every spec file: expert_specs/ and its folders (files named `_*` are helpers), then ops/ and
    ops/serving/."""
    specs = [p for p in SPEC_ROOT.rglob("*.py") if not p.name.startswith("_")]
    return sorted(specs) + sorted((ROOT / "ops").glob("*.py")) + sorted((ROOT / "ops" / "serving").glob("*.py"))


def spec_set(path: Path) -> str:
    """The set a spec belongs to, from where it lies (a file outside the spec folders: "other")."""
    path = path.resolve()
    if path.parent == (ROOT / "ops"):
        return "base"
    if path.parent == (ROOT / "ops" / "serving"):
        return "serving"
    if not path.is_relative_to(SPEC_ROOT):
        return "other"
    parts = path.relative_to(SPEC_ROOT).parts
    if len(parts) > 1:
        return "serving-extra" if parts[0] == "serving" else parts[0]
    return "indexmap" if path.name.startswith("indexmap_") else "base"


def default_specs(set_name: str = "all") -> list[Path]:
    specs = all_specs()
    return specs if set_name == "all" else [p for p in specs if spec_set(p) == set_name]


def opforge_meta(path: Path) -> dict:
    """The literal fields of `OPFORGE = dict(...)` (or `{...}`), read without importing the spec."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "OPFORGE" for t in node.targets):
            return _literal_fields(node.value)
    return {}


def _literal_fields(value: ast.expr) -> dict:
    if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "dict":
        pairs = [(kw.arg, kw.value) for kw in value.keywords if kw.arg]
    elif isinstance(value, ast.Dict):
        pairs = [(k.value, v) for k, v in zip(value.keys, value.values) if isinstance(k, ast.Constant)]
    else:
        return {}
    fields = {}
    for key, node in pairs:
        try:
            fields[key] = ast.literal_eval(node)
        except ValueError:  # a computed field (e.g. a call): not needed here
            continue
    return fields


def guess_family(stem: str) -> str:
    name = stem.lower()
    return next((family for word, family in FAMILY_KEYWORDS if word in name), "other")


def spec_identity(path: Path) -> tuple[str, str]:
    """(op name, family) as the harness would name the op, without running the spec."""
    meta = opforge_meta(path)
    return str(meta.get("name") or path.stem), str(meta.get("family") or guess_family(path.stem))


# -- running -----------------------------------------------------------------------------------------


def run_options(args: argparse.Namespace) -> RunOptions:
    return RunOptions(drafter="expert", budget=Budget(rounds=args.budget, candidates=CANDIDATES_PER_ROUND),
                      verify=VerifyOptions(device="cpu", trials=args.trials, sandbox=args.sandbox))


def run_spec(path: Path, options: RunOptions, reg: Registry) -> SpecResult:
    """Run the expert on one spec; whatever happens becomes a SpecResult."""
    op, family = spec_identity(path)
    started = time.perf_counter()
    try:
        summary = start_run(path, options, reg)
    except OpforgeError as exc:  # the library said no in one line: the spec is out of the expert's reach
        return SpecResult(str(path), op, family, "unsupported", False, False, str(exc),
                          time.perf_counter() - started, 0, set=spec_set(path))
    except Exception as exc:  # a bug under the library: record it with where it came from, keep going
        where = traceback.extract_tb(exc.__traceback__)[-1]
        reason = f"crash at {Path(where.filename).name}:{where.lineno}: {type(exc).__name__}: {exc}"
        return SpecResult(str(path), op, family, "crash", False, False, reason, time.perf_counter() - started, 0,
                          set=spec_set(path))
    seconds = time.perf_counter() - started
    return summarize_run(path, family, summary, seconds, reg)


def summarize_run(path: Path, family: str, summary: RunSummary, seconds: float, reg: Registry) -> SpecResult:
    candidates = reg.run_candidates(summary.run_key)
    verified = summary.best_candidate_id is not None
    # Unsupported: the expert refused before drafting anything (a refusal after drafts is a failed run).
    unsupported = not verified and not candidates and "unsupported" in (summary.stop_reason or "")
    outcome = "verified" if verified else "unsupported" if unsupported else "failed"
    if verified:
        reason = None
    elif unsupported:
        reason = refusal(summary.stop_reason)
    else:
        reason = failure_reason(summary, candidates, reg)
    chosen = chosen_candidate(reg, summary, candidates)
    detail = reg.get_candidate(chosen) if chosen is not None else None
    return SpecResult(str(path), summary.op, family, outcome, not unsupported, verified, reason, seconds,
                      len(candidates), run_key=summary.run_key, set=spec_set(path),
                      kernels=kernels_in(detail.meta, detail.source) if detail else None)


def chosen_candidate(reg: Registry, summary: RunSummary, candidates: list) -> int | None:
    """The run's promoted candidate, else its best, else its latest evaluated, else its latest drafted."""
    ids = {c.candidate_id for c in candidates}
    promoted = [v.candidate_id for v in reg.active_versions() if v.op == summary.op and v.candidate_id in ids]
    if promoted:
        return promoted[0]
    if summary.best_candidate_id is not None:
        return summary.best_candidate_id
    pool = [c for c in candidates if c.evaluation_id is not None] or candidates
    return max(c.candidate_id for c in pool) if pool else None


def refusal(stop_reason: str) -> str:
    """The part of the stop reason that names the ATen ops, not the loop's wrapper sentence."""
    reason = stop_reason[stop_reason.index("unsupported"):]
    return reason[:-1] if "(unsupported" in stop_reason and reason.endswith(")") else reason


def failure_reason(summary: RunSummary, candidates: list, reg: Registry) -> str | None:
    """The first reason of the run's most recent evaluation, else the stop reason, else the run's error."""
    evaluated = [c for c in candidates if c.evaluation_id is not None and not c.correct]
    if evaluated:
        latest = max(evaluated, key=lambda c: c.evaluation_id)
        if latest.first_reason:
            return f"{latest.failed_step}: {latest.first_reason}"
    if summary.stop_reason:
        return summary.stop_reason
    run = reg.get_run(summary.run_key)
    return run.error if run else None


def incorrect_promotions(reg: Registry) -> set[tuple[str, int]]:
    """(op, candidate id) of every active version whose candidate's latest evaluation is not correct."""
    bad = set()
    for version in reg.active_versions():
        evaluation = reg.latest_evaluation(version.candidate_id)
        if evaluation is None or not evaluation.correct:
            bad.add((version.op, version.candidate_id))
    return bad


def run_all(paths: list[Path], args: argparse.Namespace,
            console: Console) -> tuple[list[SpecResult], set[tuple[str, int]]]:
    """Every spec through the expert; returns the results and the incorrect promotions seen (op, candidate)."""
    options = run_options(args)
    results, bad = [], set()
    with tempfile.TemporaryDirectory(prefix="opforge-coverage-") as tmp, Registry(Path(tmp) / "coverage.db") as reg:
        for i, path in enumerate(paths, 1):
            result = run_spec(path, options, reg)
            now_bad = incorrect_promotions(reg)
            result.incorrect_promoted = len({b for b in now_bad if b[0] == result.op})
            bad |= now_bad
            results.append(result)
            console.print(f"[{i}/{len(paths)}] {result.op}: {result.outcome} in {result.seconds:.1f}s", highlight=False,
                          markup=False)
    return results, bad


# -- entry point -------------------------------------------------------------------------------------


def count(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, list[Path]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--set", choices=SETS, default="all", help="spec set to run (default: all)")
    chosen.add_argument("--specs", nargs="+", type=Path, help="spec files instead of a set")
    parser.add_argument("--only", help="keep the specs whose file name contains this")
    parser.add_argument("--budget", type=count, default=2, help="rounds per run (default 2)")
    parser.add_argument("--trials", type=count, default=5, help="verification trials per variant (default 5)")
    parser.add_argument("--sandbox", choices=("docker", "jail", "none"), help="isolation (default: auto)")
    parser.add_argument("--json", type=Path, help="also write the results and summary to this file")
    args = parser.parse_args(argv)
    paths = [p.resolve() for p in (args.specs or default_specs(args.set))]
    if not paths:
        parser.error(f"no spec in set {args.set!r} yet")
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        parser.error(f"spec file not found: {', '.join(missing)}")
    if args.only:
        paths = [p for p in paths if args.only in p.name]
    if not paths:
        parser.error("no spec left to run" + (f" (--only {args.only!r} matched none)" if args.only else ""))
    return args, paths


def main(argv: list[str] | None = None) -> int:
    args, paths = parse_args(argv)
    console = Console(width=180)
    results, bad = run_all(paths, args, console)
    report = {"results": [asdict(r) for r in results], "summary": overall(results, bad),
              "sets": by_set(results, bad), "families": by_family(results)}
    for table in (results_table(results), family_table(report["families"]), set_table(report["sets"]),
                  summary_table(report["summary"])):
        console.print(table)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
        console.print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
