"""Who may run which campaign: the one place that decides it.

An organiser manages the campaigns they were given (table
campaign_organisers), an admin manages every campaign and gives or takes
them, a researcher reads every campaign that is not a draft. Everyone else
manages nothing.
"""
from sqlalchemy import delete, false, select

from ..extensions import db
from ..models import Campaign, CampaignOrganiser, User, utcnow


class OrganiserError(ValueError):
    """A refused change of a campaign's organisers (the message says why)."""


def may_manage(user, campaign):
    """Whether ``user`` may change ``campaign`` and see its volunteers' names."""
    if campaign is None or not getattr(user, "is_authenticated", False):
        return False
    if user.role == "admin":
        return True
    return user.role == "organiser" and db.session.get(CampaignOrganiser, (campaign.id, user.id)) is not None


def may_open(user, campaign):
    """Whether ``user`` may open ``campaign``'s staff pages at all: its
    managers, and researchers (read-only, pseudonyms) unless it is a draft."""
    if campaign is None or not getattr(user, "is_authenticated", False):
        return False
    if user.role == "researcher":
        return campaign.status != "draft"
    return may_manage(user, campaign)


def campaigns_for(user):
    """The query of the campaigns ``user`` may open, oldest first."""
    query = select(Campaign).order_by(Campaign.created_at, Campaign.id)
    if user.role == "admin":
        return query
    if user.role == "researcher":
        return query.where(Campaign.status != "draft")
    if user.role == "organiser":
        return query.join(CampaignOrganiser, CampaignOrganiser.campaign_id == Campaign.id).where(
            CampaignOrganiser.user_id == user.id)
    return query.where(false())


def organisers_of(campaign):
    """The organisers given ``campaign``, by username."""
    return db.session.scalars(
        select(User).join(CampaignOrganiser, CampaignOrganiser.user_id == User.id)
        .where(CampaignOrganiser.campaign_id == campaign.id).order_by(User.username)
    ).all()


def give(campaign, user, now=None):
    """Give ``campaign`` to the organiser ``user`` (in the caller's
    transaction). Returns False if they had it already."""
    if user.role != "organiser":
        raise OrganiserError(user.role)
    if db.session.get(CampaignOrganiser, (campaign.id, user.id)) is not None:
        return False
    db.session.add(CampaignOrganiser(campaign_id=campaign.id, user_id=user.id, given_at=now or utcnow()))
    return True


def take(campaign, user):
    """Take ``campaign`` from ``user``. Returns False if they did not have it."""
    done = db.session.execute(delete(CampaignOrganiser).where(
        CampaignOrganiser.campaign_id == campaign.id, CampaignOrganiser.user_id == user.id))
    return done.rowcount > 0
