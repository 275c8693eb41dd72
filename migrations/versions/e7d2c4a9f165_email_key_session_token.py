"""users.email_key (one key per mailbox) and users.session_token (logout ends every copy of a session)

Revision ID: e7d2c4a9f165
Revises: a9c3e5f7b214
Create Date: 2026-11-27 02:50:00

"""
import logging

from alembic import op
import sqlalchemy as sa

from app.services.names import email_key


# revision identifiers, used by Alembic.
revision = 'e7d2c4a9f165'
down_revision = 'a9c3e5f7b214'
branch_labels = None
depends_on = None

log = logging.getLogger("alembic.runtime.migration")


def upgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('email_key', sa.String(length=254), nullable=True))
        batch_op.add_column(sa.Column('session_token', sa.String(length=32), nullable=True))

    # Backfill. Two existing accounts may share a key (ane+1@ and ane+2@):
    # the oldest keeps it; each later one gets "dup:<id>:<email>", which no
    # address normalises to, so both still log in and get their mail, and a
    # new account with that mailbox is refused. The later ones are logged.
    users = sa.table('users', sa.column('id', sa.Integer), sa.column('email', sa.String),
                     sa.column('email_key', sa.String))
    connection = op.get_bind()
    taken = {}
    for user_id, email in connection.execute(sa.select(users.c.id, users.c.email).order_by(users.c.id)).all():
        key = email_key(email)
        if key in taken:
            log.warning("users %s and %s share the mailbox %s: %s keeps it", taken[key], user_id, key, taken[key])
            key = f"dup:{user_id}:{email}"[:254]  # unique by its id alone
        else:
            taken[key] = user_id
        connection.execute(users.update().where(users.c.id == user_id).values(email_key=key))

    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.alter_column('email_key', existing_type=sa.String(length=254), nullable=False)
        batch_op.create_index(batch_op.f('ix_users_email_key'), ['email_key'], unique=True)


def downgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_users_email_key'))
        batch_op.drop_column('session_token')
        batch_op.drop_column('email_key')
