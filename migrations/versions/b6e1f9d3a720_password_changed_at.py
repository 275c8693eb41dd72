"""users.password_changed_at: when the password was last set (server processes close the sockets of older sessions)

Revision ID: b6e1f9d3a720
Revises: e7d2c9a4f168
Create Date: 2026-11-27 10:00:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'b6e1f9d3a720'
down_revision = 'e7d2c9a4f168'
branch_labels = None
depends_on = None


def upgrade():
    # Existing rows stay empty: their sockets were opened with the password they have.
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('password_changed_at', sa.DateTime(), nullable=True))
        batch_op.create_index(batch_op.f('ix_users_password_changed_at'), ['password_changed_at'], unique=False)


def downgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_users_password_changed_at'))
        batch_op.drop_column('password_changed_at')
