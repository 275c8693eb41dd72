"""The organiser's review page of an ESA volunteer: every answered segment
with the text shown, the score and the spans marked."""
from dataclasses import dataclass

from sqlalchemy import select

from ...extensions import db
from ...models import Item, Output, Sentence


@dataclass
class Judgment:
    position: int
    answered_at: object
    seconds: float
    source: str
    translation: str
    score: int
    spans: list
    too_fast: bool
    discarded_at: object
    # No sides and no controls in ESA (the pairwise signs read these).
    choice = None
    control = False
    kind = None


_JUDGMENTS = (
    select(Item, Sentence.source, Output.text)
    .join(Sentence, Sentence.id == Item.sentence_id)
    .join(Output, (Output.sentence_id == Item.sentence_id) & (Output.system_id == Item.left_system_id))
    .order_by(Item.position)
)


def judgments_of(participation):
    """Every answered item of the volunteer, oldest first."""
    rows = db.session.execute(
        _JUDGMENTS.where(Item.participation_id == participation.id, Item.answered_at.is_not(None)))
    return [Judgment(position=item.position, answered_at=item.answered_at, seconds=item.seconds, source=source,
                     translation=text, score=item.score, spans=item.spans or [], too_fast=item.too_fast,
                     discarded_at=item.discarded_at)
            for item, source, text in rows]
