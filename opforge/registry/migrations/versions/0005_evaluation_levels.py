"""Evaluation levels: the verification ladder's `level` and `verified_on`, backfilled.

A verdict now names the highest rung it reached (static < frontend-compiled < compiled <
emulated < device < profiled) and where its numerics ran. Promotion and listings read them,
so they get columns. Evaluations recorded before this revision are filled where the stored
verdict says enough: a correct Triton verdict from the CPU interpreter was emulated, a correct
GPU one ran on the device (profiled when it was timed). Anything else stays NULL ("not known").

The inference is frozen here on purpose: it describes what the harness did before the ladder,
and must not change when today's harness does.

Revision ID: 0005_evaluation_levels
Revises: 0004_reviews
Create Date: 2026-12-02
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0005_evaluation_levels"
down_revision: str | None = "0004_reviews"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The ladder as it stood when this revision was written (opforge.harness.ladder.LEVELS).
LEVELS = ("static", "frontend-compiled", "compiled", "emulated", "device", "profiled")


def upgrade() -> None:
    with op.batch_alter_table("evaluations") as batch:
        batch.add_column(sa.Column("level", sa.String(50), nullable=True))
        batch.add_column(sa.Column("verified_on", sa.String(200), nullable=True))
    conn = op.get_bind()
    rows = conn.execute(sa.text(
        "SELECT e.id, e.correct, e.hardware, e.verdict, e.timings, c.backend"
        " FROM evaluations e JOIN candidates c ON c.id = e.candidate_id"
    )).all()
    update = sa.text("UPDATE evaluations SET level = :level, verified_on = :on WHERE id = :id")
    for ev_id, correct, hardware, verdict, timings, backend in rows:
        level, verified_on = infer_level(bool(correct), hardware, _loads(verdict), _loads(timings), backend)
        if level is not None:
            conn.execute(update, {"level": level, "on": verified_on, "id": ev_id})


def downgrade() -> None:
    with op.batch_alter_table("evaluations") as batch:
        batch.drop_column("verified_on")
        batch.drop_column("level")


def _loads(text: Any) -> dict:
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def infer_level(correct: bool, hardware: str, verdict: dict, timings: dict,
                backend: str) -> tuple[str | None, str | None]:
    """(level, verified_on) of an evaluation stored before the ladder; (None, None) if unknown."""
    if verdict.get("level") in LEVELS:  # written by a harness that already knew the ladder
        on = verdict.get("verified_on")
        return verdict["level"], on if isinstance(on, str) and on else None
    if not correct:
        return None, None
    device = verdict.get("device")
    if backend == "triton" and (device == "cpu" or hardware.startswith("cpu/")):
        return "emulated", f"cpu:triton-interpreter-{_triton_version(verdict)}"
    if device == "cuda" or hardware.startswith("cuda/"):
        name = hardware.split("/")[1] if hardware.count("/") >= 2 else hardware
        timed = isinstance(timings.get("kernel_ms"), (int, float)) or verdict.get("stage") == "profile"
        return ("profiled" if timed else "device"), re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return None, None


def _triton_version(verdict: dict) -> str:
    stage = (verdict.get("stages") or {}).get("cpu_run") or {}
    for value in (stage.get("version"), verdict.get("triton_version")):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return "unknown"
