"""ESA practice items (issue 33): the errors a practice translation is known to have.

Revision ID: b3d8f1e6a205
Revises: a6c2e8f4b913
Create Date: 2026-11-28 15:10:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'b3d8f1e6a205'
down_revision = 'a6c2e8f4b913'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('practice_items') as batch:
        batch.add_column(sa.Column('spans', sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table('practice_items') as batch:
        batch.drop_column('spans')
