"""A mail's Reply-To in the outbox: a raffle winner's answer goes to the
organiser who sent the email, not to the site's sender address

Revision ID: d7f2b9c4e618
Revises: c3a1d5e7f931
Create Date: 2026-11-28 02:30:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'd7f2b9c4e618'
down_revision = 'c3a1d5e7f931'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('outbox_mails') as batch:
        batch.add_column(sa.Column('reply_to', sa.String(length=254), nullable=True))


def downgrade():
    with op.batch_alter_table('outbox_mails') as batch:
        batch.drop_column('reply_to')
