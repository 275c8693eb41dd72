"""The dashboard's research counts from counters (issue 30): each
volunteer's rows in the judgments exports (controls, tests, tests below
the reading floor), filled here from the answers already stored

Revision ID: e4b9c2d7f160
Revises: 8a3f587f1b57
Create Date: 2026-11-28 10:00:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'e4b9c2d7f160'
down_revision = '8a3f587f1b57'
branch_labels = None
depends_on = None

COUNTS = ('research_controls', 'research_tests', 'research_tests_too_fast')
# An answer is a row of the exports unless it is a quality-control item whose
# original is not answered yet (DA's bad references served first).
ROWS = ("SELECT count(*) FROM items WHERE items.participation_id = participations.id "
        "AND items.answered_at IS NOT NULL AND (items.qc_kind IS NULL OR items.original_item_id IS NOT NULL)")


def upgrade():
    with op.batch_alter_table('participations') as batch:
        for name in COUNTS:
            batch.add_column(sa.Column(name, sa.Integer(), nullable=False, server_default='0'))
    op.execute(f"UPDATE participations SET "
               f"research_controls = ({ROWS} AND items.control_id IS NOT NULL), "
               f"research_tests = ({ROWS} AND items.control_id IS NULL), "
               f"research_tests_too_fast = ({ROWS} AND items.control_id IS NULL AND items.too_fast)")


def downgrade():
    with op.batch_alter_table('participations') as batch:
        for name in reversed(COUNTS):
            batch.drop_column(name)
