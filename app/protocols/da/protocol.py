"""Direct Assessment (Graham et al., seed 000): one translation at a time,
scored 0-100 on a slider, for adequacy (against the source, or a reference
in monolingual campaigns) or fluency (the translation alone).

Quality control, from the campaign's own outputs (``protocols.da.quality``):
some items after an original the volunteer scored, the same volunteer gets
a bad reference of it, an exact repeat, or the reference as a translation.
The live rule dismisses only clear aggressive optimisers.

A campaign with documents serves its test items by document
(``services.documents``), as ESA does; quality-control items still come
between them, single segments of earlier documents.
"""
from flask_babel import lazy_gettext as _l
from sqlalchemy import bindparam, case, exists, select, update
from sqlalchemy.orm import aliased

from ...database import execute
from ...models import Item, Output, Sentence, Slot
from ...services import bad_references, documents, quality, research, score_quality, score_sums
from . import dashboard as da_dashboard, export as da_export, quality as da_quality, review as da_review
from ...services.counters import set_counters
from ...services.slots import choose_slot, take_slot, take_slot_in

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
# The exports only DA has, {kind: (columns, rows, formats)}: services.export adds them.
EXPORT_KINDS = {
    "da-judgments": (da_export.DA_JUDGMENT_COLUMNS, da_export.da_judgment_rows, ("csv", "jsonl")),
    # WMT's whitespace-separated layout: tab-separated, quoted system names.
    "wmt-da": (da_export.WMT_DA_COLUMNS, da_export.wmt_da_rows, ("tsv",)),
}
WRITERS = {"tsv": da_export.as_wmt_table}
# The volunteers export's quality columns, in place of pairwise's control columns.
VOLUNTEER_QUALITY = da_export.DA_VOLUNTEER_QUALITY
volunteer_quality = da_export.volunteer_quality_of
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
    its bad reference now (``da_quality``), for the quality-control items:
    adequacy's with a run of words of an earlier sentence's translation."""
    if settings["da_dimension"] == "fluency":
        for output in outputs:
            output.degraded = da_quality.degrade_fluency(output.text, rng)
    else:
        bad_references.degrade_outputs(sentence_id, outputs, rng)
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
    secret schedule puts one (denser before the first ticket) and one can be
    made; a test item otherwise. Test items are, whenever one is open,
    another system's output of a source the volunteer saw, as WMT's HITs
    serve them: a source seen before says nothing about an item's kind."""
    seed = quality.volunteer_seed(campaign.pseudonym_salt, participation.id)
    early = da_quality.is_early(position, campaign.raffle_every)
    distance = da_quality.EARLY_DISTANCE if early else campaign.qc_distance
    # A source comes back once last seen at ``lately`` or before (test and quality-control items).
    params = {"participation_id": participation.id, "latest": position - distance, "lately": position - distance,
              "earliest": position - distance - SEEN_WINDOW}
    by_document = documents.has_documents(campaign.id)
    if (da_quality.is_early_quality_position(position, campaign.raffle_every, seed) if early
            else score_quality.is_quality_position(position, campaign.qc_share, seed)):
        fields = _serve_quality(campaign, params, position, seed, early, rng, by_document)
        if fields is not None:
            return fields
    if by_document:
        return _with_texts_of(documents.take_next_segment(campaign.id, participation.id, rng))
    return _serve_test(campaign, participation, params, position, rng)


def _take_seen(params, rng):
    """The original of a bad reference served first, else another system's
    output of a source the volunteer saw: a slot taken, or None."""
    row = execute(_DUE_REVERSED, params).first()
    taken = take_slot_in(*row) if row is not None else None
    if taken is None:
        row = choose_slot(execute(_REVISIT, params).all(), rng)
        taken = take_slot_in(row.sentence_id, row.system_a_id) if row is not None else None
    return taken


def _take_fresh(campaign, participation, rng):
    """A slot of the emptiest unseen sentence, so the volunteer's other
    systems of it are still open when they come back to it (the fullest,
    pairwise's rule, is full by then once many judge at once); the
    fullest if that one is held."""
    row = choose_slot(execute(_EMPTIEST_FRESH, {"campaign_id": campaign.id,
                                                 "participation_id": participation.id}).all(), rng)
    return (take_slot_in(row.sentence_id, row.system_a_id) if row is not None else None) or take_slot(
        campaign, participation, rng)


