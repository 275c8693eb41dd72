"""Taking a slot: the fullest open sentence the volunteer has not judged,
and its emptiest slot (paper, section 3). Shared by every protocol: a slot
is a system pair (pairwise) or one system's output (DA).

Several server processes on PostgreSQL: a sentence's row is locked before
any of its slots' rows, always in that order (see ``assignment``).
"""
import random
import time
from collections import namedtuple

from sqlalchemy import Integer, bindparam, exists, func, select, update
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import aliased

from ..database import dialect_name, execute
from ..models import Item, Output, PairTotal, Sentence, Slot
from .counters import bump_sentence


def _is_sqlite():
    return dialect_name() == "sqlite"


def choose_slot(slots, rng):
    """Among open slots, the one with the fewest judgments; ties at random."""
    if not slots:
        return None
    fewest = min(slot.pending for slot in slots)
    return rng.choice([slot for slot in slots if slot.pending == fewest])


_seen = exists().where(
    Item.participation_id == bindparam("participation_id"), Item.sentence_id == Sentence.id
)
_NEXT_SENTENCE = (
    select(Sentence.id)
    .where(Sentence.campaign_id == bindparam("campaign_id"), Sentence.is_open.is_(True), ~_seen)
    .order_by(Sentence.collected.desc(), Sentence.id)
    .limit(1)
)
_NEXT_SENTENCE_SKIP = _NEXT_SENTENCE.with_for_update(of=Sentence, skip_locked=True)

# The walk above steps over every open sentence the volunteer has seen that
# is fuller than the first they have not: at most one per item served. A
# volunteer served more than EXACT_UP_TO items (whose own open sentences may
# fill the top of the order: 5,000 of them cost 5.7x a newcomer's serve, issue
# 30) looks only at the WALK fullest open sentences, then at the WALK
# emptiest, and only if all of those are seen walks on (they have seen most
# of what is open). Below it the exact walk is cheaper than the two bounded looks.
EXACT_UP_TO = 200
WALK = 25


def _among(order):
    """The first unseen sentence, in ``order`` (columns' names, descending
    with a minus), among the WALK first open ones."""

    def by(table):
        return [getattr(table, name[1:]).desc() if name.startswith("-") else getattr(table, name) for name in order]

    candidate = aliased(Sentence)
    first = (
        select(candidate.id)
        .where(candidate.campaign_id == bindparam("campaign_id"), candidate.is_open.is_(True))
        .order_by(*by(candidate))
        .limit(bindparam("walk", type_=Integer))
    )
    # No campaign condition outside: the database starts from the WALK ids, never walks the index on.
    return select(Sentence.id).where(Sentence.id.in_(first.scalar_subquery()), ~_seen).order_by(*by(Sentence)).limit(1)


# Along ix_sentences_next, then ix_sentences_emptiest; locked as _NEXT_SENTENCE_SKIP.
_BOUNDED = tuple(_among(order).with_for_update(of=Sentence, skip_locked=True)
                 for order in (("-collected", "id"), ("pending", "id")))
_OPEN_SLOTS = (
    select(Slot.id, Slot.pending, Slot.system_a_id, Slot.system_b_id).where(
        Slot.sentence_id == bindparam("sentence_id"),
        Slot.identical.is_(False),
        Slot.pending < Slot.target,
    )
)

def _output_text(system):
    return (
        select(Output.text)
        .where(Output.sentence_id == bindparam("text_sentence"), Output.system_id == bindparam(system))
        .scalar_subquery()
    )


# Takes the slot and returns the texts the item will show, in one statement
# (the subqueries name their rows by bound parameters: see _lock_statement).
_TAKE_SLOT = (
    update(Slot.__table__)
    .where(Slot.id == bindparam("slot_id"), Slot.pending < Slot.target)
    .values(pending=Slot.pending + 1)
    .returning(
        select(Sentence.source).where(Sentence.id == bindparam("text_sentence")).scalar_subquery(),
        _output_text("text_system_a"),
        _output_text("text_system_b"),
    )
)


_TAKE_ANY_SLOT = (
    update(Slot.__table__)
    .where(Slot.id == bindparam("slot_id"))
    .values(pending=Slot.pending + 1)
    .returning(
        select(Sentence.source).where(Sentence.id == bindparam("text_sentence")).scalar_subquery(),
        _output_text("text_system_a"),
        _output_text("text_system_b"),
    )
)


