"""generated controls: campaigns.control_source; a control may be made for one volunteer from a sentence's output (controls.sentence_id, system_id; no number)

Revision ID: a9c3e5f7b214
Revises: d5b1e9c3a720
Create Date: 2026-11-27 02:45:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'a9c3e5f7b214'
down_revision = 'd5b1e9c3a720'
branch_labels = None
depends_on = None


def upgrade():
    # Existing campaigns take generated controls too: their pool could be
    # learnt with throwaway accounts (issue 28; docs/security.md).
    with op.batch_alter_table('campaigns', schema=None) as batch_op:
        batch_op.add_column(sa.Column('control_source', sa.String(length=16), server_default='generated',
                                      nullable=False))
    with op.batch_alter_table('controls', schema=None) as batch_op:
        batch_op.add_column(sa.Column('sentence_id', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('system_id', sa.Integer(), nullable=True))
        batch_op.alter_column('number', existing_type=sa.Integer(), nullable=True)
        batch_op.create_foreign_key(op.f('fk_controls_sentence_id_sentences'), 'sentences', ['sentence_id'], ['id'])
        batch_op.create_foreign_key(op.f('fk_controls_system_id_systems'), 'systems', ['system_id'], ['id'])
        batch_op.create_index('ix_controls_sentence_system', ['sentence_id', 'system_id'], unique=False)


def downgrade():
    # The older code knows only the pool: generated controls (and the
    # answers to them) cannot be kept without a number.
    op.execute("DELETE FROM items WHERE control_id IN (SELECT id FROM controls WHERE number IS NULL)")
    op.execute("DELETE FROM controls WHERE number IS NULL")
    with op.batch_alter_table('controls', schema=None) as batch_op:
        batch_op.drop_index('ix_controls_sentence_system')
        batch_op.drop_constraint(op.f('fk_controls_system_id_systems'), type_='foreignkey')
        batch_op.drop_constraint(op.f('fk_controls_sentence_id_sentences'), type_='foreignkey')
        batch_op.alter_column('number', existing_type=sa.Integer(), nullable=False)
        batch_op.drop_column('system_id')
        batch_op.drop_column('sentence_id')
    with op.batch_alter_table('campaigns', schema=None) as batch_op:
        batch_op.drop_column('control_source')
