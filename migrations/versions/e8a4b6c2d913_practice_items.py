"""practice items: sentences with feedback before item 1, answers not stored

Revision ID: e8a4b6c2d913
Revises: d5f1c3a8e260
Create Date: 2026-11-25 12:30:00

"""
from alembic import op
import sqlalchemy as sa


revision = 'e8a4b6c2d913'
down_revision = 'd5f1c3a8e260'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('practice_items',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('source', sa.Text(), nullable=False),
    sa.Column('better', sa.Text(), nullable=False),
    sa.Column('worse', sa.Text(), nullable=False),
    sa.Column('why', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id'], name=op.f('fk_practice_items_campaign_id_campaigns')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_practice_items')),
    sa.UniqueConstraint('campaign_id', 'number', name=op.f('uq_practice_items_campaign_id'))
    )


def downgrade():
    op.drop_table('practice_items')
