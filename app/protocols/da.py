"""Direct Assessment (Graham et al., seed 000): one translation at a time,
scored 0-100 on a slider, for adequacy (against the source, or a reference
in monolingual campaigns) or fluency (the translation alone).

Quality control, from the campaign's own outputs (``services.da_quality``):
some items after an original the volunteer scored, the same volunteer gets
a bad reference of it, an exact repeat, or the reference as a translation.
The live rule dismisses only clear aggressive optimisers.
"""
from flask_babel import lazy_gettext as _l
from sqlalchemy import bindparam, case, exists, select
from sqlalchemy.orm import aliased

from ..database import execute
from ..models import Item, Output, Sentence, Slot
from ..services import da_dashboard, da_quality, da_review, quality
from ..services.slots import take_slot

NAME = "da"
TEMPLATE = "volunteer/item_da.html"
TEXTS = "volunteer/protocol_da.html"  # task, instructions, rule, dismissal
DIMENSIONS = ("adequacy", "fluency")
CONTEXTS = ("source", "reference")  # what adequacy is judged against
USES_CONTROLS = False  # quality control is made from the campaign's outputs
# name: (type, default, minimum[, maximum]) (docs/campaign-format.md)
SETTINGS = {
    "da_dimension": (str, "adequacy", None),
    "da_context": (str, "source", None),
    "qc_share": (int, 30, 0, 100),
    "qc_distance": (int, 10, 1),
    "qc_min_pairs": (int, 5, 1),
    "qc_min_spread": (float, 3.0, 0.0, 50),
}
WORDS = {"da_dimension": DIMENSIONS, "da_context": CONTEXTS}
LIVE_SETTINGS = ("qc_min_pairs", "qc_min_spread")  # the live rule's thresholds
# What the organisers' pages show and offer (services/export.py, dashboard.py, review.py).
EXPORTS = ("da-judgments", "wmt-da", "volunteers")
PANEL = "organiser/_panel_da.html"
REVIEW = "organiser/_review_da.html"
SIGNS = ("fast",)  # no sides, no "equal": only the reading floor's sign applies


def check_settings(settings, has_references):
    """What is wrong with a campaign's settings for this protocol, or None."""
    if settings["da_context"] == "reference" and not has_references:
        return "da_context = \"reference\" needs a reference file"
    return None


def units(sentence_id, outputs, target, settings, rng):
    """The slots of one sentence: one per system output; each output gets
    its bad reference now (``da_quality``), for the quality-control items."""
    degrade = da_quality.degrade_fluency if settings["da_dimension"] == "fluency" else da_quality.degrade_adequacy
    for output in outputs:
        output.degraded = degrade(output.text, rng)
    return [Slot(sentence_id=sentence_id, system_a_id=output.system_id, target=target) for output in outputs]


def question(campaign):
    if campaign.da_dimension == "fluency":
        return _l("How fluent is this text?")
    if campaign.da_context == "reference":
        return _l("How well does the translation express the meaning of the reference?")
    return _l("How well does the translation express the meaning of the source?")


def serve(campaign, participation, position, rng):
    """The fields of the volunteer's item at ``position`` (with ``texts``),
    or None when nothing is left. A quality-control item is served where the
    secret schedule puts one and an original is due; a test item otherwise."""
    seed = quality.volunteer_seed(campaign.pseudonym_salt, participation.id)
    if da_quality.is_quality_position(position, campaign.qc_share, seed):
        fields = _serve_quality(campaign, participation, position, seed)
        if fields is not None:
            return fields
    taken = take_slot(campaign, participation, rng)
    if taken is None:
        return None
    slot, sentence_id, (source, translation, _none) = taken
    fields = dict(slot_id=slot.id, sentence_id=sentence_id, left_system_id=slot.system_a_id, holding=True)
    if campaign.da_context == "reference":
        return fields | {"texts": texts_of(Item(**fields))}
    return fields | {"texts": (source, None, translation)}


_quality_item = aliased(Item)
# The volunteer's earliest scored test item, at least ``distance`` items
# back, that has no quality-control item yet (one statement).
_DUE_ORIGINAL = (
    select(Item.id, Item.position, Item.sentence_id, Item.left_system_id,
           Sentence.reference.is_not(None), Output.degraded.is_not(None))
    .join(Sentence, Sentence.id == Item.sentence_id)
    .join(Output, (Output.sentence_id == Item.sentence_id) & (Output.system_id == Item.left_system_id))
    .where(
        Item.participation_id == bindparam("participation_id"),
        Item.slot_id.is_not(None),
        Item.answered_at.is_not(None),
        Item.discarded_at.is_(None),
        Item.position <= bindparam("latest"),
        ~exists().where(_quality_item.original_item_id == Item.id),
    )
    .order_by(Item.position)
    .limit(1)
)


