"""Rows and text the pages display, made from registry rows and verdicts (plain data in, plain data
out, so each is tested without a browser)."""
from __future__ import annotations

import difflib
import math
from datetime import datetime, timezone
from typing import Any

from opforge.registry import EvaluationRow, KernelRow, RunRow
from opforge.registry.levels import failure_label, level_label, step_rows

# The badge colour of each rung: grey for checks of the source only, orange for compiled, blue for
# numerics on a CPU, green for numerics on the device, violet for timed there.
LEVEL_COLORS = {"static": "gray", "frontend-compiled": "orange", "compiled": "orange", "emulated": "blue",
                "device": "green", "profiled": "violet"}


def verdict_label(correct: bool | None, failed_step: str | None = None, failed_check: str | None = None) -> str:
    """`✅ correct`, `❌ cpu_run failed (compare)`, or `🟡 not verifiable here` when no step failed but
    none that checks the numbers could run on that machine (`opforge verify`'s exit 3): no failure."""
    if correct is None:
        return "not evaluated yet"
    if correct:
        return "✅ correct"
    return f"❌ {failure_label(failed_step, failed_check)}" if failed_step else "🟡 not verifiable here"


def evaluation_label(ev: EvaluationRow | None) -> str:
    return verdict_label(ev.correct, ev.failed_step, ev.failed_check) if ev else verdict_label(None)


def level_badge(level: str | None, verified_on: str | None) -> tuple[str, str]:
    """(label, colour) of the pill shown next to a candidate: `emulated · cpu:triton-interpreter-3.5.0`."""
    return level_label(level, verified_on), LEVEL_COLORS.get(level or "", "gray")


def step_table(verdict: dict) -> list[dict[str, Any]]:
    """The verdict's ladder steps, the failed one with its check (none for a verdict from before the
    ladder that passed)."""
    return [{"step": r.name, "status": r.status, "check": r.check or "", "tool": r.tool or "",
             "version": r.version or "", "seconds": r.seconds, "reason": r.reason or ""} for r in step_rows(verdict)]


def kernel_table(rows: list[KernelRow]) -> list[dict[str, Any]]:
    return [{"id": r.candidate_id, "round": r.round, "drafter": r.drafter, "verdict": verdict_label(r.correct, r.failed_step, r.failed_check),
             "level": level_label(r.level, r.verified_on), "reason": r.first_reason or "", "hardware": r.hardware or "", "ms": r.kernel_ms,
             "speedup": r.speedup_eager, "active": "★" if r.active else "", "created": r.created_at}
            for r in rows]


def run_table(runs: list[RunRow]) -> list[dict[str, Any]]:
    return [{"run": r.run_key, "op": r.op, "drafter": r.drafter, "status": r.status,
             "best": r.best_candidate_id, "tokens": r.tokens, "time": elapsed(r),
             "stop reason": r.stop_reason or r.error or "", "started": r.started_at} for r in runs]


def elapsed(run: RunRow) -> str:
    end = run.finished_at or datetime.now(timezone.utc)
    seconds = max(0.0, (end - run.started_at).total_seconds())
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def variant_table(verdict: dict) -> list[dict[str, Any]]:
    return [{"variant": v["index"], "shapes": " ".join(str(tuple(s)) for s in v["shapes"]), "trials": v["trials"],
             "max abs err": f"{v['max_abs_err']:.2e}", "max rel err": f"{v['max_rel_err']:.2e}",
             "atol": f"{v['atol']:g}", "rtol": f"{v['rtol']:g}", "passed": "✅" if v["passed"] else "❌"} for v in verdict.get("variants") or []]


def stress_table(verdict: dict) -> list[dict[str, Any]]:
    """The stress cases of the numerics step: what each was, how it compared, or why it was skipped."""
    rows = []
    for case in verdict.get("stress") or []:
        compared = case.get("status") != "skipped"
        rows.append({"case": case["case"], "status": {"passed": "✅", "failed": "❌"}.get(case["status"], "skipped"),
                     "shapes": " ".join(str(tuple(s)) for s in case.get("shapes", [])),
                     "max abs err": f"{case['max_abs_err']:.2e}" if compared else "",
                     "max rel err": f"{case['max_rel_err']:.2e}" if compared else "",
                     "why skipped": case.get("reason", "")})
    return rows


def anticheat_table(verdict: dict) -> list[dict[str, str]]:
    return [{"check": name, "result": result} for name, result in (verdict.get("anticheat") or {}).items()]


def build_table(verdict: dict) -> list[dict[str, Any]]:
    return [{"kernel": k["kernel"], "arch": k["arch"], "registers": k["registers"],
             "spill stores (B)": k["spill_stores"], "spill loads (B)": k["spill_loads"],
             "shared (B)": k["shared_bytes"], "warps": k["num_warps"], "stages": k["num_stages"],
             "constexprs": ", ".join(f"{a}={b}" for a, b in (k.get("constexprs") or {}).items())}
            for k in (verdict.get("build") or {}).get("kernels", [])]


def input_elements(verdict: dict) -> int | None:
    """Elements in the main inputs (variant 0) — the x axis of the timing plot."""
    variants = verdict.get("variants") or []
    if not variants:
        return None
    return sum(math.prod(shape) for shape in variants[0]["shapes"])


def timing_points(evaluations: list[Any]) -> list[dict[str, Any]]:
    """(input elements, series, ms) for every timed evaluation: kernel, PyTorch eager, torch.compile."""
    points = []
    for ev in evaluations:
        timings, size = ev.timings, input_elements(ev.verdict)
        if not timings or size is None:
            continue
        for series, key in (("kernel", "kernel_ms"), ("PyTorch eager", "eager_ms"), ("torch.compile", "compile_ms")):
            if timings.get(key) is not None:
                points.append({"input elements": size, "series": series, "ms": timings[key],
                               "hardware": ev.hardware, "evaluation": ev.id})
    return points


def source_diff(old: str, new: str, old_name: str, new_name: str) -> str:
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), old_name, new_name, lineterm="")
    return "\n".join(lines) or "(identical sources)"


def conversation(calls: list[dict]) -> list[tuple[str, str]]:
    """(role, text) pairs of every LLM call that produced a candidate: the prompt, then the reply."""
    turns: list[tuple[str, str]] = []
    for call in calls:
        turns += [(m.get("role", "user"), str(m.get("content", ""))) for m in call["messages"]]
        turns.append(("assistant", call["reply"] if not call.get("error") else f"{call['reply']}\n\n(error: {call['error']})"))
    return turns
