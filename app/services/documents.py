"""Serving by document (docs/campaign-format.md, issue 33): a volunteer gets
a document's segments in order, from one system, and a document begun is
served whole, beyond its slots' target if others filled them meanwhile
(the judgments beyond count as such); a document someone stopped in the
middle of is taken up there by the next volunteer. Shared by the
protocols that serve by document (DA when its campaign has documents, ESA
always).
"""
from sqlalchemy import bindparam, exists, or_, select
from sqlalchemy.orm import aliased

from ..database import execute
from ..models import Item, Output, Sentence, Slot
from .slots import choose_slot, take_slot_in

# The document's earlier segments shown above the current one, at most.
PREVIOUS_SHOWN = 10

# Documents are given for every sentence or for none: the first one says
# (through the (campaign, number) index, not a scan of the campaign).
_HAS_DOCUMENTS = select(Sentence.document.is_not(None)).where(
    Sentence.campaign_id == bindparam("campaign_id")).order_by(Sentence.number).limit(1)
# The volunteer's latest test item (a quality-control item has no slot): its
# sentence's document, number and system. Walks (participation, position)
# from the newest item and stops at the first with a slot.
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
_before, _before_slot, _mine, _open = aliased(Sentence), aliased(Slot), aliased(Item), aliased(Slot)


def _previous_segment(sentence):
    """The segment before ``sentence`` in its document (a condition on ``_before``)."""
    return ((_before.campaign_id == sentence.campaign_id) & (_before.number == sentence.number - 1)
            & (_before.document == sentence.document))


def _startable(slot, sentence):
    """Whether a document may be begun at this open slot: its sentence begins
    a document (or has none); or the volunteers at it and coming to it (the
    previous segment's holds, from the same system) are fewer than its
    target while that previous segment wants nobody more. The second is a
    document someone stopped in the middle of: nobody would begin it again
    at its first segment, so the next volunteer takes it up there, with the
    earlier segments shown."""
    stalled = exists().where(
        _previous_segment(sentence), _before_slot.sentence_id == _before.id,
        _before_slot.system_a_id == slot.system_a_id, _before_slot.pending >= _before_slot.target,
        slot.pending + _before_slot.pending - _before_slot.collected < slot.target).correlate_except(
        _before, _before_slot)
    first = ~exists().where(_previous_segment(sentence)).correlate_except(_before)
    # Correlated by hand: within the walk these sit two subqueries deep.
    return slot.identical.is_(False) & (slot.pending < slot.target) & or_(first, stalled)


# The emptiest open sentence where the volunteer may begin a document
# (``_startable``) that they have not begun: having its segment, or the one
# before, is having seen it. Walks ix_sentences_emptiest and stops at the first.
_start_segment = (
    select(Sentence.id)
    .where(
        Sentence.campaign_id == bindparam("campaign_id"), Sentence.is_open.is_(True),
        ~exists().where(_mine.participation_id == bindparam("participation_id"), _mine.sentence_id == Sentence.id),
        ~exists().where(_previous_segment(Sentence), _mine.participation_id == bindparam("participation_id"),
                        _mine.sentence_id == _before.id),
        exists().where(_open.sentence_id == Sentence.id, _startable(_open, Sentence)),
    )
    .order_by(Sentence.pending, Sentence.id)
    .limit(1)
    .scalar_subquery()
)
_start = aliased(Sentence)
# Its startable slots, one per system: the caller draws among the emptiest.
_START_SLOTS = (
    select(Slot.sentence_id, Slot.system_a_id, Slot.pending)
    .join(_start, _start.id == Slot.sentence_id)
    .where(Slot.sentence_id == _start_segment, _startable(Slot, _start))
)
_PREVIOUS = (
    select(Sentence.source, Sentence.reference, Output.text, Output.degraded)
    .join(Output, Output.sentence_id == Sentence.id)
    .where(Sentence.campaign_id == bindparam("campaign_id"), Sentence.document == bindparam("document"),
           Sentence.number < bindparam("number"), Sentence.number >= bindparam("number") - PREVIOUS_SHOWN,
           Output.system_id == bindparam("system"))
    .order_by(Sentence.number)
)


def has_documents(campaign_id):
    """Whether the campaign's sentences are grouped into documents."""
    return bool(execute(_HAS_DOCUMENTS, {"campaign_id": campaign_id}).scalar())


def following_segment(campaign_id, participation_id):
    """(the volunteer's latest test item's row: document, number, system; the
    id of its document's next segment, or None at a document's end)."""
    latest = execute(_LATEST, {"participation_id": participation_id}).first()
    if latest is None or latest.document is None:
        return latest, None
    return latest, execute(_NEXT_SEGMENT, {"campaign_id": campaign_id, "document": latest.document,
                                           "number": latest.number}).scalar()


def take_first_segment(campaign_id, participation_id, rng):
    """A slot where the volunteer begins a document they have not begun,
    at the emptiest segment where one may be begun (``_startable``: its
    first, or where someone stopped): ``take_slot_in``'s value, or None
    when none is left."""
    params = {"campaign_id": campaign_id, "participation_id": participation_id}
    while True:  # another transaction may hold the slot drawn (PostgreSQL): draw again
        row = choose_slot(execute(_START_SLOTS, params).all(), rng)
        if row is None:
            return None
        taken = take_slot_in(row.sentence_id, row.system_a_id)
        if taken is not None:
            return taken


def take_next_segment(campaign_id, participation_id, rng):
    """The next segment of the volunteer's document (their latest test
    item's), same system, whatever its count; else the first segment of the
    emptiest document they have not begun: a slot taken, or None."""
    latest, following = following_segment(campaign_id, participation_id)
    taken = take_slot_in(following, latest.left_system_id, beyond_target=True) if following is not None else None
    return taken or take_first_segment(campaign_id, participation_id, rng)


def previous_segments(campaign_id, document, number, system_id, degraded=False):
    """(source, reference, translation) of the document's segments before
    ``number`` (at most PREVIOUS_SHOWN), in order, as ``system_id`` translated
    them; ``degraded``: their bad references where they have one (as a
    bad-reference document showed them)."""
    if document is None:
        return ()
    return tuple((source, reference, (bad or text) if degraded else text) for source, reference, text, bad in execute(
        _PREVIOUS, {"campaign_id": campaign_id, "document": document, "number": number, "system": system_id}))