def _serve_test(campaign, participation, params, position, rng):
    # A seen source first, then an unseen one; at the campaign's end, a
    # source seen lately will do.
    taken = (_take_seen(params, rng) or _take_fresh(campaign, participation, rng)
             or _take_seen(params | {"latest": position - 1, "lately": position - 1}, rng))
    if taken is None:
        return None
    slot, sentence_id, (source, translation, _none) = taken
    fields = dict(slot_id=slot.id, sentence_id=sentence_id, left_system_id=slot.system_a_id, holding=True)
    if campaign.da_context == "reference":
        return fields | {"texts": texts_of(Item(**fields))}
    return fields | {"texts": (source, None, translation, ())}


def _with_texts_of(taken):
    """The fields of a test item for a slot taken (or None), with its texts
    and its document's earlier segments."""
    if taken is None:
        return None
    slot, sentence_id, _texts = taken
    fields = dict(slot_id=slot.id, sentence_id=sentence_id, left_system_id=slot.system_a_id, holding=True)
    return fields | {"texts": texts_of(Item(**fields))}


_quality_item = aliased(Item)
_mine = aliased(Item)
# How far back (items before ``latest``) the statements below look among the
# volunteer's own items: their cost stays flat however many they have answered.
SEEN_WINDOW = 200
# Whether the item's source was seen after position ``lately``.
_seen_lately = exists().where(_mine.participation_id == Item.participation_id, _mine.sentence_id == Item.sentence_id,
                              _mine.position > bindparam("lately"))
# The volunteer's earliest scored test item, at least ``distance`` items
# back, that has no quality-control item yet and whose source was not seen
# after ``lately`` (one statement).
_DUE_ORIGINAL = (
    select(Item.id, Item.position, Item.sentence_id, Item.left_system_id,
           Sentence.reference, Output.degraded.is_not(None))
    .join(Sentence, Sentence.id == Item.sentence_id)
    .join(Output, (Output.sentence_id == Item.sentence_id) & (Output.system_id == Item.left_system_id))
    .where(
        Item.participation_id == bindparam("participation_id"),
        Item.slot_id.is_not(None),
        Item.answered_at.is_not(None),
        Item.discarded_at.is_(None),
        Item.position <= bindparam("latest"), Item.position > bindparam("earliest"),
        ~exists().where(_quality_item.original_item_id == Item.id),
        ~_seen_lately,
    )
    .order_by(Item.position)
    .limit(1)
)


def _had_output(slot):
    """Whether the volunteer has an item of the slot's sentence and system."""
    return exists().where(_mine.participation_id == bindparam("participation_id"),
                          _mine.sentence_id == slot.sentence_id, _mine.left_system_id == slot.system_a_id)


def _open_slot(slot):
    return (slot.identical.is_(False)) & (slot.pending < slot.target)


def _degradable(slot):
    """Whether the slot's output has a bad reference (a text too short has none)."""
    return exists().where(Output.sentence_id == slot.sentence_id, Output.system_id == slot.system_a_id,
                          Output.degraded.is_not(None))


def _slots_of(sentence, *conditions):
    """The open slots of one sentence (a scalar subquery), with their
    counters: the caller draws among the emptiest (``choose_slot``), as
    pairwise does; ordered by id, the first system listed would always win."""
    return (select(Slot.sentence_id, Slot.system_a_id, Slot.pending)
            .where(Slot.sentence_id == sentence, _open_slot(Slot), *(condition(Slot) for condition in conditions)))


def _revisit(*conditions):
    """The open slots the volunteer has no item of, of the source they saw
    longest ago whose latest sighting is at least ``distance`` items back
    (``latest``), among their items since ``earliest``: a source is never
    served twice within ``distance`` items while another one qualifies."""
    other = aliased(Slot)
    later = aliased(Item)
    sentence = (
        select(Item.sentence_id)
        .where(Item.participation_id == bindparam("participation_id"), Item.position <= bindparam("latest"),
               Item.position > bindparam("earliest"),
               # The source's latest sighting; "+ 0" steers SQLite to the (volunteer, sentence) index,
               # a few rows, not every later item of the volunteer's.
               ~exists().where(later.participation_id == Item.participation_id,
                               later.sentence_id == Item.sentence_id, later.position + 0 > Item.position),
               exists().where(other.sentence_id == Item.sentence_id, _open_slot(other), ~_had_output(other),
                              *(condition(other) for condition in conditions)))
        .order_by(Item.position)
        .limit(1)
        .scalar_subquery()
    )
    return _slots_of(sentence, lambda slot: ~_had_output(slot), *conditions)


_REVISIT = _revisit()
# The same, for a bad reference served first: its output must have one.
_REVISIT_DEGRADABLE = _revisit(_degradable)
_seen_sentence = exists().where(_mine.participation_id == bindparam("participation_id"),
                                _mine.sentence_id == Sentence.id)