def _serve_quality(campaign, participation, position, seed):
    row = execute(
        _DUE_ORIGINAL, {"participation_id": participation.id, "latest": position - campaign.qc_distance}
    ).first()
    if row is None:
        return None
    original_id, original_position, sentence_id, system_id, has_reference, has_bad = row
    # The reference as a translation only where it is not the context shown.
    kind = da_quality.quality_kind(seed, original_position, has_reference and campaign.da_context != "reference")
    if kind == da_quality.BAD_REFERENCE and not has_bad:
        kind = da_quality.REPEAT  # too short to degrade
    fields = dict(sentence_id=sentence_id, left_system_id=system_id, qc_kind=kind, original_item_id=original_id)
    return fields | {"texts": texts_of(Item(**fields))}


_translation = case(
    (Item.qc_kind == da_quality.BAD_REFERENCE, Output.degraded),
    (Item.qc_kind == da_quality.REFERENCE, Sentence.reference),
    else_=Output.text,
)


def _with_texts(statement):
    return statement.outerjoin(Sentence, Sentence.id == Item.sentence_id).outerjoin(
        Output, (Output.sentence_id == Item.sentence_id) & (Output.system_id == Item.left_system_id)
    )


# The volunteer's current item with (source, reference, translation shown).
CURRENT_ITEM = (
    _with_texts(select(Item, Sentence.source, Sentence.reference, _translation))
    .where(Item.participation_id == bindparam("participation_id"), Item.answered_at.is_(None),
           Item.skipped_at.is_(None))
    .order_by(Item.position.desc())
    .limit(1)
    .execution_options(populate_existing=True)
)
_TEXTS = (
    select(Sentence.source, Sentence.reference, Output.text, Output.degraded)
    .join(Output, Output.sentence_id == Sentence.id)
    .where(Sentence.id == bindparam("sentence"), Output.system_id == bindparam("system"))
)


def texts_of(item):
    """(source, reference, translation shown) of an item."""
    source, reference, text, degraded = execute(
        _TEXTS, {"sentence": item.sentence_id, "system": item.left_system_id}
    ).one()
    shown = {da_quality.BAD_REFERENCE: degraded, da_quality.REFERENCE: reference}.get(item.qc_kind, text)
    return source, reference, shown


def _context(campaign, texts):
    """The text the translation is judged against, or None (fluency)."""
    source, reference, _translation = texts
    if campaign.da_dimension == "fluency":
        return None
    return reference if campaign.da_context == "reference" else source


def reading_words(campaign, texts):
    """Words read before answering: the translation and what it is judged against."""
    return sum(len(text.split()) for text in (_context(campaign, texts), texts[2]) if text is not None)


def valid_score(value):
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 100


def parse(data):
    """The score in a JSON judgment, or None."""
    score = data.get("score")
    return score if valid_score(score) else None


def form():
    from ..volunteer.forms import ScoreForm

    return ScoreForm()


def form_answer(form):
    return form.score.data


def answer_values(item, answer):
    if not valid_score(answer):
        raise ValueError("invalid score")
    return dict(score=answer)


def counters(participation, item, values):
    if item.qc_kind is None:
        return {}
    return dict(controls_answered=participation.controls_answered + 1)


_original = aliased(Item)
_BAD_PAIRS = (
    select(_original.score, Item.score)
    .join(_original, _original.id == Item.original_item_id)
    .where(
        Item.participation_id == bindparam("participation_id"),
        Item.qc_kind == da_quality.BAD_REFERENCE,
        Item.answered_at.is_not(None),
    )
)
_SCORES = select(Item.score).where(
    Item.participation_id == bindparam("participation_id"), Item.score.is_not(None)
)


def dismissal_reason(campaign, participation, item):
    """The live rule (``da_quality.optimiser_reason``), checked when a bad
    reference is scored: only then can its outcome change."""
    if item.qc_kind != da_quality.BAD_REFERENCE:
        return None
    params = {"participation_id": participation.id}
    pairs = execute(_BAD_PAIRS, params).all()
    if len(pairs) < campaign.qc_min_pairs:
        return None
    scores = execute(_SCORES, params).scalars().all()
    return da_quality.optimiser_reason(
        [tuple(pair) for pair in pairs], scores, campaign.qc_min_pairs, campaign.qc_min_spread
    )


def payload(campaign, texts):
    """The item as the page and the JSON API show it: nothing tells a
    quality-control item from a test."""
    return {"source": _context(campaign, texts), "translation": texts[2]}


def dashboard(campaign, participations):
    """The DA part of the dashboard: per-system scores as the analysis
    computes them, and the quality-control record (``da_dashboard``)."""
    return da_dashboard.summary(campaign, participations)


review_judgments = da_review.judgments_of
