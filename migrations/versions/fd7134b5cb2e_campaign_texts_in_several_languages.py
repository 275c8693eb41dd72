"""campaigns.texts: a campaign's name, description and instructions in other languages

Revision ID: fd7134b5cb2e
Revises: b2d4f6a8c013
Create Date: 2026-11-26 04:30:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'fd7134b5cb2e'
down_revision = 'b2d4f6a8c013'
branch_labels = None
depends_on = None


def upgrade():
    # NULL: the campaigns imported before have their default texts only.
    with op.batch_alter_table('campaigns', schema=None) as batch_op:
        batch_op.add_column(sa.Column('texts', sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table('campaigns', schema=None) as batch_op:
        batch_op.drop_column('texts')
