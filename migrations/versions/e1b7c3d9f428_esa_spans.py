"""Error Span Annotation (issue 33): the spans an ESA answer marks.

Revision ID: e1b7c3d9f428
Revises: d5f1a3c7e912
Create Date: 2026-11-28 12:30:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'e1b7c3d9f428'
down_revision = 'd5f1a3c7e912'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('items') as batch:
        batch.add_column(sa.Column('spans', sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table('items') as batch:
        batch.drop_column('spans')
