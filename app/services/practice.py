"""Practice items (issue 18, item 7): sentences shown before item 1 with
feedback, that count for nothing. What every protocol's practice shares: the
count, the item by its number, and its explanation in the page's language.
The rules (what is shown, what the feedback says) are each protocol's
``practice`` module, reached through the registry. Nothing here writes to
the database: the order shown travels in the page's form, and an answer only
makes feedback.
"""
from sqlalchemy import bindparam, func, select

from ..extensions import db
from ..models import PracticeItem
from .campaign_texts import pick_text

LAST = 100000  # no campaign has more practice items: a bound for the number a form or link sends

_COUNT = select(func.count(PracticeItem.id)).where(PracticeItem.campaign_id == bindparam("campaign_id"))
_ITEM = select(PracticeItem).where(
    PracticeItem.campaign_id == bindparam("campaign_id"), PracticeItem.number == bindparam("number")
)


def count(campaign_id):
    """How many practice items the campaign has (0: none)."""
    return db.session.scalar(_COUNT, {"campaign_id": campaign_id})


def item(campaign_id, number):
    """Practice item ``number`` (from 1), or None past the last or out of bounds."""
    if not 1 <= number <= LAST:  # a number from a link (?n=) may be anything
        return None
    return db.session.scalar(_ITEM, {"campaign_id": campaign_id, "number": number})


def why_of(campaign, item, locale=None):
    """The item's explanation as a campaign_texts.CampaignText: in the page's
    ``locale`` when practice.tsv gives it (a why.<code> column), else the why
    column's, in the interface_language."""
    return pick_text(item.why, campaign.interface_language, item.why_texts or {}, locale)
