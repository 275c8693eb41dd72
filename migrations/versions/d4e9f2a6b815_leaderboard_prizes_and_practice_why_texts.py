"""Issue 31: how many of the ranking win prizes, a campaign setting
(existing campaigns keep the five they had); practice explanations in
other interface languages (practice.tsv's why.<code> columns)

Revision ID: d4e9f2a6b815
Revises: d7f2b9c4e618
Create Date: 2026-11-28 02:30:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'd4e9f2a6b815'
down_revision = 'd7f2b9c4e618'  # after the outbox's Reply-To (another change of issue 31)
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('campaigns') as batch:
        batch.add_column(sa.Column('leaderboard_prizes', sa.Integer(), nullable=False, server_default='5'))
    with op.batch_alter_table('practice_items') as batch:
        batch.add_column(sa.Column('why_texts', sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table('practice_items') as batch:
        batch.drop_column('why_texts')
    with op.batch_alter_table('campaigns') as batch:
        batch.drop_column('leaderboard_prizes')
