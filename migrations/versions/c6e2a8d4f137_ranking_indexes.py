"""The ranking's indexes (issue 30): its order over the ranked volunteers,
the newest volunteers, the unconfirmed accounts

Revision ID: c6e2a8d4f137
Revises: b4d8f2a6c571
Create Date: 2026-11-27 15:10:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'c6e2a8d4f137'
down_revision = 'b4d8f2a6c571'
branch_labels = None
depends_on = None

LIVE = "dismissed_at IS NULL AND held_at IS NULL"


def upgrade():
    op.create_index('ix_participations_ranking', 'participations',
                    ['campaign_id', sa.text('items_counted DESC'), 'reached_count_at', 'id', 'user_id'],
                    sqlite_where=sa.text(LIVE), postgresql_where=sa.text(LIVE))
    op.create_index('ix_participations_newest', 'participations', ['campaign_id', 'joined_at', 'id', 'held_at'],
                    sqlite_where=sa.text('dismissed_at IS NULL'), postgresql_where=sa.text('dismissed_at IS NULL'))
    op.create_index('ix_users_unconfirmed', 'users', ['id'], sqlite_where=sa.text('email_confirmed_at IS NULL'),
                    postgresql_where=sa.text('email_confirmed_at IS NULL'))


def downgrade():
    op.drop_index('ix_users_unconfirmed', table_name='users')
    op.drop_index('ix_participations_newest', table_name='participations')
    op.drop_index('ix_participations_ranking', table_name='participations')
