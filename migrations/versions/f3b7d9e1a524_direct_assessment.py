"""direct assessment: campaign protocol and DA settings, bad references,
scores and quality-control items, single-system slots

Revision ID: f3b7d9e1a524
Revises: e8a4b6c2d913
Create Date: 2026-11-26 02:00:00

"""
from alembic import op
import sqlalchemy as sa


revision = 'f3b7d9e1a524'
down_revision = 'e8a4b6c2d913'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('campaigns') as batch:
        batch.add_column(sa.Column('protocol', sa.String(16), nullable=False, server_default='pairwise'))
        batch.add_column(sa.Column('da_dimension', sa.String(10), nullable=False, server_default='adequacy'))
        batch.add_column(sa.Column('da_context', sa.String(10), nullable=False, server_default='source'))
        batch.add_column(sa.Column('qc_share', sa.Integer(), nullable=False, server_default='30'))
        batch.add_column(sa.Column('qc_distance', sa.Integer(), nullable=False, server_default='10'))
        batch.add_column(sa.Column('qc_min_pairs', sa.Integer(), nullable=False, server_default='5'))
        batch.add_column(sa.Column('qc_min_spread', sa.Float(), nullable=False, server_default='3.0'))
    with op.batch_alter_table('outputs') as batch:
        batch.add_column(sa.Column('degraded', sa.Text(), nullable=True))
    with op.batch_alter_table('slots') as batch:
        batch.alter_column('system_b_id', existing_type=sa.Integer(), nullable=True)
    op.drop_index('uq_items_participation_sentence', table_name='items')
    with op.batch_alter_table('items') as batch:
        batch.add_column(sa.Column('score', sa.Integer(), nullable=True))
        batch.add_column(sa.Column('qc_kind', sa.String(16), nullable=True))
        batch.add_column(sa.Column('original_item_id', sa.Integer(), nullable=True))
        batch.create_foreign_key(op.f('fk_items_original_item_id_items'), 'items', ['original_item_id'], ['id'])
        batch.create_check_constraint(op.f('ck_items_valid_score'), 'score >= 0 AND score <= 100')
    op.create_index('ix_items_original', 'items', ['original_item_id'])
    where = sa.text('sentence_id IS NOT NULL AND original_item_id IS NULL')
    op.create_index('uq_items_participation_sentence', 'items', ['participation_id', 'sentence_id'], unique=True,
                    sqlite_where=where, postgresql_where=where)


def downgrade():
    op.drop_index('uq_items_participation_sentence', table_name='items')
    op.drop_index('ix_items_original', table_name='items')
    with op.batch_alter_table('items') as batch:
        batch.drop_constraint(op.f('ck_items_valid_score'), type_='check')
        batch.drop_constraint(op.f('fk_items_original_item_id_items'), type_='foreignkey')
        batch.drop_column('original_item_id')
        batch.drop_column('qc_kind')
        batch.drop_column('score')
    where = sa.text('sentence_id IS NOT NULL')
    op.create_index('uq_items_participation_sentence', 'items', ['participation_id', 'sentence_id'], unique=True,
                    sqlite_where=where, postgresql_where=where)
    with op.batch_alter_table('slots') as batch:
        batch.alter_column('system_b_id', existing_type=sa.Integer(), nullable=False)
    with op.batch_alter_table('outputs') as batch:
        batch.drop_column('degraded')
    with op.batch_alter_table('campaigns') as batch:
        for column in ('qc_min_spread', 'qc_min_pairs', 'qc_distance', 'qc_share', 'da_context', 'da_dimension', 'protocol'):
            batch.drop_column(column)
