"""The verification ladder: one vocabulary for what ran and how far it got, for every backend.

*Steps* say what ran. A verdict's `steps` is {name: record} in ladder order: `static` (opforge's
checks of the source), `frontend_compile` (a vendor front end; Ascend), `compile` (the vendor
compiler), `cpu_run` (numerics on a CPU by a named interpreter or emulator), `device_run`
(numerics on named hardware), `profile` (timed there); `draft` only in the verdict of an LLM reply
that never became a runnable candidate. Each record is `{status, tool, version, seconds, reason}`;
a step this machine cannot run is `skipped` (or `unsupported`, when the tool exists but cannot run
this candidate) with a concrete reason, and never counts as passed.

`failed_step` names the step that failed (the first in ladder order; null when none did), and only
that step's record says more: its `reason` is the verdict's first reason and its `check` says which
check inside the step failed. A check is a word within one step, never a second scale:

    static               syntax (the source does not parse), rules (a static rule, or a launch rule
                         the build recorded)
    frontend_compile,    build (the vendor front end or compiler refused it)
    compile
    cpu_run, device_run  load (the reference would not run, or the candidate not load), run (it
                         raised, died, ran out of memory or time), compare (wrong values), anticheat
                         (a rule of a fair kernel broken: judge.ANTICHEAT)
    draft                reply (the reply held no usable candidate; it never ran)

The *level* says how far it got: the highest rung whose step passed, `static` < `frontend-compiled`
< `compiled` < `emulated` < `device` < `profiled`. Only a numerics-checked kernel is promotable.

Verdicts written before this vocabulary have `stages` (the same records) and a top-level `stage`
that mixed a step with a check (`load`, `static`, `build`, `run`, `compare`, `anticheat`, `draft`,
or for a correct one `profile`/`anticheat`). `read_verdict` turns one into today's shape; every
verdict the registry takes passes through it, and the registry's migration 0006 rewrote the stored
ones with a frozen copy of the same rules.
"""
from __future__ import annotations

LEVELS = ("static", "frontend-compiled", "compiled", "emulated", "device", "profiled")
PROMOTABLE = ("emulated", "device", "profiled")
STATUSES = ("passed", "failed", "skipped", "unsupported")
# Each ladder step of a verdict and the rung it reaches when it passes, in ladder order.
RUNGS = {"static": "static", "frontend_compile": "frontend-compiled", "compile": "compiled",
         "cpu_run": "emulated", "device_run": "device", "profile": "profiled"}
NUMERICS = ("cpu_run", "device_run")
DRAFT = "draft"  # the step of an LLM reply that gave no usable candidate
STEP_ORDER = (DRAFT, *RUNGS)
# The checks inside each step; the first is what a failed step's check is when nothing said more.
CHECKS = {DRAFT: ("reply",), "static": ("rules", "syntax"), "frontend_compile": ("build",),
          "compile": ("build",), "cpu_run": ("run", "load", "compare", "anticheat"),
          "device_run": ("run", "load", "compare", "anticheat"), "profile": ("run",)}

# The reason of a step after the failed one: the failed step is named once, by `failed_step`.
NOT_REACHED = "not reached: the failed step stopped the verification"

EXIT_CORRECT, EXIT_INCORRECT, EXIT_BAD_INPUT, EXIT_UNVERIFIABLE = 0, 1, 2, 3


def step(status: str, tool: str | None = None, version: str | None = None,
         seconds: float | None = None, reason: str | None = None, check: str | None = None) -> dict:
    """One step record; `reason` is required for anything but a pass, `check` is for a failure only."""
    if status not in STATUSES:
        raise ValueError(f"unknown step status {status!r} (known: {', '.join(STATUSES)})")
    if status != "passed" and not reason:
        raise ValueError(f"a {status} step needs a reason")
    if check is not None and status != "failed":
        raise ValueError(f"only a failed step names the check that failed, not a {status} one")
    record = {"status": status, "tool": tool, "version": version,
              "seconds": None if seconds is None else round(seconds, 3), "reason": reason}
    return record | ({"check": check} if check else {})


def level_rank(level: str | None) -> int:
    """0 for no level, else 1 + the rung's index (so any level outranks none)."""
    return 0 if level is None else LEVELS.index(level) + 1


