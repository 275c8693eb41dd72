"""outbox_mails: emails queued in the request's transaction, sent in the background

Revision ID: b2d4f6a8c013
Revises: a7c3e5f9b214
Create Date: 2026-11-27 10:00:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'b2d4f6a8c013'
down_revision = 'a7c3e5f9b214'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'outbox_mails',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('recipient', sa.String(length=254), nullable=False),
        sa.Column('subject', sa.String(length=300), nullable=False),
        sa.Column('body', sa.Text(), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('next_attempt_at', sa.DateTime(), nullable=False),
        sa.Column('claimed_at', sa.DateTime(), nullable=True),
        sa.Column('sent_at', sa.DateTime(), nullable=True),
        sa.Column('last_error', sa.Text(), nullable=True),
        sa.Column('last_error_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_outbox_mails_status_next', 'outbox_mails', ['status', 'next_attempt_at'], unique=False)


def downgrade():
    op.drop_index('ix_outbox_mails_status_next', table_name='outbox_mails')
    op.drop_table('outbox_mails')
