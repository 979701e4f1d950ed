"""Runs: the status "interrupted", for a run whose process was stopped by a signal (Ctrl-C, SIGTERM,
`opforge cancel`'s stop of a run mid-job): its job was ended with it and `opforge run --resume`
continues it. The check constraint on runs.status is replaced by one that allows it; the downgrade
turns interrupted runs back into "running" (how such a run was recorded before).

Revision ID: 0007_run_interrupted
Revises: 0006_evaluation_steps
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_run_interrupted"
down_revision: str | None = "0006_evaluation_steps"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD = ("running", "done", "failed", "cancelled")
NEW = ("running", "done", "failed", "cancelled", "interrupted")


def _check(statuses: tuple[str, ...]) -> str:
    return "status IN (" + ", ".join(f"'{s}'" for s in statuses) + ")"


def _replace(statuses: tuple[str, ...]) -> None:
    with op.batch_alter_table("runs", recreate="always") as batch:
        batch.drop_constraint(op.f("ck_runs_status"), type_="check")
        batch.create_check_constraint("status", _check(statuses))  # named ck_runs_status by convention


def upgrade() -> None:
    _replace(NEW)


def downgrade() -> None:
    op.get_bind().execute(sa.text("UPDATE runs SET status = 'running', finished_at = NULL"
                                  " WHERE status = 'interrupted'"))
    _replace(OLD)
