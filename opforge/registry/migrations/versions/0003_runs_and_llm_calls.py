"""Runs of the agent loop and the LLM calls they made; candidates know their run and round.

Revision ID: 0003_runs_and_llm_calls
Revises: 0002_evaluation_speed_columns
Create Date: 2025-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_runs_and_llm_calls"
down_revision: str | None = "0002_evaluation_speed_columns"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    _create_runs()
    _create_llm_calls()
    # Existing candidates predate runs: run_id and round stay NULL.
    with op.batch_alter_table("candidates") as batch:
        batch.add_column(sa.Column("run_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("round", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_candidates_run_id_runs", "runs", ["run_id"], ["id"])
        batch.create_index("ix_candidates_run_id", ["run_id"])


def downgrade() -> None:
    with op.batch_alter_table("candidates") as batch:
        batch.drop_index("ix_candidates_run_id")
        batch.drop_constraint("fk_candidates_run_id_runs", type_="foreignkey")
        batch.drop_column("round")
        batch.drop_column("run_id")
    op.drop_index("ix_llm_calls_run_id", table_name="llm_calls")
    op.drop_table("llm_calls")
    op.drop_table("runs")


def _create_runs() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_key", sa.String(64), nullable=False),
        sa.Column("op", sa.String(200), nullable=False),
        sa.Column("spec_id", sa.Integer(), nullable=False),
        sa.Column("backend", sa.String(50), nullable=False),
        sa.Column("drafter", sa.String(50), nullable=False),
        sa.Column("hardware", sa.String(200), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("best_candidate_id", sa.Integer(), nullable=True),
        sa.Column("stop_reason", sa.String(200), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("tokens", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_runs"),
        sa.ForeignKeyConstraint(["spec_id"], ["specs.id"], name="fk_runs_spec_id_specs"),
        sa.ForeignKeyConstraint(
            ["best_candidate_id"], ["candidates.id"], name="fk_runs_best_candidate_id_candidates"
        ),
        sa.UniqueConstraint("run_key", name="uq_runs_run_key"),
        sa.CheckConstraint(
            "status IN ('running', 'done', 'failed', 'cancelled')", name=op.f("ck_runs_status")
        ),
    )


def _create_llm_calls() -> None:
    op.create_table(
        "llm_calls",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("candidate_id", sa.Integer(), nullable=True),
        sa.Column("round", sa.Integer(), nullable=True),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("temperature", sa.Float(), nullable=False),
        sa.Column("messages", sa.JSON(), nullable=False),
        sa.Column("reply", sa.Text(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("latency_s", sa.Float(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_llm_calls"),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_llm_calls_run_id_runs"),
        sa.ForeignKeyConstraint(
            ["candidate_id"], ["candidates.id"], name="fk_llm_calls_candidate_id_candidates"
        ),
    )
    op.create_index("ix_llm_calls_run_id", "llm_calls", ["run_id"])