def level_of(steps: dict) -> str | None:
    """The highest rung among the passed steps (None when none passed)."""
    passed = [RUNGS[name] for name, record in steps.items() if name in RUNGS and record["status"] == "passed"]
    return max(passed, key=level_rank, default=None)


def numerics_passed(steps: dict) -> bool:
    return any(steps.get(name, {}).get("status") == "passed" for name in NUMERICS)


def any_failed(steps: dict) -> bool:
    return any(record["status"] == "failed" for record in steps.values())


def first_failed(steps: dict) -> str | None:
    """The failed step earliest on the ladder (a backend's own step names after the known ones)."""
    failed = [name for name, record in steps.items() if isinstance(record, dict) and record.get("status") == "failed"]
    return min(failed, key=lambda n: STEP_ORDER.index(n) if n in STEP_ORDER else len(STEP_ORDER), default=None)


def with_check(record: dict, name: str, check: str | None = None) -> dict:
    """A failed step's record naming its check: `check`, else the one it names, else the step's default."""
    chosen = check or record.get("check") or CHECKS.get(name, (None,))[0]
    return record | ({"check": chosen} if chosen else {})


def failed_check(verdict: dict) -> str | None:
    """The check inside the failed step that failed (`compare`, `build`, ...); None when none failed."""
    name = verdict.get("failed_step")
    return ((verdict.get("steps") or {}).get(name) or {}).get("check") if name else None


def promotable(level: str | None) -> bool:
    return level in PROMOTABLE


def exit_code(verdict: dict) -> int:
    """`opforge verify`'s exit code for a verdict: 0 correct; 3 when nothing failed but no numerics
    step could run here (only `static`/`compiled` reached); else 1. (2, bad input, never has a verdict.)"""
    if verdict.get("correct"):
        return EXIT_CORRECT
    steps = verdict.get("steps") or {}
    if steps and not any_failed(steps) and not numerics_passed(steps):
        return EXIT_UNVERIFIABLE
    return EXIT_INCORRECT


# A verdict from before `steps`: its top-level `stage` as (step, check) where it failed; None as the
# step: the numerics step of the device it ran on; None as the check: the failed step's default.
OLD_STAGES = {"load": (None, "load"), "static": ("static", "rules"), "build": ("compile", "build"),
              "run": (None, "run"), "compare": (None, "compare"), "anticheat": (None, "anticheat"),
              "draft": (DRAFT, "reply")}


def read_verdict(verdict: dict) -> dict:
    """`verdict` in today's shape (`steps`, `failed_step`; the failed step's `check`), whether it was
    written so or before (`stages`, `stage`); a new dict when it had to change, else `verdict` itself."""
    if "failed_step" in verdict or not ({"stage", "stages"} & verdict.keys()):
        return verdict
    new = {k: v for k, v in verdict.items() if k not in ("stage", "stages")}
    steps = {name: dict(rec) for name, rec in (verdict.get("stages") or {}).items() if isinstance(rec, dict)}
    old, reasons = verdict.get("stage"), [str(r) for r in verdict.get("reasons") or []]
    name = first_failed(steps)
    where, check = OLD_STAGES.get(old, (None, None))
    if name is None and not steps and verdict.get("correct") is False:
        # from before the ladder: no records, so the step its stage names failed, with its first reason
        syntax = old == "load" and bool(reasons) and reasons[0].startswith("syntax-error")
        name = "static" if syntax else where or (old if old in STEP_ORDER else _numerics_of(verdict))
        steps[name] = step("failed", reason=(reasons or [f"failed at {old or 'an unknown step'}"])[0])
    if name is not None:
        syntax = name == "static" and old == "load"
        steps[name] = with_check(steps[name], name, "syntax" if syntax else check if check in CHECKS.get(name, ()) else None)
    return new | {"steps": steps, "failed_step": name}


def _numerics_of(verdict: dict) -> str:
    return "cpu_run" if verdict.get("device") in (None, "cpu") else "device_run"


def hardware_slug(name: str) -> str:
    """`NVIDIA H200` -> `nvidia-h200`: the `verified_on` of a device run."""
    slug = "".join(c if c.isalnum() else "-" for c in name.lower())
    return "-".join(part for part in slug.split("-") if part) or "device"
