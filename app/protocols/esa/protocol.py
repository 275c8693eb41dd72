"""Error Span Annotation (Kocmi et al., WMT 2024): the volunteer marks the
spans of one translation that are wrong, each minor or major (an omission
without offsets), then scores the segment 0-100. Segments come in their
document's order with the document's earlier segments shown; a document
begun is served whole, beyond its slots' target if others filled them
meanwhile (the judgments beyond count as such).
"""
import json

from flask_babel import lazy_gettext as _l
from sqlalchemy import bindparam, case, exists, func, select
from sqlalchemy.orm import aliased

from ...database import execute
from ...models import Item, Output, Sentence, Slot
from ...services import bad_references, documents, quality, score_quality, score_sums
from ...services.slots import take_slot_in
from ...services.score_quality import BAD_REFERENCE
from . import export as esa_export, practice as esa_practice, spans as esa_spans

NAME = "esa"
TEMPLATE = "volunteer/item_esa.html"
# Practice items: a translation with its errors known (practice.py).
PRACTICE = esa_practice
TEXTS = "volunteer/protocol_esa.html"  # task, instructions, rule, dismissal
USES_CONTROLS = False  # quality control is made from the campaign's outputs
# name: (type, default, minimum[, maximum]) (docs/campaign-format.md); DA's, but
# ``qc_share`` is the share of document boundaries where a bad-reference document may start.
SETTINGS = {
    "qc_share": (int, 20, 0, 100),
    "qc_distance": (int, 10, 1),
    "qc_min_pairs": (int, 5, 1),
    "qc_min_spread": (float, 3.0, 0.0, 50),
}
WORDS = {}
LIVE_SETTINGS = ("qc_min_pairs", "qc_min_spread")  # the live rule's thresholds
EXPORTS = ("esa-judgments", "wmt24-esa", "volunteers")
# The exports only ESA has, {kind: (columns, rows, formats)}: services.export adds them.
EXPORT_KINDS = {
    # JSON Lines with the spans as lists (what scripts/analyse.py reads as bozka-esa).
    "esa-judgments": (esa_export.JSONL_COLUMNS, esa_export.judgment_rows, ("jsonl",)),
    # WMT24's released CSV layout, no header (scripts/analyse.py --format wmt24-esa).
    "wmt24-esa": (esa_export.WMT24_COLUMNS, esa_export.wmt24_rows, ("csv",), {"csv": esa_export.as_wmt24_table}),
}
VOLUNTEER_QUALITY = []
PANEL = "organiser/_panel_esa.html"
REVIEW = "organiser/_review_esa.html"
SIGNS = ("fast",)  # no sides, no "equal": only the reading floor's sign applies
# Items back an annotated segment must be before its bad reference may come,
# before the first ticket: the document just finished never comes back at once.
EARLY_DISTANCE = 2
# How far back (items) the look for a document to check goes: a flat cost.
SEEN_WINDOW = 200


def check_settings(settings, has_references):
    return None


def units(sentence_id, outputs, target, settings, rng):
    """One slot per system output of the sentence; each output gets its
    adequacy bad reference now, for the bad-reference documents."""
    bad_references.degrade_outputs(sentence_id, outputs, rng)
    return [Slot(sentence_id=sentence_id, system_a_id=output.system_id, target=target) for output in outputs]


def question(campaign):
    return _l("Mark the errors in the translation, then score it")


def volunteer_quality(campaign, engine):
    return lambda row: {}


