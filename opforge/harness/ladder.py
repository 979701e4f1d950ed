"""The verification ladder: how far a verdict got, the same words for every backend.

A verdict's `level` is the highest rung whose stage passed: `static` (the source passed opforge's
checks) < `frontend-compiled` (a vendor front end lowered it; Ascend) < `compiled` (the vendor
compiler produced device code) < `emulated` (numerics checked on a CPU by a named interpreter or
emulator) < `device` (numerics checked on named hardware) < `profiled` (also timed there). Each
stage is recorded as `{status, tool, version, seconds, reason}`; a stage this machine cannot run
is `skipped` (or `unsupported`, when the tool exists but cannot run this candidate) with a
concrete reason, and never counts as passed. Only a numerics-checked kernel is promotable.
"""
from __future__ import annotations

LEVELS = ("static", "frontend-compiled", "compiled", "emulated", "device", "profiled")
PROMOTABLE = ("emulated", "device", "profiled")
STATUSES = ("passed", "failed", "skipped", "unsupported")
# Each stage of a verdict and the rung it reaches when it passes, in ladder order.
RUNGS = {"static": "static", "frontend_compile": "frontend-compiled", "compile": "compiled",
         "cpu_run": "emulated", "device_run": "device", "profile": "profiled"}
NUMERICS = ("cpu_run", "device_run")

EXIT_CORRECT, EXIT_INCORRECT, EXIT_BAD_INPUT, EXIT_UNVERIFIABLE = 0, 1, 2, 3


def stage(status: str, tool: str | None = None, version: str | None = None,
          seconds: float | None = None, reason: str | None = None) -> dict:
    """One stage record; `reason` is required for anything but a pass."""
    if status not in STATUSES:
        raise ValueError(f"unknown stage status {status!r} (known: {', '.join(STATUSES)})")
    if status != "passed" and not reason:
        raise ValueError(f"a {status} stage needs a reason")
    return {"status": status, "tool": tool, "version": version,
            "seconds": None if seconds is None else round(seconds, 3), "reason": reason}


def level_rank(level: str | None) -> int:
    """0 for no level, else 1 + the rung's index (so any level outranks none)."""
    return 0 if level is None else LEVELS.index(level) + 1


def level_of(stages: dict) -> str | None:
    """The highest rung among the passed stages (None when none passed)."""
    passed = [RUNGS[name] for name, record in stages.items() if name in RUNGS and record["status"] == "passed"]
    return max(passed, key=level_rank, default=None)


def numerics_passed(stages: dict) -> bool:
    return any(stages.get(name, {}).get("status") == "passed" for name in NUMERICS)


def any_failed(stages: dict) -> bool:
    return any(record["status"] == "failed" for record in stages.values())


def promotable(level: str | None) -> bool:
    return level in PROMOTABLE


def exit_code(verdict: dict) -> int:
    """`opforge verify`'s exit code for a verdict: 0 correct; 3 when nothing failed but no numerics
    stage could run here (only `static`/`compiled` reached); else 1. (2, bad input, never has a verdict.)"""
    if verdict.get("correct"):
        return EXIT_CORRECT
    stages = verdict.get("stages") or {}
    if stages and not any_failed(stages) and not numerics_passed(stages):
        return EXIT_UNVERIFIABLE
    return EXIT_INCORRECT


def hardware_slug(name: str) -> str:
    """`NVIDIA H200` -> `nvidia-h200`: the `verified_on` of a device run."""
    slug = "".join(c if c.isalnum() else "-" for c in name.lower())
    return "-".join(part for part in slug.split("-") if part) or "device"
