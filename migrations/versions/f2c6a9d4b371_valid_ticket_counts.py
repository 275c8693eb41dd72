"""Each volunteer's count of valid raffle tickets (issue 30): the
dashboard counts the published list from it without reading every ticket;
filled here from the tickets already won

Revision ID: f2c6a9d4b371
Revises: e4b9c2d7f160
Create Date: 2026-11-28 11:00:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'f2c6a9d4b371'
down_revision = 'e4b9c2d7f160'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('participations') as batch:
        batch.add_column(sa.Column('tickets_valid', sa.Integer(), nullable=False, server_default='0'))
    op.execute("UPDATE participations SET tickets_valid = (SELECT count(*) FROM tickets "
               "WHERE tickets.participation_id = participations.id AND tickets.voided_at IS NULL)")


def downgrade():
    with op.batch_alter_table('participations') as batch:
        batch.drop_column('tickets_valid')
