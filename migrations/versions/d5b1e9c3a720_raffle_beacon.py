"""raffle: the public beacon named by the commitment, its value at the draw,
the time the ticket list froze

Revision ID: d5b1e9c3a720
Revises: c4a8e2f6b913
Create Date: 2026-11-27 02:40:00

"""
from alembic import op
import sqlalchemy as sa


revision = 'd5b1e9c3a720'
down_revision = 'c4a8e2f6b913'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('raffle_commitments', schema=None) as batch_op:
        batch_op.add_column(sa.Column('beacon', sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column('beacon_at', sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column('beacon_value', sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column('closed_at', sa.DateTime(), nullable=True))


def downgrade():
    with op.batch_alter_table('raffle_commitments', schema=None) as batch_op:
        batch_op.drop_column('closed_at')
        batch_op.drop_column('beacon_value')
        batch_op.drop_column('beacon_at')
        batch_op.drop_column('beacon')
