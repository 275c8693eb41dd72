"""Pairwise repeats for intra-annotator agreement (issue 29): the campaign's
share of repeat items and their minimum distance (off by default)

Revision ID: c8f2a4d6e913
Revises: b7e2d9c4f318
Create Date: 2026-11-28 10:00:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'c8f2a4d6e913'
down_revision = 'b7e2d9c4f318'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('campaigns') as batch:
        batch.add_column(sa.Column('repeat_share', sa.Integer(), nullable=False, server_default='0'))
        batch.add_column(sa.Column('repeat_distance', sa.Integer(), nullable=False, server_default='10'))


def downgrade():
    with op.batch_alter_table('campaigns') as batch:
        batch.drop_column('repeat_distance')
        batch.drop_column('repeat_share')
