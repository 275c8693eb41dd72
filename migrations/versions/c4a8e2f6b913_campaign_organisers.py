"""campaign_organisers: an organiser manages the campaigns given to them; every existing organiser is given every existing campaign

Revision ID: c4a8e2f6b913
Revises: b6e1f9d3a720
Create Date: 2026-11-27 02:40:00

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'c4a8e2f6b913'
down_revision = 'b6e1f9d3a720'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'campaign_organisers',
        sa.Column('campaign_id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('given_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['campaign_id'], ['campaigns.id'], ),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ),
        sa.PrimaryKeyConstraint('campaign_id', 'user_id')
    )
    with op.batch_alter_table('campaign_organisers', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_campaign_organisers_user_id'), ['user_id'], unique=False)
    # Before this, every organiser managed every campaign: they keep the
    # campaigns there are now (docs/deployment.md, "Roles").
    op.execute(
        "INSERT INTO campaign_organisers (campaign_id, user_id, given_at) "
        "SELECT campaigns.id, users.id, CURRENT_TIMESTAMP FROM campaigns CROSS JOIN users "
        "WHERE users.role = 'organiser'"
    )


def downgrade():
    # The older code knows no admin: an admin becomes an organiser (who
    # there manages every campaign).
    op.execute("UPDATE users SET role = 'organiser' WHERE role = 'admin'")
    with op.batch_alter_table('campaign_organisers', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_campaign_organisers_user_id'))
    op.drop_table('campaign_organisers')