def _next_sentence(campaign_id, participation_id, skip, served=0):
    """The id of the fullest open sentence the volunteer has not seen, locked
    (``served``: items the volunteer was served; beyond EXACT_UP_TO, see there).
    One that another volunteer's transaction holds is passed over (the next
    fullest is as good); when every candidate is held, see ``AllHeld``."""
    params = {"campaign_id": campaign_id, "participation_id": participation_id}
    if served > EXACT_UP_TO:
        for statement in _BOUNDED:
            if skip:
                statement = statement.where(Sentence.id.not_in(skip))
            sentence_id = execute(statement, {**params, "walk": WALK}).scalar()
            if sentence_id is not None:
                return sentence_id
    skipping = _NEXT_SENTENCE_SKIP
    if skip:
        skipping = _NEXT_SENTENCE_SKIP.where(Sentence.id.not_in(skip))
    sentence_id = execute(skipping, params).scalar()
    if sentence_id is not None or _is_sqlite():
        return sentence_id
    # Nothing free: is everything left held by others (they commit within
    # milliseconds), or is nothing left at all? Never queue for the lock:
    # the holder may hold it while looking for the sentence this
    # transaction holds (the one just answered), and so on in a circle.
    plain = _NEXT_SENTENCE.where(Sentence.id.not_in(skip)) if skip else _NEXT_SENTENCE
    for pause in BUSY_PAUSES:
        if execute(plain, params).scalar() is None:
            return None
        time.sleep(pause * random.uniform(0.5, 1.5))
        sentence_id = execute(skipping, params).scalar()
        if sentence_id is not None:
            return sentence_id
    raise AllHeld()


# Waits (seconds) for a held sentence to be free.
BUSY_PAUSES = (0.002, 0.005, 0.01, 0.02, 0.04, 0.08)


class AllHeld(OperationalError):
    """Every sentence left is held by other transactions: this one gives up
    its locks and runs again (``evaluation.retrying`` does), so a circle of
    volunteers each holding what the next one wants always breaks."""

    def __init__(self):
        super().__init__("next sentence", None, RuntimeError("every open sentence is held"))


def take_slot(campaign, participation, rng):
    """Reserve the emptiest open slot of the fullest open sentence the
    volunteer has not judged: (slot row, sentence id, (source, text of
    system a, text of system b or None)), or None when nothing is left."""
    skip = set()
    for _attempt in range(20):
        sentence_id = _next_sentence(campaign.id, participation.id, skip, participation.items_served)
        if sentence_id is None:
            return None
        # The sentence is locked, so its slots' counters are current.
        slots = execute(_OPEN_SLOTS, {"sentence_id": sentence_id}).all()
        slot = choose_slot(slots, rng)
        if slot is not None:
            taken = execute(
                _TAKE_SLOT,
                {
                    "slot_id": slot.id,
                    "text_sentence": sentence_id,
                    "text_system_a": slot.system_a_id,
                    "text_system_b": slot.system_b_id,
                },
            ).first()
            if taken is not None:
                # The sentence is locked above; its counters move with the commit.
                bump_sentence(sentence_id, 1, deferred=True)
                return slot, sentence_id, tuple(taken)
        skip.add(sentence_id)
    return None


_LOCK_SENTENCE = (
    select(Sentence.id)
    .where(Sentence.id == bindparam("sentence_id"), Sentence.is_open.is_(True))
    .with_for_update(of=Sentence, skip_locked=True)
)
# The same, open or not, waiting for another transaction's lock: the slot is
# taken whatever its count (take_slot_in's ``beyond_target``).
_LOCK_ANY_SENTENCE = select(Sentence.id).where(Sentence.id == bindparam("sentence_id")).with_for_update(of=Sentence)
_ANY_SLOTS = select(Slot.id, Slot.pending, Slot.system_a_id, Slot.system_b_id).where(
    Slot.sentence_id == bindparam("sentence_id"), Slot.identical.is_(False))


