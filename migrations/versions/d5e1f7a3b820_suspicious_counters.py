"""The suspicious-patterns report's counters on each volunteer's row (issue
30): answers, sides, answers below the reading floor and the busiest
minute, filled from the answers already given

Revision ID: d5e1f7a3b820
Revises: c8f2a4d6e913
Create Date: 2026-11-27 12:10:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'd5e1f7a3b820'
down_revision = 'c8f2a4d6e913'
branch_labels = None
depends_on = None

COUNTS = ('answers_total', 'answers_left', 'answers_right', 'answers_equal', 'answers_too_fast',
          'minute_answers', 'busiest_minute')


def upgrade():
    with op.batch_alter_table('participations') as batch:
        for name in COUNTS:
            batch.add_column(sa.Column(name, sa.Integer(), nullable=False, server_default='0'))
        batch.add_column(sa.Column('minute_at', sa.DateTime(), nullable=True))
    # One pass over the answers in (volunteer, time) order, as services/suspicious.counters counts them.
    connection = op.get_bind()
    rows = connection.execute(sa.text(
        "SELECT participation_id, answered_at, choice, too_fast FROM items "
        "WHERE answered_at IS NOT NULL ORDER BY participation_id, answered_at, id"
    ).columns(answered_at=sa.DateTime))
    updates, current = [], None
    for pid, answered_at, choice, too_fast in rows:
        if current is None or current['pid'] != pid:
            current = dict(pid=pid, **dict.fromkeys(COUNTS, 0), minute_at=None)
            updates.append(current)
        minute = answered_at.replace(second=0, microsecond=0)
        current['minute_answers'] = current['minute_answers'] + 1 if current['minute_at'] == minute else 1
        current['minute_at'] = minute
        current['busiest_minute'] = max(current['busiest_minute'], current['minute_answers'])
        current['answers_total'] += 1
        current['answers_left'] += choice == 'left'
        current['answers_right'] += choice == 'right'
        current['answers_equal'] += choice == 'equal'
        current['answers_too_fast'] += bool(too_fast)
    if updates:
        participations = sa.table('participations', sa.column('id', sa.Integer),
                                  *(sa.column(name, sa.Integer) for name in COUNTS),
                                  sa.column('minute_at', sa.DateTime))
        connection.execute(
            participations.update().where(participations.c.id == sa.bindparam('pid')),
            updates)


def downgrade():
    with op.batch_alter_table('participations') as batch:
        batch.drop_column('minute_at')
        for name in reversed(COUNTS):
            batch.drop_column(name)
