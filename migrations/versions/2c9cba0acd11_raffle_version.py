"""The raffle list's version on each campaign (issue 30): moved with every
change of who counts or of a ticket's validity, so that each process's
cached ticket list knows when to read the list again; an index for the
latest voids, which the raffle page reads at each view

Revision ID: 2c9cba0acd11
Revises: c6e2a8d4f137
Create Date: 2026-11-27 15:00:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '2c9cba0acd11'
down_revision = 'c6e2a8d4f137'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('campaigns') as batch:
        batch.add_column(sa.Column('raffle_version', sa.Integer(), nullable=False, server_default='0'))
    op.create_index('ix_tickets_voided', 'tickets', ['campaign_id', 'voided_at'])


def downgrade():
    op.drop_index('ix_tickets_voided', table_name='tickets')
    with op.batch_alter_table('campaigns') as batch:
        batch.drop_column('raffle_version')
