"""item_reports: a volunteer reports a broken item, which is skipped (items.skipped_at);
announcements kept for volunteers who open the judging page later (participations.announcement_seen_id)

Revision ID: c9d2e4f6a871
Revises: fd7134b5cb2e
Create Date: 2026-11-26 04:20:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'c9d2e4f6a871'
down_revision = 'fd7134b5cb2e'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'item_reports',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('campaign_id', sa.Integer(), nullable=False),
        sa.Column('sentence_id', sa.Integer(), nullable=True),
        sa.Column('item_id', sa.Integer(), nullable=False),
        sa.Column('participation_id', sa.Integer(), nullable=False),
        sa.Column('reason', sa.String(length=32), nullable=False),
        sa.Column('text', sa.String(length=200), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id'], name=op.f('fk_item_reports_campaign_id_campaigns')),
        sa.ForeignKeyConstraint(['sentence_id'], ['sentences.id'], name=op.f('fk_item_reports_sentence_id_sentences')),
        sa.ForeignKeyConstraint(['item_id'], ['items.id'], name=op.f('fk_item_reports_item_id_items')),
        sa.ForeignKeyConstraint(['participation_id'], ['participations.id'],
                                name=op.f('fk_item_reports_participation_id_participations')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_item_reports')),
        sa.UniqueConstraint('item_id', name=op.f('uq_item_reports_item_id')),
    )
    op.create_index('ix_item_reports_campaign', 'item_reports', ['campaign_id', 'created_at'], unique=False)
    with op.batch_alter_table('items', schema=None) as batch_op:
        batch_op.add_column(sa.Column('skipped_at', sa.DateTime(), nullable=True))
    op.create_table(
        'announcements',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('campaign_id', sa.Integer(), nullable=False),
        sa.Column('text', sa.String(length=500), nullable=False),
        sa.Column('created_by', sa.Integer(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('expires_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id'], name=op.f('fk_announcements_campaign_id_campaigns')),
        sa.ForeignKeyConstraint(['created_by'], ['users.id'], name=op.f('fk_announcements_created_by_users')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_announcements')),
    )
    op.create_index('ix_announcements_campaign', 'announcements', ['campaign_id', 'id'], unique=False)
    with op.batch_alter_table('participations', schema=None) as batch_op:
        batch_op.add_column(sa.Column('announcement_seen_id', sa.Integer(), nullable=True))


def downgrade():
    with op.batch_alter_table('participations', schema=None) as batch_op:
        batch_op.drop_column('announcement_seen_id')
    op.drop_index('ix_announcements_campaign', table_name='announcements')
    op.drop_table('announcements')
    with op.batch_alter_table('items', schema=None) as batch_op:
        batch_op.drop_column('skipped_at')
    op.drop_index('ix_item_reports_campaign', table_name='item_reports')
    op.drop_table('item_reports')
