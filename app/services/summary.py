"""What a volunteer has contributed: for the welcome and logout pages."""
from dataclasses import dataclass

from sqlalchemy import select

from ..extensions import db
from ..models import Campaign, Participation
from .rewards import ticket_numbers


@dataclass
class Contribution:
    campaign_name: str
    campaign_slug: str
    answered: int
    tickets: list
    dismissed: bool
    held: bool = False


def participation_summary(participation):
    return Contribution(
        campaign_name=participation.campaign.name,
        campaign_slug=participation.campaign.slug,
        answered=participation.items_counted,
        tickets=[] if participation.is_dismissed else ticket_numbers(participation.id),
        dismissed=participation.is_dismissed,
        held=participation.is_held,
    )


def contribution_summary(user_id):
    participations = db.session.scalars(
        select(Participation)
        .join(Campaign, Campaign.id == Participation.campaign_id)
        .where(Participation.user_id == user_id)
        .order_by(Participation.joined_at)
    ).all()
    return [participation_summary(p) for p in participations]
