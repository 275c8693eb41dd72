"""ESA's quality control (issue 33): the running sums DA keeps, with the
errors marked per system, for ESA volunteers too.

Revision ID: a6c2e8f4b913
Revises: e1b7c3d9f428
Create Date: 2026-11-28 15:30:00

"""
import json

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'a6c2e8f4b913'
down_revision = 'e1b7c3d9f428'
branch_labels = None
depends_on = None

SUMS = ('minor', 'major', 'omissions')
# The tables as they are at this revision (not the models, which may grow).
JUDGE_SUMS = ('pairs', 'drop_sum', 'suspects', 'informative', 'copied_first', 'scores', 'score_sum', 'score_squares',
              'first_scores', 'first_sum', 'first_squares', 'counted', 'counted_sum', 'counted_squares',
              'tested_pairs', 'diff_sum', 'diff_squares')
TABLES = {
    'judge': sa.table('da_judges', *map(sa.column, ('participation_id', 'campaign_id', *JUDGE_SUMS, 'status',
                                                    'z_scale', 'z_shift'))),
    'systems': sa.table('da_judge_systems', *map(sa.column, ('participation_id', 'system_id', 'scores', 'total',
                                                             *SUMS))),
    'kinds': sa.table('da_judge_kinds', *map(sa.column, ('participation_id', 'kind', 'items', 'total',
                                                         'original_total'))),
}


def upgrade():
    with op.batch_alter_table('da_judge_systems') as batch:
        for name in SUMS:
            batch.add_column(sa.Column(name, sa.Integer(), nullable=False, server_default='0'))
    # The sums of the ESA answers already given, folded as the answers move
    # them (the one fold, services/score_sums.recompute), one volunteer at a time.
    from app.protocols.esa.spans import counts
    from app.services.score_sums import recompute

    def marks(row):
        spans = json.loads(row.spans) if isinstance(row.spans, str) else row.spans
        return counts(spans or [])

    rows = op.get_bind().execute(sa.text(
        "SELECT p.id AS participation_id, p.campaign_id, i.id, i.position, i.qc_kind, i.score, i.too_fast, "
        "i.left_system_id, i.original_item_id, i.spans FROM items i "
        "JOIN participations p ON p.id = i.participation_id JOIN campaigns c ON c.id = p.campaign_id "
        "WHERE c.protocol = 'esa' AND i.answered_at IS NOT NULL AND i.score IS NOT NULL "
        "ORDER BY p.id, i.position"))
    batch = []

    def fill(batch):
        judge, systems, kinds = recompute(batch[0].participation_id, batch[0].campaign_id, batch, marks)
        for name, made in (('judge', [judge]), ('systems', systems), ('kinds', kinds)):
            if made:
                table = TABLES[name]
                op.bulk_insert(table, [{column.name: getattr(row, column.name) for column in table.columns}
                                       for row in made])

    for row in rows:
        if batch and batch[0].participation_id != row.participation_id:
            fill(batch)
            batch = []
        batch.append(row)
    if batch:
        fill(batch)


def downgrade():
    op.execute(sa.text("DELETE FROM da_judge_kinds WHERE participation_id IN (SELECT p.id FROM participations p "
                       "JOIN campaigns c ON c.id = p.campaign_id WHERE c.protocol = 'esa')"))
    op.execute(sa.text("DELETE FROM da_judge_systems WHERE participation_id IN (SELECT p.id FROM participations p "
                       "JOIN campaigns c ON c.id = p.campaign_id WHERE c.protocol = 'esa')"))
    op.execute(sa.text("DELETE FROM da_judges WHERE campaign_id IN (SELECT id FROM campaigns WHERE protocol = 'esa')"))
    with op.batch_alter_table('da_judge_systems') as batch:
        for name in SUMS:
            batch.drop_column(name)
