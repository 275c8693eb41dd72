"""The organiser's review page of an ESA volunteer: every answered segment
with the text shown, the score and the spans marked; a bad reference with
its original's score; with them, the evidence of the quality-control rules
(``score_quality.Evidence``), as for DA."""
from dataclasses import dataclass

from sqlalchemy import case, select
from sqlalchemy.orm import aliased

from ...extensions import db
from ...models import DaJudge, Item, Output, Sentence
from ...services import score_quality


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
    kind: str = None  # score_quality.BAD_REFERENCE for a bad reference
    original_score: int = None
    # No sides and no controls in ESA (the pairwise signs read these).
    choice = None
    control = False


_original = aliased(Item)
_JUDGMENTS = (
    select(Item, Sentence.source,
           case((Item.qc_kind == score_quality.BAD_REFERENCE, Output.degraded), else_=Output.text),
           _original.score)
    .join(Sentence, Sentence.id == Item.sentence_id)
    .join(Output, (Output.sentence_id == Item.sentence_id) & (Output.system_id == Item.left_system_id))
    .outerjoin(_original, _original.id == Item.original_item_id)
    .order_by(Item.position)
)


def judgments_of(participation):
    """Every answered item of the volunteer, oldest first (a ``score_quality.Scores``)."""
    rows = db.session.execute(
        _JUDGMENTS.where(Item.participation_id == participation.id, Item.answered_at.is_not(None)))
    judgments = score_quality.Scores(
        Judgment(position=item.position, answered_at=item.answered_at, seconds=item.seconds, source=source,
                 translation=text, score=item.score, spans=item.spans or [], too_fast=item.too_fast,
                 discarded_at=item.discarded_at, kind=item.qc_kind, original_score=original_score)
        for item, source, text, original_score in rows)
    judgments.quality = score_quality.evidence(participation.campaign, db.session.get(DaJudge, participation.id),
                                               judgments)
    return judgments
