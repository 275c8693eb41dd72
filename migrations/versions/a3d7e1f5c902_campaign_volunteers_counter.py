"""The ranking's count of volunteers kept on each campaign's row (issue
30): moved at each join and dismissal with the commit, instead of
counting the campaign's volunteers at each ranking; filled here from the
volunteers not dismissed

Revision ID: a3d7e1f5c902
Revises: f2c6a9d4b371
Create Date: 2026-11-28 19:40:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'a3d7e1f5c902'
down_revision = 'f2c6a9d4b371'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('campaigns') as batch:
        batch.add_column(sa.Column('volunteers', sa.Integer(), nullable=False, server_default='0'))
    op.execute("UPDATE campaigns SET volunteers = (SELECT count(*) FROM participations "
               "WHERE participations.campaign_id = campaigns.id AND participations.dismissed_at IS NULL)")


def downgrade():
    with op.batch_alter_table('campaigns') as batch:
        batch.drop_column('volunteers')
