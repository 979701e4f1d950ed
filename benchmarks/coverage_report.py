"""The report of benchmarks/expert_coverage.py: one result per spec, summaries per spec set and per
family against the targets, kernels per spec read from the chosen candidate, and the rich tables.

Targets per set (where a spec lies, see expert_coverage.spec_set): conv >= 90 % verified, fusion
>= 70 %, every other set >= 60 %; for all: median time to verdict < 60 s, 0 incorrect promoted."""
from __future__ import annotations

import ast
import re
import statistics
from dataclasses import dataclass

from rich.markup import escape
from rich.table import Table

TARGET_VERIFIED = 0.60  # every set without its own target below
SET_TARGETS = {"conv": 0.90, "serving": 0.80, "serving-extra": 0.80, "fusion": 0.70}
TARGET_MEDIAN_S = 60.0
_JIT_LINE = re.compile(r"^\s*@triton\.jit\b", re.MULTILINE)


@dataclass
class SpecResult:
    """One spec's outcome. `outcome`: verified | failed | unsupported | crash. `kernels`: the
    kernels of the run's promoted candidate, else its best, else its latest (None: no candidate)."""

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
    set: str = "base"
    kernels: int | None = None


# -- kernels per candidate -----------------------------------------------------------------------


def kernels_in(meta: dict | None, source: str) -> int:
    """A candidate's kernel count: the drafter's `kernels` meta when it gives one (a partitioned
    program says how many it launches), else the `@triton.jit` functions its source defines."""
    value = (meta or {}).get("kernels")
    if type(value) is int and value >= 1:
        return value
    return triton_kernels(source)


def triton_kernels(source: str) -> int:
    """The functions decorated `@triton.jit` or `@triton.jit(...)` in a source (a line count when
    the source does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return len(_JIT_LINE.findall(source))
    functions = (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return sum(any(_is_triton_jit(d) for d in f.decorator_list) for f in functions)


def _is_triton_jit(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return ast.unparse(target) == "triton.jit"


# -- summaries -----------------------------------------------------------------------------------


def target_of(set_name: str) -> float:
    return SET_TARGETS.get(set_name, TARGET_VERIFIED)


def summarize(results: list[SpecResult], incorrect_promoted: int, target: float = TARGET_VERIFIED) -> dict:
    n = len(results)
    supported = sum(r.supported for r in results)
    verified = sum(r.verified for r in results)
    # Time to verdict: runs that reached one (the expert drafted and the harness judged), not refusals.
    verdict_times = [r.seconds for r in results if r.outcome in ("verified", "failed")]
    median = statistics.median(verdict_times) if verdict_times else None
    kernels = [r.kernels for r in results if r.kernels is not None]
    return {
        "specs": n, "supported": supported, "verified": verified,
        "supported_pct": 100.0 * supported / n if n else 0.0,
        "verified_pct": 100.0 * verified / n if n else 0.0,
        "median_seconds_to_verdict": median, "runs_with_verdict": len(verdict_times),
        "kernels_median": statistics.median(kernels) if kernels else None,
        "kernels_max": max(kernels) if kernels else None,
        "incorrect_promoted": incorrect_promoted,
        "target_verified_pct": 100.0 * target,
        "pass": {
            "verified": n > 0 and verified / n >= target,
            "median_seconds": None if median is None else median < TARGET_MEDIAN_S,
            "incorrect_promoted": incorrect_promoted == 0,
        },
    }


def by_set(results: list[SpecResult], bad: set[tuple[str, int]]) -> dict[str, dict]:
    """A summary per spec set, each against its own verified target."""
    out = {}
    for name in sorted({r.set for r in results}):
        rows = [r for r in results if r.set == name]
        ops = {r.op for r in rows}
        out[name] = summarize(rows, sum(op in ops for op, _ in bad), target_of(name))
    return out


def by_family(results: list[SpecResult]) -> dict[str, dict]:
    return {family: summarize([r for r in results if r.family == family], 0)
            for family in sorted({r.family for r in results})}


def overall(results: list[SpecResult], bad: set[tuple[str, int]]) -> dict:
    """Every spec together; the verified target is the set's when one set was run, else the default."""
    sets = {r.set for r in results}
    return summarize(results, len(bad), target_of(sets.pop()) if len(sets) == 1 else TARGET_VERIFIED)


# -- tables --------------------------------------------------------------------------------------


def _mark(ok: bool | None) -> str:
    return "n/a (no data)" if ok is None else "[green]PASS[/]" if ok else "[red]MISS[/]"


OUTCOME_STYLE = {"verified": "[green]✓ verified[/]", "failed": "[red]✗ failed[/]",
                 "unsupported": "[yellow]unsupported[/]", "crash": "[magenta]crash[/]"}


def results_table(results: list[SpecResult]) -> Table:
    table = Table("set", "op", "family", "outcome", "cands", "kernels", "s", "bad promo", "reason",
                  title="expert coverage per spec")
    for r in sorted(results, key=lambda r: (r.set, r.family, r.op)):
        table.add_row(r.set, escape(r.op), escape(r.family), OUTCOME_STYLE[r.outcome], str(r.candidates),
                      _text(r.kernels), f"{r.seconds:.1f}", str(r.incorrect_promoted), escape(_short(r.reason, 80)))
    return table


def family_table(families: dict[str, dict]) -> Table:
    table = Table("family", "specs", "supported", "verified", "median s", "kernels med/max", title="by family")
    for family, s in families.items():
        table.add_row(escape(family), str(s["specs"]), str(s["supported"]), _verified(s),
                      _seconds(s["median_seconds_to_verdict"]), _kernels(s))
    return table


def set_table(sets: dict[str, dict]) -> Table:
    table = Table("set", "specs", "supported", "verified", "target", "mark", "median s", "mark",
                  "kernels med/max", "bad promo", "mark", title="by spec set")
    for name, s in sets.items():
        marks = s["pass"]
        table.add_row(name, str(s["specs"]), str(s["supported"]), _verified(s), f">= {s['target_verified_pct']:.0f}%",
                      _mark(marks["verified"]), _seconds(s["median_seconds_to_verdict"]),
                      _mark(marks["median_seconds"]), _kernels(s), str(s["incorrect_promoted"]),
                      _mark(marks["incorrect_promoted"]))
    return table


def summary_table(summary: dict) -> Table:
    median, marks = summary["median_seconds_to_verdict"], summary["pass"]
    median_text = "—" if median is None else f"{median:.1f} (over {summary['runs_with_verdict']} runs)"
    table = Table("measure", "value", "target", "mark", title="summary")
    table.add_row("specs", str(summary["specs"]), "", "")
    table.add_row("supported", f"{summary['supported']} ({summary['supported_pct']:.0f}%)", "", "")
    table.add_row("verified", _verified(summary), f">= {summary['target_verified_pct']:.0f}%", _mark(marks["verified"]))
    table.add_row("median s to verdict", median_text, f"< {TARGET_MEDIAN_S:.0f}", _mark(marks["median_seconds"]))
    table.add_row("kernels per spec (med/max)", _kernels(summary), "", "")
    table.add_row("incorrect promoted", str(summary["incorrect_promoted"]), "0", _mark(marks["incorrect_promoted"]))
    return table


def _verified(summary: dict) -> str:
    return f"{summary['verified']} ({summary['verified_pct']:.0f}%)"


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _kernels(summary: dict) -> str:
    median, most = summary["kernels_median"], summary["kernels_max"]
    return "—" if median is None else f"{median:g} / {most}"


def _text(value: int | None) -> str:
    return "—" if value is None else str(value)


def _short(text: str | None, width: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"
