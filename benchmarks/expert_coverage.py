"""Coverage of the offline expert drafter: specs supported, verified, time to verdict, bad promotions.

Each spec goes through the library entry point (`agents.run.start_run` with the expert drafter,
verified on the CPU) into a throwaway registry:

    .venv/bin/python benchmarks/expert_coverage.py [--specs PATH...] [--only SUBSTR] [--budget N]
                                                   [--trials N] [--sandbox KIND] [--json PATH]

Default specs: benchmarks/expert_specs/*.py and ops/*.py. Targets: verified >= 60% of the specs,
median time to verdict < 60 s, 0 incorrect kernels promoted. A spec the expert cannot handle is a
row of the table, never the end of the loop; the exit status is 0 unless the arguments are bad (2)."""
from __future__ import annotations

import argparse
import ast
import json
import statistics
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from opforge.agents.config import Budget  # noqa: E402
from opforge.agents.run import RunOptions, RunSummary, start_run  # noqa: E402
from opforge.harness.errors import OpforgeError  # noqa: E402
from opforge.harness.verify import VerifyOptions  # noqa: E402
from opforge.registry import Registry  # noqa: E402

TARGET_VERIFIED = 0.60
TARGET_MEDIAN_S = 60.0
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


@dataclass
class SpecResult:
    """One spec's outcome. `outcome`: verified | failed | unsupported | crash."""

    path: str
    op: str
    family: str
    outcome: str
    supported: bool
    verified: bool
    reason: str | None
    seconds: float
    candidates: int
    incorrect_promoted: int = 0
    run_key: str | None = None


# -- specs -----------------------------------------------------------------------------------------


def default_specs() -> list[Path]:
    return sorted((ROOT / "benchmarks" / "expert_specs").glob("*.py")) + sorted((ROOT / "ops").glob("*.py"))


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
                          time.perf_counter() - started, 0)
    except Exception as exc:  # a bug under the library: record it with where it came from, keep going
        where = traceback.extract_tb(exc.__traceback__)[-1]
        reason = f"crash at {Path(where.filename).name}:{where.lineno}: {type(exc).__name__}: {exc}"
        return SpecResult(str(path), op, family, "crash", False, False, reason, time.perf_counter() - started, 0)
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
    return SpecResult(str(path), summary.op, family, outcome, not unsupported, verified, reason, seconds,
                      len(candidates), run_key=summary.run_key)


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
            return f"{latest.stage}: {latest.first_reason}"
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


def run_all(paths: list[Path], args: argparse.Namespace, console: Console) -> tuple[list[SpecResult], int]:
    """Every spec through the expert; returns the results and the number of incorrect promotions seen."""
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
    return results, len(bad)


# -- reporting ---------------------------------------------------------------------------------------


def summarize(results: list[SpecResult], incorrect_promoted: int) -> dict:
    n = len(results)
    supported = sum(r.supported for r in results)
    verified = sum(r.verified for r in results)
    # Time to verdict: runs that reached one (the expert drafted and the harness judged), not refusals.
    verdict_times = [r.seconds for r in results if r.outcome in ("verified", "failed")]
    median = statistics.median(verdict_times) if verdict_times else None
    return {
        "specs": n, "supported": supported, "verified": verified,
        "supported_pct": 100.0 * supported / n if n else 0.0,
        "verified_pct": 100.0 * verified / n if n else 0.0,
        "median_seconds_to_verdict": median, "runs_with_verdict": len(verdict_times),
        "incorrect_promoted": incorrect_promoted,
        "pass": {
            "verified": n > 0 and verified / n >= TARGET_VERIFIED,
            "median_seconds": None if median is None else median < TARGET_MEDIAN_S,
            "incorrect_promoted": incorrect_promoted == 0,
        },
    }


def _mark(ok: bool | None) -> str:
    return "n/a (no data)" if ok is None else "[green]PASS[/]" if ok else "[red]MISS[/]"


OUTCOME_STYLE = {"verified": "[green]✓ verified[/]", "failed": "[red]✗ failed[/]",
                 "unsupported": "[yellow]unsupported[/]", "crash": "[magenta]crash[/]"}


def results_table(results: list[SpecResult]) -> Table:
    table = Table("op", "family", "outcome", "cands", "s", "bad promo", "reason", title="expert coverage per spec")
    for r in sorted(results, key=lambda r: (r.family, r.op)):
        table.add_row(escape(r.op), escape(r.family), OUTCOME_STYLE[r.outcome], str(r.candidates), f"{r.seconds:.1f}",
                      str(r.incorrect_promoted), escape(_short(r.reason, 90)))
    return table


def family_table(results: list[SpecResult]) -> Table:
    table = Table("family", "specs", "supported", "verified", title="by family")
    for family in sorted({r.family for r in results}):
        rows = [r for r in results if r.family == family]
        table.add_row(family, str(len(rows)), str(sum(r.supported for r in rows)), str(sum(r.verified for r in rows)))
    return table


def summary_table(summary: dict) -> Table:
    median, marks = summary["median_seconds_to_verdict"], summary["pass"]
    median_text = "—" if median is None else f"{median:.1f} (over {summary['runs_with_verdict']} runs)"
    table = Table("measure", "value", "target", "mark", title="summary")
    table.add_row("specs", str(summary["specs"]), "", "")
    table.add_row("supported", f"{summary['supported']} ({summary['supported_pct']:.0f}%)", "", "")
    table.add_row("verified", f"{summary['verified']} ({summary['verified_pct']:.0f}%)",
                  f">= {TARGET_VERIFIED:.0%}", _mark(marks["verified"]))
    table.add_row("median s to verdict", median_text, f"< {TARGET_MEDIAN_S:.0f}", _mark(marks["median_seconds"]))
    table.add_row("incorrect promoted", str(summary["incorrect_promoted"]), "0", _mark(marks["incorrect_promoted"]))
    return table


def _short(text: str | None, width: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


# -- entry point -------------------------------------------------------------------------------------


def count(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, list[Path]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", nargs="+", type=Path, help="spec files (default: expert_specs/*.py and ops/*.py)")
    parser.add_argument("--only", help="keep the specs whose file name contains this")
    parser.add_argument("--budget", type=count, default=2, help="rounds per run (default 2)")
    parser.add_argument("--trials", type=count, default=5, help="verification trials per variant (default 5)")
    parser.add_argument("--sandbox", choices=("docker", "jail", "none"), help="isolation (default: auto)")
    parser.add_argument("--json", type=Path, help="also write the results and summary to this file")
    args = parser.parse_args(argv)
    paths = [p.resolve() for p in (args.specs or default_specs())]
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
    summary = summarize(results, bad)
    for table in (results_table(results), family_table(results), summary_table(summary)):
        console.print(table)
    if args.json:
        args.json.write_text(json.dumps({"results": [asdict(r) for r in results], "summary": summary}, indent=2))
        console.print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
