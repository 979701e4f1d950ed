"""The verification ladder as readers show it: one label per evaluation, one row per stage.

The CLI (`opforge kernels`/`show`), the workbench's badges and the batch report all print these,
so the words are the same everywhere. A verdict from before the ladder has no level and no
stages: its label is "—" and it has no stage rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from opforge.harness.ladder import RUNGS

NONE = "—"


def level_label(level: str | None, verified_on: str | None = None) -> str:
    """`emulated · cpu:triton-interpreter-3.5.0`, `compiled`, or "—" when the level is not known."""
    if not level:
        return NONE
    return f"{level} · {verified_on}" if verified_on else level


@dataclass(frozen=True)
class StageRow:
    name: str  # "static", "compile", "cpu_run", "device_run", "profile", ...
    status: str  # passed | failed | skipped | unsupported
    tool: str | None
    version: str | None
    seconds: float | None
    reason: str | None

    def line(self) -> str:
        """`cpu_run: passed (triton-interpreter 3.5.0, 2.10 s)`, `device_run: skipped: no GPU here`."""
        where = " ".join(x for x in (self.tool, self.version) if x)
        timed = isinstance(self.seconds, (int, float)) and not isinstance(self.seconds, bool)
        took = f"{self.seconds:.2f} s" if timed else ""
        detail = ", ".join(x for x in (where, took) if x)
        return f"{self.name}: {self.status}" + (f" ({detail})" if detail else "") + (
            f": {self.reason}" if self.reason else "")


def stage_rows(verdict: dict[str, Any] | None) -> list[StageRow]:
    """The verdict's stage records in ladder order (unknown stage names after them); [] when it has none."""
    stages = (verdict or {}).get("stages")
    if not isinstance(stages, dict):
        return []
    order = list(RUNGS)
    names = sorted(stages, key=lambda n: (order.index(n) if n in order else len(order), n))
    rows = []
    for name in names:
        rec = stages[name] if isinstance(stages[name], dict) else {}
        rows.append(StageRow(name=name, status=str(rec.get("status") or NONE), tool=_text(rec.get("tool")),
                             version=_text(rec.get("version")), seconds=rec.get("seconds"),
                             reason=_text(rec.get("reason"))))
    return rows


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None
