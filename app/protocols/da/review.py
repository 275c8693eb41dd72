"""A DA volunteer's scores as the organiser's review page shows them
(``protocols.da.protocol.review_judgments``): each with the translation it showed
and, for a quality-control item, its kind and the original's score; with
them, the evidence of the quality-control rules (``Evidence``)."""
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import aliased

from ...extensions import db
from ...models import DaJudge, Item, Output, Sentence
from . import quality as da_quality
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
    kind: str = None  # a quality-control item's kind (da_quality.KINDS)
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


@dataclass
class Evidence:
    """What DA's quality-control rules read of a volunteer: the live rule's
    running sums (``DaJudge``, as the rule read them) and the judge test's
    verdict; the means of the paired bad references and their originals
    from the scores shown."""

    pairs: int  # completed bad-reference pairs (the live rule's)
    min_pairs: int
    mean_drop: float  # mean of original - bad reference over those pairs (0 or less: the rule fails)
    original_mean: float
    bad_mean: float
    scores: int
    spread: float  # standard deviation of every score (the live rule's)
    first_spread: float  # of the first da_quality.EARLY_SCORES scores (the early check's)
    min_spread: float
    tested_pairs: int  # the judge test's pairs (the scores that count)
    status: str  # the judge test's verdict: da_quality.RELIABLE, UNRELIABLE or UNTESTED
    verdict: str = None  # the live rule's reason on these sums now, or None

    CODES = (da_quality.NOT_LOWER, da_quality.LOW_VARIATION)  # the hold and dismissal reasons it explains


def evidence(campaign, judge, scores):
    """The ``Evidence`` of a volunteer's ``DaJudge`` sums and their ``Score``
    rows; None before their first score."""
    if judge is None:
        return None
    pairs = [(s.original_score, s.score) for s in scores
             if s.kind == da_quality.BAD_REFERENCE and s.original_score is not None]

    def mean(values):
        return sum(values) / len(values) if values else None

    def spread(n, total, squares, ddof):
        return float(da_quality.spread(n, total, squares, ddof)) if n > ddof else None

    return Evidence(
        pairs=judge.pairs, min_pairs=campaign.qc_min_pairs,
        mean_drop=judge.drop_sum / judge.pairs if judge.pairs else None,
        original_mean=mean([o for o, _b in pairs]), bad_mean=mean([b for _o, b in pairs]),
        scores=judge.scores, spread=spread(judge.scores, judge.score_sum, judge.score_squares, 1),
        first_spread=spread(judge.first_scores, judge.first_sum, judge.first_squares, 0),
        min_spread=campaign.qc_min_spread, tested_pairs=judge.tested_pairs, status=judge.status,
        verdict=da_quality.optimiser_verdict(judge, campaign.qc_min_pairs, campaign.qc_min_spread)
        or da_quality.early_verdict(judge, campaign.qc_min_spread),
    )


class Scores(list):
    """A volunteer's ``Score`` rows, with ``quality``: their ``Evidence``."""

    quality = None


def judgments_of(participation):
    """Every answered item of the volunteer, oldest first (a ``Scores``)."""
    rows = db.session.execute(
        _SCORES.where(Item.participation_id == participation.id, Item.answered_at.is_not(None))
    )
    scores = Scores(
        Score(
            position=item.position, answered_at=item.answered_at, seconds=item.seconds, source=source,
            translation=shown_translation(item.qc_kind, text, degraded, reference), score=item.score,
            too_fast=item.too_fast, discarded_at=item.discarded_at, kind=item.qc_kind,
            original_position=original_position, original_score=original_score,
        )
        for item, source, reference, text, degraded, original_position, original_score in rows
    )
    scores.quality = evidence(participation.campaign, db.session.get(DaJudge, participation.id), scores)
    return scores
