"""Documents (issue 33): a sentence's document and domain, from the
campaign folder's documents file; None for sentences imported without one.

Revision ID: d5f1a3c7e912
Revises: b9e3c1f7a2d4
Create Date: 2026-11-28 12:00:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'd5f1a3c7e912'
down_revision = 'b9e3c1f7a2d4'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('sentences') as batch:
        batch.add_column(sa.Column('document', sa.String(length=120), nullable=True))
        batch.add_column(sa.Column('domain', sa.String(length=40), nullable=True))


def downgrade():
    with op.batch_alter_table('sentences') as batch:
        batch.drop_column('domain')
        batch.drop_column('document')