def take_slot_in(sentence_id, system_id, beyond_target=False):
    """Reserve one system's open slot of a sentence (DA: another system's
    output of a source the volunteer has seen): (slot row, sentence id,
    texts) as ``take_slot``, or None when it is full, closed or another
    transaction holds the sentence (the caller serves something else).
    ``beyond_target``: full or closed will do (ESA: a document begun is
    served whole; the judgments beyond the target count as such)."""
    lock, take = (_LOCK_ANY_SENTENCE, _TAKE_ANY_SLOT) if beyond_target else (_LOCK_SENTENCE, _TAKE_SLOT)
    if execute(lock, {"sentence_id": sentence_id}).scalar() is None:
        return None
    slots = [slot for slot in execute(_ANY_SLOTS if beyond_target else _OPEN_SLOTS, {"sentence_id": sentence_id}).all()
             if slot.system_a_id == system_id]
    if not slots:
        return None
    slot = slots[0]
    taken = execute(
        take,
        {"slot_id": slot.id, "text_sentence": sentence_id, "text_system_a": slot.system_a_id,
         "text_system_b": slot.system_b_id},
    ).first()
    if taken is None:
        return None
    bump_sentence(sentence_id, 1, deferred=True)
    return slot, sentence_id, tuple(taken)


# Sequential assignment (issue 32): the pair first, then its emptiest slot on
# a sentence the volunteer has not seen, in the pair's random order
# (ix_slots_pair), the sentence locked as _NEXT_SENTENCE_SKIP.
_OPEN_PAIRS = (
    select(PairTotal.system_a_id, PairTotal.system_b_id, PairTotal.collected)
    .where(PairTotal.campaign_id == bindparam("campaign_id"), PairTotal.is_open.is_(True),
           PairTotal.system_b_id.is_not(None))
)
_PAIR_SLOT = (
    select(Slot.id, Slot.sentence_id)
    .join(Sentence, Sentence.id == Slot.sentence_id)
    .where(Slot.system_a_id == bindparam("a"), Slot.system_b_id == bindparam("b"), Slot.pending < Slot.target,
           Slot.identical.is_(False), Sentence.is_open.is_(True), ~_seen)
    .order_by(Slot.pending, Slot.shuffle)
    .limit(1)
)
_PAIR_SLOT_SKIP = _PAIR_SLOT.with_for_update(of=Sentence, skip_locked=True)
# The same from a random point of the pair's order at its emptiest level (the
# level found by the subquery, then one seek): the sentences a keen volunteer
# has seen gather at the start of the order (nobody else may take them
# yet), so a walk from there grew with their answers (2x at 5,000).
_LEVEL = (
    select(func.min(Slot.pending))
    .where(Slot.system_a_id == bindparam("a"), Slot.system_b_id == bindparam("b"), Slot.pending < Slot.target,
           Slot.identical.is_(False))
    .scalar_subquery()
)
_PAIR_SLOT_FROM_SKIP = (
    _PAIR_SLOT.where(Slot.pending == _LEVEL, Slot.shuffle >= bindparam("start"))
    .with_for_update(of=Sentence, skip_locked=True)
)
TakenSlot = namedtuple("TakenSlot", "id system_a_id system_b_id")  # as take_slot's slot row


def take_pair_slot(campaign, participation, rng, first):
    """Reserve a slot of the first open pair in the order ``first(counts,
    rng)`` gives (the indexes of the pairs' judgment counts; pairwise's
    ``plan.fewest_first``) on a sentence the volunteer has not seen: as
    ``take_slot``, or None when no open pair has one left for them."""
    pairs = execute(_OPEN_PAIRS, {"campaign_id": campaign.id}).all()
    order = [pairs[i] for i in first([pair.collected for pair in pairs], rng)]
    for pause in (0,) + BUSY_PAUSES:
        if pause:
            time.sleep(pause * random.uniform(0.5, 1.5))
        for a, b, _collected in order:
            params = {"a": a, "b": b, "participation_id": participation.id}
            found = (execute(_PAIR_SLOT_FROM_SKIP, {**params, "start": rng.getrandbits(30)}).first()
                     or execute(_PAIR_SLOT_SKIP, params).first())
            if found is None:
                continue
            taken = execute(_TAKE_SLOT, {"slot_id": found.id, "text_sentence": found.sentence_id,
                                         "text_system_a": a, "text_system_b": b}).first()
            if taken is not None:
                bump_sentence(found.sentence_id, 1, deferred=True)
                return TakenSlot(found.id, a, b), found.sentence_id, tuple(taken)
        # Nothing free: left at all, or held by other transactions for a moment (see _next_sentence)?
        if _is_sqlite() or not any(execute(_PAIR_SLOT, {"a": a, "b": b, "participation_id": participation.id}).first()
                                   for a, b, _collected in order):
            return None
    raise AllHeld()