_checked = aliased(Item)
# The volunteer's answered test items whose output has a bad reference and
# that no bad reference checks yet (a statement to narrow down).
_ORIGINALS = (
    select(Item.id, Item.sentence_id, Item.left_system_id)
    .join(Sentence, Sentence.id == Item.sentence_id)
    .join(Output, (Output.sentence_id == Item.sentence_id) & (Output.system_id == Item.left_system_id))
    .where(Item.participation_id == bindparam("participation_id"), Item.qc_kind.is_(None),
           Item.slot_id.is_not(None), Item.answered_at.is_not(None), Item.discarded_at.is_(None),
           Output.degraded.is_not(None), ~exists().where(_checked.original_item_id == Item.id))
)
# The earliest, at least ``distance`` items back (``latest``), within the
# window, of a document other than the one just annotated: where a
# bad-reference document starts.
_DUE_ORIGINAL = (
    _ORIGINALS.where(Item.position <= bindparam("latest"), Item.position > bindparam("earliest"),
                     func.coalesce(Sentence.document, "") != bindparam("current_document"))
    .order_by(Item.position).limit(1)
)
# The next one of the bad-reference document under way (same document and system).
_NEXT_ORIGINAL = (
    _ORIGINALS.where(Sentence.campaign_id == bindparam("campaign_id"), Sentence.document == bindparam("document"),
                     Sentence.number > bindparam("number"), Item.left_system_id == bindparam("system"))
    .order_by(Sentence.number).limit(1)
)
# The volunteer's latest item of any kind.
_LATEST_ITEM = (
    select(Item.qc_kind, Sentence.document, Sentence.number, Item.left_system_id)
    .join(Sentence, Sentence.id == Item.sentence_id)
    .where(Item.participation_id == bindparam("participation_id"))
    .order_by(Item.position.desc())
    .limit(1)
)


def _bad_reference(row):
    """The fields of the bad reference of an original (``_ORIGINALS``'s row)."""
    fields = dict(sentence_id=row.sentence_id, left_system_id=row.left_system_id, qc_kind=BAD_REFERENCE,
                  original_item_id=row.id)
    return fields | {"texts": texts_of(Item(**fields))}


def _serve_quality(campaign, participation, position, latest):
    """At a document boundary: the next segment of the bad-reference
    document under way, else, where the secret seed draws one (at every
    boundary before the first ticket), the first of a new one, unless one
    just ended; None when none is due."""
    last = execute(_LATEST_ITEM, {"participation_id": participation.id}).first()
    if last is not None and last.qc_kind == BAD_REFERENCE:
        if last.document is None:
            return None
        row = execute(_NEXT_ORIGINAL, {"participation_id": participation.id, "campaign_id": campaign.id,
                                       "document": last.document, "number": last.number,
                                       "system": last.left_system_id}).first()
        return _bad_reference(row) if row is not None else None
    early = position <= campaign.raffle_every
    seed = quality.volunteer_seed(campaign.pseudonym_salt, participation.id)
    if not (early or score_quality.is_quality_position(position, campaign.qc_share, seed)):
        return None
    distance = EARLY_DISTANCE if early else campaign.qc_distance
    row = execute(_DUE_ORIGINAL, {
        "participation_id": participation.id, "latest": position - distance,
        "earliest": position - distance - SEEN_WINDOW,
        "current_document": (latest.document or "") if latest is not None else ""}).first()
    return _bad_reference(row) if row is not None else None


def serve(campaign, participation, position, rng):
    """The next segment of the volunteer's document; at a document boundary,
    a bad-reference document's segment when one is due (``_serve_quality``),
    else the first segment of the emptiest document they have not seen
    (with ``texts``), or None."""
    latest, following = documents.following_segment(campaign.id, participation.id)
    if campaign.qc_share and following is None:
        fields = _serve_quality(campaign, participation, position, latest)
        if fields is not None:
            return fields
    taken = take_slot_in(following, latest.left_system_id, beyond_target=True) if following is not None else None
    taken = taken or documents.take_first_segment(campaign.id, participation.id, rng)
    if taken is None:
        return None
    slot, sentence_id, _texts = taken
    fields = dict(slot_id=slot.id, sentence_id=sentence_id, left_system_id=slot.system_a_id, holding=True)
    return fields | {"texts": texts_of(Item(**fields))}


