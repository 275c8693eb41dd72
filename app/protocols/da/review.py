"""A DA volunteer's scores as the organiser's review page shows them
(``protocols.da.protocol.review_judgments``): each with the translation it showed
and, for a quality-control item, its kind and the original's score; with
them, the evidence of the quality-control rules (``score_quality.Evidence``)."""
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import aliased

from ...extensions import db
from ...models import DaJudge, Item, Output, Sentence
from ...services import score_quality
from .quality import shown_translation


@dataclass
class Score:
    position: int
    answered_at: object
    seconds: float
    source: str
    translation: str  # as shown
    score: int
    too_fast: bool
    discarded_at: object
    kind: str = None  # a quality-control item's kind (protocols/da/quality.KINDS)
    original_position: int = None
    original_score: int = None
    # No sides and no controls in DA (the pairwise signs read these).
    choice = None
    control = False


_original = aliased(Item)
_SCORES = (
    select(Item, Sentence.source, Sentence.reference, Output.text, Output.degraded, _original.position,
           _original.score)
    .join(Sentence, Sentence.id == Item.sentence_id)
    .join(Output, (Output.sentence_id == Item.sentence_id) & (Output.system_id == Item.left_system_id))
    .outerjoin(_original, _original.id == Item.original_item_id)
    .order_by(Item.position)
)


def judgments_of(participation):
    """Every answered item of the volunteer, oldest first (a ``Scores``)."""
    rows = db.session.execute(
        _SCORES.where(Item.participation_id == participation.id, Item.answered_at.is_not(None))
    )
    scores = score_quality.Scores(
        Score(
            position=item.position, answered_at=item.answered_at, seconds=item.seconds, source=source,
            translation=shown_translation(item.qc_kind, text, degraded, reference), score=item.score,
            too_fast=item.too_fast, discarded_at=item.discarded_at, kind=item.qc_kind,
            original_position=original_position, original_score=original_score,
        )
        for item, source, reference, text, degraded, original_position, original_score in rows
    )
    scores.quality = score_quality.evidence(participation.campaign, db.session.get(DaJudge, participation.id), scores)
    return scores
