"""The latest valid tickets of a volunteer (issue 30): each judgment carries
the latest few numbers and the count, read by walking this index back from
the newest number instead of reading every ticket the volunteer won

Revision ID: b8e4c1f7a392
Revises: a3d7e1f5c902
Create Date: 2026-11-27 22:50:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'b8e4c1f7a392'
down_revision = 'a3d7e1f5c902'
branch_labels = None
depends_on = None


def upgrade():
    op.create_index('ix_tickets_valid_latest', 'tickets', ['participation_id', 'number'],
                    sqlite_where=sa.text('voided_at IS NULL'), postgresql_where=sa.text('voided_at IS NULL'))


def downgrade():
    op.drop_index('ix_tickets_valid_latest', table_name='tickets')
