"""Issue 32: the assignment rule and the goal as campaign settings
(existing campaigns keep the paper's rule); per slot the answers for each
side, per pair the sentences each system won and the latest decision,
counted from the judgments already stored

Revision ID: b9e3c1f7a2d4
Revises: d4e9f2a6b815
Create Date: 2026-11-28 06:00:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'b9e3c1f7a2d4'
down_revision = 'd4e9f2a6b815'
branch_labels = None
depends_on = None

# A stored answer preferring ``side`` of its slot: collected (answered, not discarded).
_VOTES = """(SELECT count(*) FROM items WHERE items.slot_id = slots.id
  AND items.answered_at IS NOT NULL AND items.discarded_at IS NULL
  AND ((items.choice = 'left' AND items.left_system_id = slots.{side})
    OR (items.choice = 'right' AND items.right_system_id = slots.{side})))"""
_WINS = """(SELECT count(*) FROM slots WHERE slots.system_a_id = pair_totals.system_a_id
  AND slots.system_b_id = pair_totals.system_b_id AND {condition})"""


def upgrade():
    with op.batch_alter_table('campaigns') as batch:
        batch.add_column(sa.Column('assignment', sa.String(length=16), nullable=False, server_default='ebaluatoia'))
        batch.add_column(sa.Column('goal', sa.String(length=16), nullable=False, server_default='ordering'))
    with op.batch_alter_table('slots') as batch:
        batch.add_column(sa.Column('votes_a', sa.Integer(), nullable=False, server_default='0'))
        batch.add_column(sa.Column('votes_b', sa.Integer(), nullable=False, server_default='0'))
        batch.add_column(sa.Column('shuffle', sa.Integer(), nullable=False, server_default='0'))
        batch.create_index('ix_slots_pair', ['system_a_id', 'system_b_id', 'pending', 'shuffle'])
    with op.batch_alter_table('pair_totals') as batch:
        batch.add_column(sa.Column('wins_a', sa.Integer(), nullable=False, server_default='0'))
        batch.add_column(sa.Column('wins_b', sa.Integer(), nullable=False, server_default='0'))
        batch.add_column(sa.Column('decided_id', sa.Integer(), nullable=True))
        batch.add_column(sa.Column('decided_at', sa.DateTime(), nullable=True))
        batch.add_column(sa.Column('is_open', sa.Boolean(), nullable=False, server_default=sa.true()))
        batch.create_foreign_key('fk_pair_totals_decided_id_systems', 'systems', ['decided_id'], ['id'])
    # The existing slots' random order: drawn per slot (a linear scramble of
    # the ids would give every pair the same order of sentences).
    if op.get_bind().dialect.name == "sqlite":
        op.execute("UPDATE slots SET shuffle = abs(random() % 1073741824)")
    else:
        op.execute("UPDATE slots SET shuffle = CAST(floor(random() * 1073741824) AS integer)")
    op.execute(f"UPDATE slots SET votes_a = {_VOTES.format(side='system_a_id')}, "
               f"votes_b = {_VOTES.format(side='system_b_id')} WHERE system_b_id IS NOT NULL")
    op.execute(f"UPDATE pair_totals SET wins_a = {_WINS.format(condition='slots.votes_a > slots.votes_b')}, "
               f"wins_b = {_WINS.format(condition='slots.votes_b > slots.votes_a')} "
               "WHERE system_b_id IS NOT NULL")


def downgrade():
    with op.batch_alter_table('pair_totals') as batch:
        batch.drop_constraint('fk_pair_totals_decided_id_systems', type_='foreignkey')
        batch.drop_column('is_open')
        batch.drop_column('decided_at')
        batch.drop_column('decided_id')
        batch.drop_column('wins_b')
        batch.drop_column('wins_a')
    with op.batch_alter_table('slots') as batch:
        batch.drop_index('ix_slots_pair')
        batch.drop_column('shuffle')
        batch.drop_column('votes_b')
        batch.drop_column('votes_a')
    with op.batch_alter_table('campaigns') as batch:
        batch.drop_column('goal')
        batch.drop_column('assignment')