def _emptiest_fresh(*conditions):
    """The open slots of the emptiest open sentence the volunteer has not
    seen that has one. Walks ix_sentences_emptiest in order, so it stops at
    the first such sentence instead of sorting every open one."""
    other = aliased(Slot)
    sentence = (
        select(Sentence.id)
        .where(Sentence.campaign_id == bindparam("campaign_id"), Sentence.is_open.is_(True), ~_seen_sentence,
               exists().where(other.sentence_id == Sentence.id, _open_slot(other),
                              *(condition(other) for condition in conditions)))
        .order_by(Sentence.pending, Sentence.id)
        .limit(1)
        .scalar_subquery()
    )
    return _slots_of(sentence, *conditions)


_EMPTIEST_FRESH = _emptiest_fresh()
# Not reserved: the bad reference is no judgment.
_FRESH_DEGRADABLE = _emptiest_fresh(_degradable)
# A bad reference the volunteer was served before its original, at least
# ``distance`` items back, whose original they have not been served yet.
_DUE_REVERSED = (
    select(Item.sentence_id, Item.left_system_id)
    .where(
        Item.participation_id == bindparam("participation_id"),
        Item.qc_kind == score_quality.BAD_REFERENCE,
        Item.original_item_id.is_(None),
        Item.position <= bindparam("latest"), Item.position > bindparam("earliest"),
        # Its original as a test item (qc_kind NULL: "slot_id IS NOT NULL" would lead the planner to
        # the partial slot index, which reads all the volunteer's items for each candidate).
        ~exists().where(_mine.participation_id == Item.participation_id, _mine.sentence_id == Item.sentence_id,
                        _mine.left_system_id == Item.left_system_id, _mine.qc_kind.is_(None)),
        ~_seen_lately,  # its source not seen within ``distance`` items: it comes later
    )
    .order_by(Item.position)
    .limit(1)
)


# References are imported for every sentence or for none: the first one says
# (through the (campaign, number) index, not a scan of the campaign).
_HAS_REFERENCES = select(Sentence.reference.is_not(None)).where(
    Sentence.campaign_id == bindparam("campaign_id")).order_by(Sentence.number).limit(1)


def _serve_quality(campaign, params, position, seed, early, rng, by_document):
    """A quality-control item, or None when none can be made now. Before the
    first ticket every one is a bad reference (the early checks read them).
    ``by_document``: a bad reference only after its original (served before
    it, its original would come only if its document came, from its system)."""
    # The reference as a translation only where it is not the context shown.
    references = campaign.da_context != "reference" and execute(_HAS_REFERENCES, {"campaign_id": campaign.id}).scalar()
    kind = score_quality.BAD_REFERENCE if early else da_quality.quality_kind(seed, position, bool(references))
    if kind == score_quality.BAD_REFERENCE and not by_document and score_quality.bad_reference_first(seed, position):
        # An unseen source first: quality control then comes as often with a
        # new source as a test item does.
        row = choose_slot(execute(_FRESH_DEGRADABLE, params | {"campaign_id": campaign.id}).all()
                          or execute(_REVISIT_DEGRADABLE, params).all(), rng)
        if row is not None:
            fields = dict(sentence_id=row.sentence_id, left_system_id=row.system_a_id, qc_kind=kind)
            return fields | {"texts": texts_of(Item(**fields))}
    # One whose source was not seen since, else not just before: never the same source twice in a
    # row (a test item is served instead, and the quality-control item comes at a later place).
    row = execute(_DUE_ORIGINAL, params).first() or execute(_DUE_ORIGINAL, params | {"lately": position - 2}).first()
    if row is None:
        return None
    original_id, _position, sentence_id, system_id, reference, has_bad = row
    if kind == da_quality.REFERENCE and not da_quality.reference_check_possible(
            reference, execute(_OUTPUTS, {"sentence_id": sentence_id}).scalars()):
        kind = score_quality.REPEAT  # no reference, or it is a system's output
    if kind == score_quality.BAD_REFERENCE and not has_bad:
        kind = score_quality.REPEAT  # too short to degrade
    fields = dict(sentence_id=sentence_id, left_system_id=system_id, qc_kind=kind, original_item_id=original_id)
    return fields | {"texts": texts_of(Item(**fields))}


_OUTPUTS = select(Output.text).where(Output.sentence_id == bindparam("sentence_id"))

