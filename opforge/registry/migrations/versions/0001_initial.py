"""Initial registry schema: specs, candidates, evaluations, versions.

Revision ID: 0001_initial
Revises:
Create Date: 2025-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001_initial"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    _create_specs()
    _create_candidates()
    _create_evaluations()
    _create_versions()


def downgrade() -> None:
    op.drop_table("versions")
    op.drop_table("evaluations")
    op.drop_table("candidates")
    op.drop_table("specs")


def _create_specs() -> None:
    op.create_table(
        "specs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("path", sa.String(1000), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_specs"),
        sa.UniqueConstraint("sha256", name="uq_specs_sha256"),
    )
    op.create_index("ix_specs_name", "specs", ["name"])


def _create_candidates() -> None:
    op.create_table(
        "candidates",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("spec_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("backend", sa.String(50), nullable=False),
        sa.Column("drafter", sa.String(50), nullable=False),
        sa.Column("parent_id", sa.Integer(), nullable=True),
        sa.Column("meta", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_candidates"),
        sa.ForeignKeyConstraint(["spec_id"], ["specs.id"], name="fk_candidates_spec_id_specs"),
        sa.ForeignKeyConstraint(
            ["parent_id"], ["candidates.id"], name="fk_candidates_parent_id_candidates"
        ),
        sa.UniqueConstraint("spec_id", "sha256", "backend", name="uq_candidates_spec_sha_backend"),
    )
    op.create_index("ix_candidates_parent_id", "candidates", ["parent_id"])


def _create_evaluations() -> None:
    # The speed columns arrive in 0002; here only the JSON verdict holds them.
    op.create_table(
        "evaluations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("candidate_id", sa.Integer(), nullable=False),
        sa.Column("hardware", sa.String(200), nullable=False),
        sa.Column("hardware_info", sa.JSON(), nullable=False),
        sa.Column("correct", sa.Boolean(), nullable=False),
        sa.Column("stage", sa.String(50), nullable=False),
        sa.Column("reasons", sa.JSON(), nullable=False),
        sa.Column("verdict", sa.JSON(), nullable=False),
        sa.Column("timings", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_evaluations"),
        sa.ForeignKeyConstraint(
            ["candidate_id"], ["candidates.id"], name="fk_evaluations_candidate_id_candidates"
        ),
    )
    op.create_index("ix_evaluations_candidate_id_id", "evaluations", ["candidate_id", "id"])


def _create_versions() -> None:
    op.create_table(
        "versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("op", sa.String(200), nullable=False),
        sa.Column("backend", sa.String(50), nullable=False),
        sa.Column("hardware", sa.String(200), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("candidate_id", sa.Integer(), nullable=False),
        sa.Column("evaluation_id", sa.Integer(), nullable=False),
        sa.Column("promoted_at", sa.DateTime(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("note", sa.String(2000), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_versions"),
        sa.ForeignKeyConstraint(
            ["candidate_id"], ["candidates.id"], name="fk_versions_candidate_id_candidates"
        ),
        sa.ForeignKeyConstraint(
            ["evaluation_id"], ["evaluations.id"], name="fk_versions_evaluation_id_evaluations"
        ),
        sa.UniqueConstraint("op", "backend", "hardware", "number", name="uq_versions_key_number"),
    )
    op.create_index("ix_versions_candidate_id", "versions", ["candidate_id"])
    op.create_index(
        "uq_versions_one_active",
        "versions",
        ["op", "backend", "hardware"],
        unique=True,
        sqlite_where=sa.text("active = 1"),
    )
