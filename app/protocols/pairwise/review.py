"""The organiser's review page of a pairwise volunteer: every answered item
as it was shown (a control with its own texts, on the sides it had)."""
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import aliased

from ...extensions import db
from ...models import Control, Item, Output, Sentence


@dataclass
class Judgment:
    """One answered item as the page shows it (texts in the order shown)."""

    position: int
    answered_at: object
    seconds: float
    source: str
    left: str
    right: str
    choice: str
    too_fast: bool
    discarded_at: object
    control: bool
    passed: bool  # controls only
    better: str = None  # controls only: "left" or "right"


_left, _right = aliased(Output), aliased(Output)
_JUDGMENTS = (
    select(Item, Sentence.source, _left.text, _right.text, Control.source, Control.better, Control.worse)
    .outerjoin(Sentence, Sentence.id == Item.sentence_id)
    .outerjoin(_left, (_left.sentence_id == Item.sentence_id) & (_left.system_id == Item.left_system_id))
    .outerjoin(_right, (_right.sentence_id == Item.sentence_id) & (_right.system_id == Item.right_system_id))
    .outerjoin(Control, Control.id == Item.control_id)
    .order_by(Item.position)
)


def judgments_of(participation):
    """Every answered item of the volunteer, oldest first."""
    rows = db.session.execute(
        _JUDGMENTS.where(Item.participation_id == participation.id, Item.answered_at.is_not(None))
    )
    made = []
    for item, source, left, right, control_source, better, worse in rows:
        if item.is_control:
            source = control_source
            left, right = (better, worse) if item.better_left else (worse, better)
        made.append(Judgment(
            position=item.position, answered_at=item.answered_at, seconds=item.seconds, source=source,
            left=left, right=right, choice=item.choice, too_fast=item.too_fast, discarded_at=item.discarded_at,
            control=item.is_control, passed=item.passed,
            better=("left" if item.better_left else "right") if item.is_control else None,
        ))
    return made
