"""dismissal reasons stored as codes: the two pairwise rules' English sentences become codes

Revision ID: e7d2c9a4f168
Revises: c9d2e4f6a871
Create Date: 2026-11-26 04:40:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'e7d2c9a4f168'
down_revision = 'c9d2e4f6a871'
branch_labels = None
depends_on = None

# The sentences the rule stored before, and their codes (services/quality.py).
CODES = {
    'failed one of the first control sentences': 'first_controls_failed',
    'failed more than the allowed share of control sentences': 'control_share_exceeded',
}
COLUMNS = (('participations', 'dismissed_reason'), ('items', 'discarded_reason'))


def _rename(pairs):
    for table, column in COLUMNS:
        rows = sa.table(table, sa.column(column, sa.String))
        for old, new in pairs:
            op.execute(rows.update().where(rows.c[column] == old).values({column: new}))


def upgrade():
    _rename(CODES.items())


def downgrade():
    _rename((new, old) for old, new in CODES.items())