# A bad reference shows its output's degraded text.
_shown = case((Item.qc_kind == BAD_REFERENCE, Output.degraded), else_=Output.text)
# The volunteer's current item with (source, reference, translation shown).
CURRENT_ITEM = (
    select(Item, Sentence.source, Sentence.reference, _shown)
    .outerjoin(Sentence, Sentence.id == Item.sentence_id)
    .outerjoin(Output, (Output.sentence_id == Item.sentence_id) & (Output.system_id == Item.left_system_id))
    .where(Item.participation_id == bindparam("participation_id"), Item.answered_at.is_(None),
           Item.skipped_at.is_(None))
    .order_by(Item.position.desc())
    .limit(1)
    .execution_options(populate_existing=True)
)
_TEXTS = (
    select(Sentence.source, Sentence.reference, Output.text, Output.degraded, Sentence.document, Sentence.number,
           Sentence.campaign_id)
    .join(Output, Output.sentence_id == Sentence.id)
    .where(Sentence.id == bindparam("sentence"), Output.system_id == bindparam("system"))
)
def texts_of(item):
    """(source, reference, translation shown, previous) of an item;
    ``previous``: the (source, reference, translation) of the document's
    earlier segments shown, degraded as well in a bad-reference document."""
    source, reference, text, degraded, document, number, campaign_id = execute(
        _TEXTS, {"sentence": item.sentence_id, "system": item.left_system_id}).one()
    bad = item.qc_kind == BAD_REFERENCE
    previous = documents.previous_segments(campaign_id, document, number, item.left_system_id, degraded=bad)
    return source, reference, degraded if bad else text, previous


def reading_words(campaign, texts):
    """Words read before answering: the source and the translation."""
    return sum(len(text.split()) for text in (texts[0], texts[2]) if text is not None)


def _score(value):
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 100 else None


def _spans(text):
    """The spans of an answer, sent as JSON text (by the form and by
    static/js/esa.js alike), or None."""
    try:
        return esa_spans.parse(json.loads(text)) if isinstance(text, str) and len(text) <= esa_spans.MAX_TEXT else None
    except ValueError:
        return None


def parse(data):
    """(score, spans) of a JSON judgment, or None."""
    score, spans = _score(data.get("score")), _spans(data.get("spans"))
    return None if score is None or spans is None else (score, spans)


def form():
    from .form import EsaForm

    return EsaForm()


def form_answer(form):
    return form.score.data, _spans(form.spans.data)


def answer_values(item, answer):
    """The score and the spans, checked against the text shown: a span
    beyond it is refused (ValueError; the answer changes nothing)."""
    score, spans = answer
    translation = texts_of(item)[2]
    if _score(score) is None or esa_spans.parse(spans, length=len(translation)) is None:
        raise ValueError("spans do not fit the translation shown")
    return dict(score=score, spans=spans)


def counters(participation, item, values):
    if item.qc_kind is None:
        return {}
    return dict(controls_answered=participation.controls_answered + 1)


_ORIGINAL = select(Item.score, Item.too_fast).where(Item.id == bindparam("original_id"))


def dismissal_reason(campaign, participation, item):
    """The live rule (``score_quality.optimiser_verdict``) on the volunteer's
    running sums, which this answer moves (``score_sums``, with its error
    marks): checked when a bad reference is paired, the only time its
    outcome can change."""
    original = None
    if item.original_item_id is not None:
        original = execute(_ORIGINAL, {"original_id": item.original_item_id}).one()
    judge, item.completes_pair = score_sums.record(participation, item, original, [],
                                                   marks=esa_spans.counts(item.spans or []))
    if not item.completes_pair:
        return None
    return score_quality.optimiser_verdict(judge, campaign.qc_min_pairs, campaign.qc_min_spread)


def hold_reason(campaign, participation, item):
    """The first checks (``score_quality.early_verdict``): read while the
    first scores come in and whenever a bad reference is paired (none
    with ``qc_share`` 0: quality control off)."""
    if not campaign.qc_share:
        return None
    early = item.position <= max(score_quality.EARLY_SCORES, campaign.raffle_every)
    if not (early or getattr(item, "completes_pair", False)):
        return None
    return score_quality.early_verdict(score_sums.judge_of(participation), campaign.qc_min_spread)


def payload(campaign, texts):
    """The item as the page and the JSON API show it."""
    source, _reference, translation, previous = texts
    return {"source": source, "translation": translation,
            "previous": [{"source": s, "translation": t} for s, _reference, t in previous]}


def dashboard(campaign, volunteers):
    from .dashboard import summary

    return summary(campaign, volunteers)


def review_judgments(participation):
    from .review import judgments_of

    return judgments_of(participation)
