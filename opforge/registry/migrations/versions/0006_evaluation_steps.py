"""Evaluation steps: one vocabulary for what ran (steps) and how far it got (the level).

A verdict used to keep its step records under `stages` and name, in a top-level `stage`, either a
step or a check inside one (`load`, `static`, `build`, `run`, `compare`, `anticheat`, `draft`; for
a correct verdict `profile` or `anticheat`), which the `stage` column copied. Now the records are
`steps`, `failed_step` names the step that failed (NULL when none did) and that step's record says
in `check` which check inside it failed (harness/ladder.py). This revision rewrites every stored
verdict into those keys and replaces the `stage` column by `failed_step` and `failed_check`.

The rules are frozen here on purpose (today's reader, ladder.read_verdict, may grow); the
downgrade writes the old keys back from the new ones.

Revision ID: 0006_evaluation_steps
Revises: 0005_evaluation_levels
Create Date: 2026-12-09
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0006_evaluation_steps"
down_revision: str | None = "0005_evaluation_levels"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The ladder's steps in order, as when this revision was written, and each one's default check.
ORDER = ("draft", "static", "frontend_compile", "compile", "cpu_run", "device_run", "profile")
CHECKS = {"draft": ("reply",), "static": ("rules", "syntax"), "frontend_compile": ("build",),
          "compile": ("build",), "cpu_run": ("run", "load", "compare", "anticheat"),
          "device_run": ("run", "load", "compare", "anticheat"), "profile": ("run",)}
# An old `stage` as (step, check); None as the step: the numerics step of the device it ran on.
OLD = {"load": (None, "load"), "static": ("static", "rules"), "build": ("compile", "build"),
       "run": (None, "run"), "compare": (None, "compare"), "anticheat": (None, "anticheat"),
       "draft": ("draft", "reply")}
# And back: a check as the old `stage` that named it.
BACK = {"syntax": "load", "rules": "static", "build": "build", "reply": "draft", "load": "load",
        "run": "run", "compare": "compare", "anticheat": "anticheat"}


def upgrade() -> None:
    with op.batch_alter_table("evaluations") as batch:
        batch.add_column(sa.Column("failed_step", sa.String(50), nullable=True))
        batch.add_column(sa.Column("failed_check", sa.String(50), nullable=True))
    conn = op.get_bind()
    rows = conn.execute(sa.text("SELECT id, correct, stage, reasons, verdict FROM evaluations")).all()
    update = sa.text("UPDATE evaluations SET verdict = :verdict, failed_step = :step, failed_check = :check"
                     " WHERE id = :id")
    for ev_id, correct, stage, reasons, verdict in rows:
        old = {"correct": bool(correct), "stage": stage, "reasons": _loads(reasons, [])} | _loads(verdict, {})
        new = to_steps(old)
        step = new["failed_step"]
        check = new["steps"][step].get("check") if step else None
        conn.execute(update, {"verdict": json.dumps(new), "step": step, "check": check, "id": ev_id})
    with op.batch_alter_table("evaluations") as batch:
        batch.drop_column("stage")


def downgrade() -> None:
    with op.batch_alter_table("evaluations") as batch:
        batch.add_column(sa.Column("stage", sa.String(50), nullable=True))
    conn = op.get_bind()
    rows = conn.execute(sa.text("SELECT id, correct, level, failed_check, verdict FROM evaluations")).all()
    update = sa.text("UPDATE evaluations SET verdict = :verdict, stage = :stage WHERE id = :id")
    for ev_id, correct, level, check, verdict in rows:
        stage = BACK.get(check) or ("profile" if level == "profiled" else "anticheat" if correct else "build")
        v = _loads(verdict, {})
        old = {k: val for k, val in v.items() if k not in ("steps", "failed_step")}
        old |= {"stage": stage, "stages": v.get("steps") or {}}
        conn.execute(update, {"verdict": json.dumps(old), "stage": stage, "id": ev_id})
    with op.batch_alter_table("evaluations") as batch:
        batch.alter_column("stage", existing_type=sa.String(50), nullable=False)
        batch.drop_column("failed_check")
        batch.drop_column("failed_step")


def _loads(text: Any, default: Any) -> Any:
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return default
    return value if isinstance(value, type(default)) else default


def to_steps(verdict: dict) -> dict:
    """An old verdict (`stages`, `stage`) in the new keys (`steps`, `failed_step`, the failed step's `check`)."""
    if "failed_step" in verdict:
        return verdict
    new = {k: v for k, v in verdict.items() if k not in ("stage", "stages")}
    steps = {n: dict(r) for n, r in (verdict.get("stages") or {}).items() if isinstance(r, dict)}
    old, reasons = verdict.get("stage"), [str(r) for r in verdict.get("reasons") or []]
    failed = [n for n, r in steps.items() if r.get("status") == "failed"]
    name = min(failed, key=lambda n: ORDER.index(n) if n in ORDER else len(ORDER), default=None)
    where, check = OLD.get(old, (None, None))
    if name is None and not steps and verdict.get("correct") is False:  # from before the ladder
        syntax = old == "load" and bool(reasons) and reasons[0].startswith("syntax-error")
        numerics = "cpu_run" if verdict.get("device") in (None, "cpu") else "device_run"
        name = "static" if syntax else where or (old if old in ORDER else numerics)
        steps[name] = {"status": "failed", "tool": None, "version": None, "seconds": None,
                       "reason": (reasons or [f"failed at {old or 'an unknown step'}"])[0]}
    if name is not None:
        chosen = "syntax" if name == "static" and old == "load" else check if check in CHECKS.get(name, ()) else None
        chosen = chosen or steps[name].get("check") or CHECKS.get(name, (None,))[0]
        steps[name] = steps[name] | ({"check": chosen} if chosen else {})
    return new | {"steps": steps, "failed_step": name}
