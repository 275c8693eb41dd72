"""Error Span Annotation (Kocmi et al., WMT 2024): the volunteer marks the
spans of one translation that are wrong, each minor or major (an omission
without offsets), then scores the segment 0-100. Segments come in their
document's order with the document's earlier segments shown; a document
begun is served whole, beyond its slots' target if others filled them
meanwhile (the judgments beyond count as such).
"""
import json

from flask_babel import lazy_gettext as _l
from sqlalchemy import bindparam, exists, select
from sqlalchemy.orm import aliased

from ...database import execute
from ...models import Item, Output, Sentence, Slot
from ...services.slots import choose_slot, take_slot_in
from . import export as esa_export, practice as esa_practice, spans as esa_spans

NAME = "esa"
TEMPLATE = "volunteer/item_esa.html"
# Practice items: a translation with its errors known (practice.py).
PRACTICE = esa_practice
TEXTS = "volunteer/protocol_esa.html"  # task, instructions, rule, dismissal
USES_CONTROLS = False
SETTINGS = {}
WORDS = {}
LIVE_SETTINGS = ()
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
# The document's earlier segments shown above the one to annotate, at most.
PREVIOUS_SHOWN = 10


def check_settings(settings, has_references):
    return None


def units(sentence_id, outputs, target, settings, rng):
    """One slot per system output of the sentence."""
    return [Slot(sentence_id=sentence_id, system_a_id=output.system_id, target=target) for output in outputs]


def question(campaign):
    return _l("Mark the errors in the translation, then score it")


def volunteer_quality(campaign, engine):
    return lambda row: {}


_latest = aliased(Item)
# The volunteer's latest test item: its sentence's document, number and system.
_LATEST = (
    select(Sentence.document, Sentence.number, Item.left_system_id)
    .join(Sentence, Sentence.id == Item.sentence_id)
    .where(Item.participation_id == bindparam("participation_id"), Item.slot_id.is_not(None))
    .order_by(Item.position.desc())
    .limit(1)
)
_NEXT_SEGMENT = select(Sentence.id).where(
    Sentence.campaign_id == bindparam("campaign_id"), Sentence.document == bindparam("document"),
    Sentence.number == bindparam("number") + 1)
_before, _mine, _open = aliased(Sentence), aliased(Item), aliased(Slot)
# The emptiest open sentence that begins a document (a sentence without a
# document is one) the volunteer has not begun: documents are served from
# their first segment, so having its first segment is having seen it. Walks
# ix_sentences_emptiest, as DA's fresh sources do, and stops at the first.
_first_segment = (
    select(Sentence.id)
    .where(
        Sentence.campaign_id == bindparam("campaign_id"), Sentence.is_open.is_(True),
        ~exists().where(_before.campaign_id == Sentence.campaign_id, _before.number == Sentence.number - 1,
                        _before.document == Sentence.document),
        ~exists().where(_mine.participation_id == bindparam("participation_id"), _mine.sentence_id == Sentence.id),
        exists().where(_open.sentence_id == Sentence.id, _open.identical.is_(False), _open.pending < _open.target),
    )
    .order_by(Sentence.pending, Sentence.id)
    .limit(1)
    .scalar_subquery()
)
# Its open slots, one per system: the caller draws among the emptiest.
_FIRST_SEGMENTS = select(Slot.sentence_id, Slot.system_a_id, Slot.pending).where(
    Slot.sentence_id == _first_segment, Slot.identical.is_(False), Slot.pending < Slot.target)


def serve(campaign, participation, position, rng):
    """The next segment of the volunteer's document, else the first segment
    of the emptiest document they have not seen (with ``texts``), or None."""
    latest = execute(_LATEST, {"participation_id": participation.id}).first()
    taken = None
    if latest is not None and latest.document is not None:
        following = execute(_NEXT_SEGMENT, {"campaign_id": campaign.id, "document": latest.document,
                                            "number": latest.number}).scalar()
        if following is not None:
            taken = take_slot_in(following, latest.left_system_id, beyond_target=True)
    while taken is None:
        row = choose_slot(execute(_FIRST_SEGMENTS, {"campaign_id": campaign.id,
                                                    "participation_id": participation.id}).all(), rng)
        if row is None:
            return None
        taken = take_slot_in(row.sentence_id, row.system_a_id)
    slot, sentence_id, _texts = taken
    fields = dict(slot_id=slot.id, sentence_id=sentence_id, left_system_id=slot.system_a_id, holding=True)
    return fields | {"texts": texts_of(Item(**fields))}


# The volunteer's current item with (source, reference, translation).
CURRENT_ITEM = (
    select(Item, Sentence.source, Sentence.reference, Output.text)
    .outerjoin(Sentence, Sentence.id == Item.sentence_id)
    .outerjoin(Output, (Output.sentence_id == Item.sentence_id) & (Output.system_id == Item.left_system_id))
    .where(Item.participation_id == bindparam("participation_id"), Item.answered_at.is_(None),
           Item.skipped_at.is_(None))
    .order_by(Item.position.desc())
    .limit(1)
    .execution_options(populate_existing=True)
)
_TEXTS = (
    select(Sentence.source, Sentence.reference, Output.text, Sentence.document, Sentence.number,
           Sentence.campaign_id)
    .join(Output, Output.sentence_id == Sentence.id)
    .where(Sentence.id == bindparam("sentence"), Output.system_id == bindparam("system"))
)
_PREVIOUS = (
    select(Sentence.source, Output.text)
    .join(Output, Output.sentence_id == Sentence.id)
    .where(Sentence.campaign_id == bindparam("campaign_id"), Sentence.document == bindparam("document"),
           Sentence.number < bindparam("number"), Sentence.number >= bindparam("number") - PREVIOUS_SHOWN,
           Output.system_id == bindparam("system"))
    .order_by(Sentence.number)
)


def texts_of(item):
    """(source, reference, translation, previous) of an item; ``previous``:
    the (source, translation) of the document's earlier segments shown."""
    source, reference, text, document, number, campaign_id = execute(
        _TEXTS, {"sentence": item.sentence_id, "system": item.left_system_id}).one()
    previous = ()
    if document is not None:
        previous = tuple(tuple(row) for row in execute(_PREVIOUS, {
            "campaign_id": campaign_id, "document": document, "number": number, "system": item.left_system_id}))
    return source, reference, text, previous


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
    return {}


def dismissal_reason(campaign, participation, item):
    return None


def payload(campaign, texts):
    """The item as the page and the JSON API show it."""
    source, _reference, translation, previous = texts
    return {"source": source, "translation": translation,
            "previous": [{"source": s, "translation": t} for s, t in previous]}


def dashboard(campaign, volunteers):
    from .dashboard import summary

    return summary(campaign)


def review_judgments(participation):
    from .review import judgments_of

    return judgments_of(participation)
