"""users.username_skeleton: the TR39 skeleton of each username (lookalike names)

Revision ID: a7c3e5f9b214
Revises: f3b7d9e1a524
Create Date: 2026-11-26 10:00:00

"""
from alembic import op
import sqlalchemy as sa

from app.services.names import skeleton


# revision identifiers, used by Alembic.
revision = 'a7c3e5f9b214'
down_revision = 'f3b7d9e1a524'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('username_skeleton', sa.Text(), nullable=True))

    # Backfill: every existing name gets its skeleton (two old names may share
    # one; only new names are refused, so the index is not unique).
    users = sa.table('users', sa.column('id', sa.Integer), sa.column('username', sa.String),
                     sa.column('username_skeleton', sa.Text))
    connection = op.get_bind()
    rows = connection.execute(sa.select(users.c.id, users.c.username)).all()
    for user_id, username in rows:
        connection.execute(users.update().where(users.c.id == user_id).values(username_skeleton=skeleton(username)))

    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.alter_column('username_skeleton', existing_type=sa.Text(), nullable=False)
        batch_op.create_index(batch_op.f('ix_users_username_skeleton'), ['username_skeleton'], unique=False)


def downgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_users_username_skeleton'))
        batch_op.drop_column('username_skeleton')
