"""Reviews: a person's approve/reject decision on a candidate, with a comment.

Append-only like versions: a later review of the same candidate is a new row,
and the latest one is the candidate's current review state.

Revision ID: 0004_reviews
Revises: 0003_runs_and_llm_calls
Create Date: 2025-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_reviews"
down_revision: str | None = "0003_runs_and_llm_calls"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "reviews",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("candidate_id", sa.Integer(), nullable=False),
        sa.Column("decision", sa.String(20), nullable=False),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("reviewer", sa.String(200), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_reviews"),
        sa.ForeignKeyConstraint(["candidate_id"], ["candidates.id"], name="fk_reviews_candidate_id_candidates"),
        sa.CheckConstraint("decision IN ('approved', 'rejected')", name=op.f("ck_reviews_decision")),
    )
    op.create_index("ix_reviews_candidate_id", "reviews", ["candidate_id"])


def downgrade() -> None:
    op.drop_index("ix_reviews_candidate_id", table_name="reviews")
    op.drop_table("reviews")
