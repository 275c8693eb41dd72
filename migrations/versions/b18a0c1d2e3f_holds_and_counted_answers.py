"""holds for review, answers that count, the signs' settings and counters

Revision ID: b18a0c1d2e3f
Revises: 10271ba86a83
Create Date: 2026-11-25 11:10:00

"""
from alembic import op
import sqlalchemy as sa


revision = 'b18a0c1d2e3f'
down_revision = '10271ba86a83'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('campaigns', schema=None) as batch_op:
        batch_op.add_column(sa.Column('hold_min_tests', sa.Integer(), nullable=False, server_default='20'))
        batch_op.add_column(sa.Column('hold_alpha', sa.Float(), nullable=False, server_default='0.00001'))
        batch_op.add_column(sa.Column('hold_fast_run', sa.Integer(), nullable=False, server_default='5'))
        batch_op.add_column(sa.Column('equal_judgments', sa.Integer(), nullable=False, server_default='0'))

    with op.batch_alter_table('participations', schema=None) as batch_op:
        batch_op.add_column(sa.Column('items_counted', sa.Integer(), nullable=False, server_default='0'))
        batch_op.add_column(sa.Column('held_at', sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column('held_reason', sa.String(length=40), nullable=True))
        for name in ('tests_left', 'tests_right', 'tests_equal', 'fast_run'):
            batch_op.add_column(sa.Column(name, sa.Integer(), nullable=False, server_default='0'))
    # Before this revision every answer counted.
    op.execute("UPDATE participations SET items_counted = items_answered")


def downgrade():
    with op.batch_alter_table('participations', schema=None) as batch_op:
        for name in ('fast_run', 'tests_equal', 'tests_right', 'tests_left', 'held_reason', 'held_at',
                     'items_counted'):
            batch_op.drop_column(name)

    with op.batch_alter_table('campaigns', schema=None) as batch_op:
        for name in ('equal_judgments', 'hold_fast_run', 'hold_alpha', 'hold_min_tests'):
            batch_op.drop_column(name)