_translation = case(
    (Item.qc_kind == score_quality.BAD_REFERENCE, Output.degraded),
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
    select(Sentence.source, Sentence.reference, Output.text, Output.degraded, Sentence.campaign_id,
           Sentence.document, Sentence.number)
    .join(Output, Output.sentence_id == Sentence.id)
    .where(Sentence.id == bindparam("sentence"), Output.system_id == bindparam("system"))
)


def texts_of(item):
    """(source, reference, translation shown, previous) of an item;
    ``previous``: the (source, reference, translation) of its document's
    earlier segments, as the item's system translated them (a
    quality-control item's too, as its original showed them)."""
    source, reference, text, degraded, campaign_id, document, number = execute(
        _TEXTS, {"sentence": item.sentence_id, "system": item.left_system_id}
    ).one()
    shown = {score_quality.BAD_REFERENCE: degraded, da_quality.REFERENCE: reference}.get(item.qc_kind, text)
    return source, reference, shown, documents.previous_segments(campaign_id, document, number, item.left_system_id)


def _context(campaign, texts):
    """The text the translation is judged against, or None (fluency)."""
    source, reference = texts[:2]
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
    from .form import ScoreForm

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


# The bad references the volunteer was served before this original (its
# sentence and system), answered and not paired yet.
_REVERSED = (
    select(Item.id, Item.qc_kind, Item.score, Item.too_fast, Item.left_system_id, Item.control_id)
    .where(
        Item.participation_id == bindparam("link_participation"),
        Item.sentence_id == bindparam("link_sentence"),
        Item.left_system_id == bindparam("link_system"),
        Item.qc_kind == score_quality.BAD_REFERENCE,
        Item.original_item_id.is_(None),
        Item.answered_at.is_not(None),
    )
)
_LINK_REVERSED = update(Item.__table__).where(Item.id.in_(bindparam("link_ids", expanding=True))).values(
    original_item_id=bindparam("link_item"))
_ORIGINAL = select(Item.score, Item.too_fast).where(Item.id == bindparam("original_id"))


def _pair_reversed(participation, item):
    """Pair the bad references served before this test item, its original,
    with it: their rows as they were."""
    if item.qc_kind is not None or item.slot_id is None:
        return []
    linked = execute(_REVERSED, {"link_participation": participation.id, "link_sentence": item.sentence_id,
                                 "link_system": item.left_system_id}).all()
    if linked:
        execute(_LINK_REVERSED, {"link_ids": [row.id for row in linked], "link_item": item.id})
        # Paired, they are rows of the exports from now on.
        set_counters(participation, **research.row_counters(participation, linked))
    return linked


def dismissal_reason(campaign, participation, item):
    """The live rule (``score_quality.optimiser_verdict``) on the volunteer's
    running sums, which this answer moves (``score_sums``): checked when a
    bad-reference pair is completed, the only time its outcome can change."""
    original = None
    if item.original_item_id is not None:
        original = execute(_ORIGINAL, {"original_id": item.original_item_id}).one()
    judge, item.completes_pair = score_sums.record(participation, item, original, _pair_reversed(participation, item))
    if not item.completes_pair:
        return None
    return score_quality.optimiser_verdict(judge, campaign.qc_min_pairs, campaign.qc_min_spread)


def hold_reason(campaign, participation, item):
    """The early checks (``score_quality.early_verdict``): read while the first
    scores come in and whenever a bad-reference pair is completed."""
    early = item.position <= max(score_quality.EARLY_SCORES, campaign.raffle_every)
    if not (early or getattr(item, "completes_pair", False)):
        return None
    return score_quality.early_verdict(score_sums.judge_of(participation), campaign.qc_min_spread)


def payload(campaign, texts):
    """The item as the page and the JSON API show it: nothing tells a
    quality-control item from a test. ``previous``: the document's earlier
    segments, each with what it is judged against (None for fluency)."""
    return {"source": _context(campaign, texts), "translation": texts[2],
            "previous": [{"source": _context(campaign, segment), "translation": segment[2]} for segment in texts[3]]}


def dashboard(campaign, volunteers):
    """The DA part of the dashboard: per-system scores as the analysis
    computes them, and the quality-control record (``da_dashboard``)."""
    return da_dashboard.summary(campaign, volunteers)


def dropped(campaign):
    """The volunteers the analysis's judge test leaves out: they do not
    count, on the dashboard or in the raffle (``services/counting.py``)."""
    return da_dashboard.dropped(campaign)


dropped_condition = da_dashboard.dropped_condition


review_judgments = da_review.judgments_of

# The importer's warning about references that are a system's output.
reference_warnings = da_quality.reference_warnings
