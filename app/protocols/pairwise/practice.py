"""Pairwise practice (issue 18, item 7): two translations of a sentence, the
better one on a side drawn afresh each time; the feedback says whether the
volunteer chose it. The side travels in the page's form (services/practice.py).
"""
from collections import namedtuple

from ...services import practice

TEMPLATE = "volunteer/practice.html"
HEADER = ["source", "better", "worse", "why"]
# One practice item as shown: its place among ``total``, and the texts with
# the better translation on the left when ``better_left``; ``why``: the
# explanation as a campaign_texts.CampaignText (its language and direction).
Shown = namedtuple("Shown", "number total source left right better_left why")
# ``better``: the side ("left" or "right") of the better translation.
Feedback = namedtuple("Feedback", "correct better choice")


def read_row(cells):
    """((source, better, worse, why), None) of a practice.tsv row; ValueError
    when the two translations are the same."""
    if cells[1] == cells[2]:
        raise ValueError("the better and worse translations are the same")
    return tuple(cells), None


def feedback(choice, better_left):
    """Whether ``choice`` ("left", "right" or "equal") is the better
    translation, which sat on the left when ``better_left``. "equal" is
    never right: a practice item always has a better translation."""
    better = "left" if better_left else "right"
    return Feedback(choice == better, better, choice)


def better_left(rng):
    """A fresh side for the better translation, as the evaluation page draws one."""
    return rng.random() < 0.5


def show(campaign, number, better_left, locale=None):
    """Practice item ``number`` (from 1) as shown, or None past the last."""
    item = practice.item(campaign.id, number)
    if item is None:
        return None
    left, right = (item.better, item.worse) if better_left else (item.worse, item.better)
    why = practice.why_of(campaign, item, locale)
    return Shown(number, practice.count(campaign.id), item.source, left, right, better_left, why)


# What the volunteer's practice page asks (app/volunteer/views.py).

def form(**data):
    from .form import PracticeForm

    return PracticeForm(**data)


def begin(rng):
    """The state of a fresh item: the side of its better translation."""
    return better_left(rng)


def answered(form):
    """(state, answer) of a valid answer: the side came back with it."""
    return form.better.data == "left", form.choice.data


def result(shown, choice):
    """The feedback on the answer to the item shown."""
    return feedback(choice, shown.better_left)


def form_for(shown):
    """The form of the item shown, its side in a hidden field."""
    return form(formdata=None, number=shown.number, better="left" if shown.better_left else "right")
