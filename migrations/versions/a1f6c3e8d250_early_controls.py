"""Denser controls in a new volunteer's first items (issue 28): early_control_items and
early_control_every; existing campaigns keep their schedule (0 items: no early window)

Revision ID: a1f6c3e8d250
Revises: b4e8d2a6c913
Create Date: 2026-11-27 05:30:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'a1f6c3e8d250'
down_revision = 'b4e8d2a6c913'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('campaigns', sa.Column('early_control_items', sa.Integer(), nullable=False, server_default='0'))
    op.add_column('campaigns', sa.Column('early_control_every', sa.Integer(), nullable=False, server_default='2'))


def downgrade():
    with op.batch_alter_table('campaigns') as batch_op:
        batch_op.drop_column('early_control_every')
        batch_op.drop_column('early_control_items')
