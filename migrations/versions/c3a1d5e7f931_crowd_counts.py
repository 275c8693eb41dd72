"""Each volunteer's answers in the campaign's crowd counters (issue 31): the
"equal" hold sign compares a volunteer with the crowd's share of "equal"
without the volunteer's own answers; filled here from the answers already given

Revision ID: c3a1d5e7f931
Revises: b8e4c1f7a392
Create Date: 2026-11-28 00:00:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'c3a1d5e7f931'
down_revision = 'b8e4c1f7a392'
branch_labels = None
depends_on = None

# As the campaign's collected_judgments and equal_judgments count them:
# answered test items with a slot, not discarded.
_CROWD = ("FROM items WHERE items.participation_id = participations.id AND items.slot_id IS NOT NULL "
          "AND items.answered_at IS NOT NULL AND items.discarded_at IS NULL")


def upgrade():
    with op.batch_alter_table('participations') as batch:
        batch.add_column(sa.Column('crowd_answers', sa.Integer(), nullable=False, server_default='0'))
        batch.add_column(sa.Column('crowd_equal', sa.Integer(), nullable=False, server_default='0'))
    op.execute(f"UPDATE participations SET crowd_answers = (SELECT count(*) {_CROWD}), "
               f"crowd_equal = (SELECT count(*) {_CROWD} AND items.choice = 'equal')")


def downgrade():
    with op.batch_alter_table('participations') as batch:
        batch.drop_column('crowd_equal')
        batch.drop_column('crowd_answers')
