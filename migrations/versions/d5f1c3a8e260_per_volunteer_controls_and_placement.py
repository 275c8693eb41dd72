"""per-volunteer control subsets, random control placement, expected volunteers

Revision ID: d5f1c3a8e260
Revises: c4e7a2b9d105
Create Date: 2026-11-25 12:00:00

"""
from alembic import op
import sqlalchemy as sa


revision = 'd5f1c3a8e260'
down_revision = 'c4e7a2b9d105'
branch_labels = None
depends_on = None


def upgrade():
    # The defaults keep existing campaigns as they were: the whole pool, the paper's schedule.
    with op.batch_alter_table('campaigns', schema=None) as batch_op:
        batch_op.add_column(sa.Column('control_placement', sa.String(length=8), nullable=False,
                                      server_default='fixed'))
        batch_op.add_column(sa.Column('controls_per_volunteer', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('expected_volunteers', sa.Integer(), nullable=False, server_default='0'))


def downgrade():
    with op.batch_alter_table('campaigns', schema=None) as batch_op:
        for name in ('expected_volunteers', 'controls_per_volunteer', 'control_placement'):
            batch_op.drop_column(name)
