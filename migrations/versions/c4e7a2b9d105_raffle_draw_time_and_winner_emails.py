"""raffle: the time of the draw named by the commitment, winners' emails sent

Revision ID: c4e7a2b9d105
Revises: b18a0c1d2e3f
Create Date: 2026-11-25 11:00:00

"""
from alembic import op
import sqlalchemy as sa


revision = 'c4e7a2b9d105'
down_revision = 'b18a0c1d2e3f'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('raffle_commitments', schema=None) as batch_op:
        batch_op.add_column(sa.Column('draw_at', sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column('notified', sa.JSON(), nullable=True))
    # Earlier commitments named no time: the campaign's end, when it has one.
    op.execute("UPDATE raffle_commitments SET draw_at = "
               "(SELECT ends_at FROM campaigns WHERE campaigns.id = raffle_commitments.campaign_id)")


def downgrade():
    with op.batch_alter_table('raffle_commitments', schema=None) as batch_op:
        batch_op.drop_column('notified')
        batch_op.drop_column('draw_at')
