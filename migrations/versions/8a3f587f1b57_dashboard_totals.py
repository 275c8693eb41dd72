"""The dashboard's totals (issue 30): per system pair, per completeness bin
of sentences and per minute of answers, moved with each judgment's commit
(services/totals.py), filled here from the slots, sentences and answers
already stored

Revision ID: 8a3f587f1b57
Revises: 2c9cba0acd11
Create Date: 2026-11-27 16:00:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '8a3f587f1b57'
down_revision = '2c9cba0acd11'
branch_labels = None
depends_on = None

# services/totals.bin_of: -1 nothing to judge, 10 complete, else the tenth reached.
BIN = ("CASE WHEN s.capacity = 0 THEN -1 WHEN s.collected >= s.capacity THEN 10 "
       "ELSE (s.collected * 10) / s.capacity END")
# Minutes since 2000-01-01 UTC (services/totals.minute_of).
MINUTE = {
    'sqlite': "(CAST(strftime('%s', answered_at) AS INTEGER) - 946684800) / 60",
    'postgresql': "CAST(floor(extract(epoch FROM answered_at - TIMESTAMP '2000-01-01') / 60) AS INTEGER)",
}


def upgrade():
    op.create_table(
        'pair_totals',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('campaign_id', sa.Integer(), nullable=False),
        sa.Column('system_a_id', sa.Integer(), nullable=False),
        sa.Column('system_b_id', sa.Integer(), nullable=True),
        sa.Column('target', sa.Integer(), nullable=False),
        sa.Column('identical', sa.Integer(), nullable=False),
        sa.Column('collected', sa.Integer(), nullable=False),
        sa.Column('over_collected', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id']),
        sa.ForeignKeyConstraint(['system_a_id'], ['systems.id']),
        sa.ForeignKeyConstraint(['system_b_id'], ['systems.id']),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_pair_totals_campaign', 'pair_totals', ['campaign_id', 'system_a_id', 'system_b_id'])
    op.create_table(
        'sentence_bins',
        sa.Column('campaign_id', sa.Integer(), nullable=False),
        sa.Column('bin', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('sentences', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id']),
        sa.PrimaryKeyConstraint('campaign_id', 'bin'),
    )
    op.create_table(
        'answer_minutes',
        sa.Column('campaign_id', sa.Integer(), nullable=False),
        sa.Column('minute', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('answers', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id']),
        sa.PrimaryKeyConstraint('campaign_id', 'minute'),
    )
    op.execute(
        "INSERT INTO pair_totals (campaign_id, system_a_id, system_b_id, target, identical, collected, over_collected) "
        "SELECT s.campaign_id, t.system_a_id, t.system_b_id, SUM(t.target), "
        "SUM(CASE WHEN t.identical THEN 1 ELSE 0 END), SUM(t.collected), "
        "SUM(CASE WHEN t.collected > t.target THEN t.collected - t.target ELSE 0 END) "
        "FROM slots t JOIN sentences s ON s.id = t.sentence_id "
        "GROUP BY s.campaign_id, t.system_a_id, t.system_b_id"
    )
    # Every bin of every campaign with sentences has its row (the commits only update them).
    for number in range(-1, 11):
        op.execute(
            "INSERT INTO sentence_bins (campaign_id, bin, sentences) "
            f"SELECT c.id, {number}, (SELECT COUNT(*) FROM sentences s WHERE s.campaign_id = c.id AND {BIN} = {number}) "
            "FROM campaigns c WHERE EXISTS (SELECT 1 FROM sentences s WHERE s.campaign_id = c.id)"
        )
    minute = MINUTE[op.get_bind().dialect.name]
    op.execute(
        "INSERT INTO answer_minutes (campaign_id, minute, answers) "
        f"SELECT campaign_id, {minute}, COUNT(*) FROM items WHERE answered_at IS NOT NULL "
        f"GROUP BY campaign_id, {minute}"
    )


def downgrade():
    op.drop_table('answer_minutes')
    op.drop_table('sentence_bins')
    op.drop_index('ix_pair_totals_campaign', table_name='pair_totals')
    op.drop_table('pair_totals')
