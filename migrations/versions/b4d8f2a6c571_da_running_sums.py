"""A DA volunteer's running sums (issue 30): the live rules', the judge
test's and the dashboard's, per volunteer, per (volunteer, system) and per
(volunteer, kind of quality-control item), filled from the answers already
given

Revision ID: b4d8f2a6c571
Revises: d5e1f7a3b820
Create Date: 2026-11-27 14:30:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'b4d8f2a6c571'
down_revision = 'd5e1f7a3b820'
branch_labels = None
depends_on = None

SUMS = ('pairs', 'drop_sum', 'suspects', 'informative', 'copied_first', 'scores', 'score_sum', 'score_squares',
        'first_scores', 'first_sum', 'first_squares', 'counted', 'counted_sum', 'counted_squares', 'tested_pairs',
        'diff_sum', 'diff_squares')


def upgrade():
    judges = op.create_table(
        'da_judges',
        sa.Column('participation_id', sa.Integer(), sa.ForeignKey('participations.id'), primary_key=True),
        sa.Column('campaign_id', sa.Integer(), sa.ForeignKey('campaigns.id'), nullable=False),
        *(sa.Column(name, sa.Integer(), nullable=False) for name in SUMS),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('z_scale', sa.Float(), nullable=False),
        sa.Column('z_shift', sa.Float(), nullable=False),
    )
    op.create_index('ix_da_judges_status', 'da_judges', ['campaign_id', 'status'])
    systems = op.create_table(
        'da_judge_systems',
        sa.Column('participation_id', sa.Integer(), sa.ForeignKey('da_judges.participation_id'), primary_key=True),
        sa.Column('system_id', sa.Integer(), sa.ForeignKey('systems.id'), primary_key=True),
        sa.Column('scores', sa.Integer(), nullable=False),
        sa.Column('total', sa.Integer(), nullable=False),
    )
    kinds = op.create_table(
        'da_judge_kinds',
        sa.Column('participation_id', sa.Integer(), sa.ForeignKey('da_judges.participation_id'), primary_key=True),
        sa.Column('kind', sa.String(16), primary_key=True),
        sa.Column('items', sa.Integer(), nullable=False),
        sa.Column('total', sa.Integer(), nullable=False),
        sa.Column('original_total', sa.Integer(), nullable=False),
    )
    # The sums of the answers already given, folded as the answers move them
    # (the one fold, protocols/da/sums.recompute), one volunteer at a time.
    from app.services.score_sums import recompute

    rows = op.get_bind().execute(sa.text(
        "SELECT p.id AS participation_id, p.campaign_id, i.id, i.position, i.qc_kind, i.score, i.too_fast, "
        "i.left_system_id, i.original_item_id FROM items i "
        "JOIN participations p ON p.id = i.participation_id JOIN campaigns c ON c.id = p.campaign_id "
        "WHERE c.protocol = 'da' AND i.answered_at IS NOT NULL AND i.score IS NOT NULL "
        "ORDER BY p.id, i.position"))
    batch = []

    def fill(batch):
        judge, judge_systems, judge_kinds = recompute(batch[0].participation_id, batch[0].campaign_id, batch)
        op.bulk_insert(judges, [{column.name: getattr(judge, column.name) for column in judges.columns}])
        for table, made in ((systems, judge_systems), (kinds, judge_kinds)):
            if made:
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
    op.drop_table('da_judge_kinds')
    op.drop_table('da_judge_systems')
    op.drop_index('ix_da_judges_status', table_name='da_judges')
    op.drop_table('da_judges')
