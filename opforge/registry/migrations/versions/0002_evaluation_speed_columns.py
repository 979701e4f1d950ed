"""Evaluation speed columns: kernel_ms and speedup_eager, backfilled.

Listings sort kernels by speed; reading those numbers out of the verdict JSON
for every row was the slow part, so they get real columns, filled here for
evaluations recorded before this revision.

Revision ID: 0002_evaluation_speed_columns
Revises: 0001_initial
Create Date: 2025-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_evaluation_speed_columns"
down_revision: str | None = "0001_initial"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("evaluations") as batch:
        batch.add_column(sa.Column("kernel_ms", sa.Float(), nullable=True))
        batch.add_column(sa.Column("speedup_eager", sa.Float(), nullable=True))
    # json_extract yields NULL for a missing key or a null `timings`, which is
    # exactly the "not measured" value of the new columns. Only numbers are
    # copied: a malformed value stays in the verdict but not in a float column.
    op.execute(
        """
        UPDATE evaluations SET
          kernel_ms = CASE WHEN json_type(timings, '$.kernel_ms') IN ('real', 'integer')
                           THEN json_extract(timings, '$.kernel_ms') END,
          speedup_eager = CASE WHEN json_type(timings, '$.speedup_eager') IN ('real', 'integer')
                               THEN json_extract(timings, '$.speedup_eager') END
        WHERE timings IS NOT NULL AND json_type(timings) = 'object'
        """
    )


def downgrade() -> None:
    with op.batch_alter_table("evaluations") as batch:
        batch.drop_column("speedup_eager")
        batch.drop_column("kernel_ms")
