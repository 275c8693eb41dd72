"""Practice items (issue 18, item 7): sentences shown before item 1 with
feedback, that count for nothing. Nothing here writes to the database: the
order shown travels in the page's form, and an answer only makes feedback.
"""
from collections import namedtuple

from sqlalchemy import bindparam, func, select

from ..extensions import db
from ..models import PracticeItem
from .campaign_texts import pick_text

# One practice item as shown: its place among ``total``, and the texts with
# the better translation on the left when ``better_left``; ``why``: the
# explanation as a campaign_texts.CampaignText (its language and direction).
Shown = namedtuple("Shown", "number total source left right better_left why")
# ``better``: the side ("left" or "right") of the better translation.
Feedback = namedtuple("Feedback", "correct better choice")
LAST = 100000  # no campaign has more practice items: a bound for the number a form or link sends

_COUNT = select(func.count(PracticeItem.id)).where(PracticeItem.campaign_id == bindparam("campaign_id"))
_ITEM = select(PracticeItem).where(
    PracticeItem.campaign_id == bindparam("campaign_id"), PracticeItem.number == bindparam("number")
)


def feedback(choice, better_left):
    """Whether ``choice`` ("left", "right" or "equal") is the better
    translation, which sat on the left when ``better_left``. "equal" is
    never right: a practice item always has a better translation."""
    better = "left" if better_left else "right"
    return Feedback(choice == better, better, choice)


def better_left(rng):
    """A fresh side for the better translation, as the evaluation page draws one."""
    return rng.random() < 0.5


def count(campaign_id):
    """How many practice items the campaign has (0: none)."""
    return db.session.scalar(_COUNT, {"campaign_id": campaign_id})


def show(campaign, number, better_left, locale=None):
    """Practice item ``number`` (from 1) as shown, or None past the last; its
    explanation in the page's ``locale`` when practice.tsv gives it (a
    why.<code> column), else the why column's, in the interface_language."""
    if not 1 <= number <= LAST:  # a number from a link (?n=) may be anything
        return None
    item = db.session.scalar(_ITEM, {"campaign_id": campaign.id, "number": number})
    if item is None:
        return None
    left, right = (item.better, item.worse) if better_left else (item.worse, item.better)
    why = pick_text(item.why, campaign.interface_language, item.why_texts or {}, locale)
    return Shown(number, count(campaign.id), item.source, left, right, better_left, why)
