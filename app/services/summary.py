"""What a volunteer has contributed: for the welcome and logout pages."""
from dataclasses import dataclass

from sqlalchemy import select

from ..extensions import db
from ..models import Campaign, Participation
from .campaign_texts import CampaignText, campaign_text
from .rewards import ticket_numbers


@dataclass
class Contribution:
    campaign_name: CampaignText  # in the language asked for, else the default
    campaign_slug: str
    answered: int
    tickets: list
    dismissed: bool
    held: bool = False


def participation_summary(participation, locale=None):
    """What the volunteer did in one campaign (its name in ``locale`` if the campaign gives it)."""
    return Contribution(
        campaign_name=campaign_text(participation.campaign, "name", locale),
        campaign_slug=participation.campaign.slug,
        answered=participation.items_counted,
        tickets=[] if participation.is_dismissed else ticket_numbers(participation.id),
        dismissed=participation.is_dismissed,
        held=participation.is_held,
    )


def contribution_summary(user_id, locale=None):
    participations = db.session.scalars(
        select(Participation)
        .join(Campaign, Campaign.id == Participation.campaign_id)
        .where(Participation.user_id == user_id)
        .order_by(Participation.joined_at)
    ).all()
    return [participation_summary(p, locale) for p in participations]
