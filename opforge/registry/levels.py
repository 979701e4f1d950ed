"""The verification ladder as readers show it: one label per evaluation, one row per step.

The CLI (`opforge verify`/`kernels`/`show`), the workbench's badges and tables and the batch report
all print these, so the words are the same everywhere (harness/ladder.py): *steps* say what ran,
the failed one names its check, the *level* says how far it got. A verdict from before the ladder
has no level and no step records: its label is "—" and its only row is its failed step, if any.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from opforge.harness.ladder import STEP_ORDER, read_verdict

NONE = "—"


def level_label(level: str | None, verified_on: str | None = None) -> str:
    """`emulated · cpu:triton-interpreter-3.5.0`, `compiled`, or "—" when the level is not known."""
    if not level:
        return NONE
    return f"{level} · {verified_on}" if verified_on else level


def failure_label(failed_step: str | None, failed_check: str | None) -> str:
    """`cpu_run failed (compare)`: the failed step, named once, with the check inside it that failed."""
    return f"{failed_step or 'a step'} failed" + (f" ({failed_check})" if failed_check else "")


@dataclass(frozen=True)
class StepRow:
    name: str  # "static", "compile", "cpu_run", "device_run", "profile", ...
    status: str  # passed | failed | skipped | unsupported
    tool: str | None
    version: str | None
    seconds: float | None
    reason: str | None
    check: str | None = None  # the failed step's: which check inside it failed

    def line(self) -> str:
        """`cpu_run: passed (triton-interpreter 3.5.0, 2.10 s)`, `device_run: skipped: no GPU here`,
        `cpu_run: failed the compare check (triton-interpreter 3.5.0, 2.10 s): mismatch: ...`."""
        where = " ".join(x for x in (self.tool, self.version) if x)
        timed = isinstance(self.seconds, (int, float)) and not isinstance(self.seconds, bool)
        took = f"{self.seconds:.2f} s" if timed else ""
        detail = ", ".join(x for x in (where, took) if x)
        status = f"{self.status} the {self.check} check" if self.check else self.status
        return f"{self.name}: {status}" + (f" ({detail})" if detail else "") + (
            f": {self.reason}" if self.reason else "")


def step_rows(verdict: dict[str, Any] | None) -> list[StepRow]:
    """The verdict's step records in ladder order (unknown step names after them); [] when it has none.
    A verdict in the keys from before steps is read as harness.ladder.read_verdict reads it."""
    steps = read_verdict(verdict or {}).get("steps")
    if not isinstance(steps, dict):
        return []
    order = list(STEP_ORDER)
    names = sorted(steps, key=lambda n: (order.index(n) if n in order else len(order), n))
    rows = []
    for name in names:
        rec = steps[name] if isinstance(steps[name], dict) else {}
        rows.append(StepRow(name=name, status=str(rec.get("status") or NONE), tool=_text(rec.get("tool")),
                            version=_text(rec.get("version")), seconds=rec.get("seconds"),
                            reason=_text(rec.get("reason")), check=_text(rec.get("check"))))
    return rows


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None
