"""DA serves several systems' outputs of one source to a volunteer (issue 28): items unique per
volunteer and slot instead of per volunteer and sentence; a plain index on (volunteer, sentence)

Revision ID: b4e8d2a6c913
Revises: e7d2c4a9f165
Create Date: 2026-11-27 02:40:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'b4e8d2a6c913'
down_revision = 'e7d2c4a9f165'
branch_labels = None
depends_on = None


def upgrade():
    op.drop_index('uq_items_participation_sentence', table_name='items')
    where = sa.text('slot_id IS NOT NULL')
    op.create_index('uq_items_participation_slot', 'items', ['participation_id', 'slot_id'], unique=True,
                    sqlite_where=where, postgresql_where=where)
    op.create_index('ix_items_participation_sentence', 'items', ['participation_id', 'sentence_id'])


def downgrade():
    # Fails if a DA volunteer was served two systems' outputs of one source
    # as test items: the older schema cannot hold them.
    op.drop_index('ix_items_participation_sentence', table_name='items')
    op.drop_index('uq_items_participation_slot', table_name='items')
    where = sa.text('sentence_id IS NOT NULL AND original_item_id IS NULL')
    op.create_index('uq_items_participation_sentence', 'items', ['participation_id', 'sentence_id'], unique=True,
                    sqlite_where=where, postgresql_where=where)
