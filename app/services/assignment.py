"""Who sees what next (paper, section 3).

Every function here takes values (campaign, participation, time, random
source) and works inside the caller's transaction; the caller commits.
The first statement of a volunteer's transaction is ``lock_participation``:
on PostgreSQL it locks the volunteer's row, on SQLite it takes the write
lock, so one volunteer's requests are serialised and the counters below are
only ever changed under a lock.

Several server processes on PostgreSQL: a sentence's row is locked before
any of its slots' rows, always in that order, so counters move together and
transactions do not deadlock on them. A volunteer looking for work skips
sentences and expired reservations that another transaction holds right now
(``FOR UPDATE SKIP LOCKED``) instead of queueing behind it; when every
sentence left is held, it starts again rather than wait (``AllHeld``).
SQLite has one writer at a time and ignores these clauses. Unique constraints back the rules: one item per position and per
sentence for a volunteer, one ticket per number. The campaign's own
counters, which every judgment changes, are changed last, just before the
commit (``counters.count_for_campaign``): its row is then locked only
while the transaction commits, never while it waits for another lock.

The counters are in ``counters``, the reservations in ``reservations``, what
an answer does in ``answers``.
"""
import random
import secrets
import time
from datetime import timedelta

from sqlalchemy import String, bindparam, cast, exists, func, insert, literal_column, select, update
from sqlalchemy.exc import OperationalError

from ..database import dialect_name, execute
from ..extensions import db
from ..models import Control, Item, Output, Participation, Sentence, Slot, Ticket
from . import quality, reservations
from .counters import bump_sentence, set_counters

# The statements of the judging path are built once, with bound parameters
# (SQLAlchemy compiles each once and caches it).
# An update takes the lock (the row's on PostgreSQL, the write lock on
# SQLite) and returns the row as it is under that lock, in one statement.
_participations = Participation.__table__
_by_id = _participations.c.id == bindparam("lock_participation_id")
_by_user = (_participations.c.user_id == bindparam("lock_user_id")) & (
    _participations.c.campaign_id == bindparam("lock_campaign_id")
)


def _lock_statement(which, participation_id):
    """The lock, returning the participation and the volunteer's valid ticket
    numbers (comma-separated). The tickets' subquery names the participation
    by bound parameters, not by correlation: SQLAlchemy writes RETURNING
    columns unqualified on SQLite, where a correlated ``id`` would be the
    ticket's."""
    tickets = (
        select(func.aggregate_strings(cast(Ticket.number, String), literal_column("','")))
        .where(Ticket.participation_id == participation_id, Ticket.voided_at.is_(None))
        .scalar_subquery()
    )
    return (
        update(Participation)
        .where(which)
        .values(items_served=Participation.items_served)
        .returning(Participation, tickets)
        .execution_options(synchronize_session=False, populate_existing=True)
    )


_LOCK_BY_ID = _lock_statement(_by_id, bindparam("lock_participation_id"))
_LOCK_BY_USER = _lock_statement(_by_user, select(_participations.c.id).where(_by_user).scalar_subquery())
_CURRENT_ITEM = (
    select(Item)
    .where(Item.participation_id == bindparam("participation_id"), Item.answered_at.is_(None))
    .order_by(Item.position.desc())
    .limit(1)
    .execution_options(populate_existing=True)
)


def lock_participation(participation_id):
    """Serialise one volunteer's requests; returns the fresh participation."""
    return lock_volunteer(participation_id)[0]


def lock_volunteer(participation_id=None, *, user_id=None, campaign_id=None):
    """Serialise one volunteer's requests (by participation id, or by user
    and campaign); returns the fresh participation and the volunteer's valid
    ticket numbers, in one statement. (None, ()) if there is no such
    participation (a user who has not joined the campaign)."""
    if participation_id is not None:
        row = db.session.execute(_LOCK_BY_ID, {"lock_participation_id": participation_id}).first()
    else:
        row = db.session.execute(_LOCK_BY_USER, {"lock_user_id": user_id, "lock_campaign_id": campaign_id}).first()
    if row is None:
        return None, ()
    participation, tickets = row
    return participation, tuple(sorted(int(number) for number in tickets.split(","))) if tickets else ()


def current_item(participation_id):
    """The item served and not yet answered, if any (there is at most one)."""
    return db.session.scalars(_CURRENT_ITEM, {"participation_id": participation_id}).first()


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


def _next_sentence(campaign_id, participation_id, skip):
    """The id of the fullest open sentence the volunteer has not seen, locked.
    One that another volunteer's transaction holds is passed over (the next
    fullest is as good); when every candidate is held, see ``AllHeld``."""
    params = {"campaign_id": campaign_id, "participation_id": participation_id}
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


def _serve_test(campaign, participation, rng):
    skip = set()
    for _attempt in range(20):
        sentence_id = _next_sentence(campaign.id, participation.id, skip)
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
                source, text_a, text_b = taken
                pair = [(slot.system_a_id, text_a), (slot.system_b_id, text_b)]
                rng.shuffle(pair)
                return dict(
                    slot_id=slot.id,
                    sentence_id=sentence_id,
                    left_system_id=pair[0][0],
                    right_system_id=pair[1][0],
                    holding=True,
                    texts=(source, pair[0][1], pair[1][1]),
                )
        skip.add(sentence_id)
    return None


# Where the volunteer last saw each control: one pass over their controls
# (the index on participation and control). A correlated max() per control
# took SQLite's index on participation and position instead, reading all
# the volunteer's items once per control (250 µs at 400 items, growing).
_last_seen = (
    select(Item.control_id, func.max(Item.position).label("position"))
    .where(Item.participation_id == bindparam("participation_id"), Item.control_id.is_not(None))
    .group_by(Item.control_id)
    .subquery("last_seen")
)
# Every control of the campaign, with the position where the volunteer last saw it (or None).
_CONTROLS_SEEN = (
    select(Control.id, _last_seen.c.position)
    .select_from(Control.__table__.outerjoin(_last_seen, _last_seen.c.control_id == Control.id))
    .where(Control.campaign_id == bindparam("campaign_id"))
    .order_by(Control.id)
)


def _serve_control(campaign, participation, rng, seed):
    rows = execute(_CONTROLS_SEEN, {"campaign_id": campaign.id, "participation_id": participation.id}).all()
    # Only the volunteer's own subset of the pool (all of it by default).
    control_ids = quality.volunteer_controls([cid for cid, _position in rows], campaign.controls_per_volunteer, seed)
    last_seen = {cid: position for cid, position in rows if position is not None}
    unseen = [cid for cid in control_ids if cid not in last_seen]
    reused = not unseen
    if unseen:
        control_id = rng.choice(unseen)
    else:
        # Every control seen: reuse the one seen longest ago, and record it.
        control_id = min(control_ids, key=lambda cid: last_seen[cid])
        if not participation.controls_seen_all:  # set again, it would cost a flush at every control
            participation.controls_seen_all = True
    return dict(control_id=control_id, better_left=rng.random() < 0.5, control_reused=reused)


def serve_next(campaign, participation, now, rng):
    """Serve the volunteer's next item, or None when nothing is left.

    Assumes the participation is locked and has no unanswered item.
    """
    # Nothing pending in the session bears on the choice (the volunteer's
    # counters and the campaign's are not read): it is written by the one
    # flush below, with the new item, instead of a flush per statement.
    with db.session.no_autoflush:
        reservations.release_expired(campaign.id, now, campaign.reservation_timeout)
        position = participation.items_served + 1
        seed = quality.volunteer_seed(campaign.pseudonym_salt, participation.id)
        if quality.is_control_position(
            position, campaign.control_first, campaign.control_every, campaign.control_placement, seed
        ):
            fields = _serve_control(campaign, participation, rng, seed)
        else:
            fields = _serve_test(campaign, participation, rng)
    if fields is None:
        participation.finished_at = participation.finished_at or now
        return None
    texts = fields.pop("texts", None)
    values = dict(
        _NEW_ITEM,
        campaign_id=campaign.id,
        participation_id=participation.id,
        position=position,
        token=secrets.token_hex(8),
        served_at=now,
        expires_at=now + timedelta(seconds=campaign.reservation_timeout),
        **fields,
    )
    # A Core INSERT: the item is only shown, never changed, in this
    # transaction, so it is returned as a plain object outside the session
    # (the ORM's insert, or its flush, cost more than choosing the item).
    item = Item(id=execute(_INSERT_ITEM, values).scalar_one(), **values)
    item.texts = texts
    set_counters(participation, items_served=position)
    return item


# Every column of a new item but its id, as the model's defaults make it.
_NEW_ITEM = {
    column.key: None for column in Item.__table__.columns if column.key != "id"
} | {"control_reused": False, "holding": False, "too_fast": False}
_INSERT_ITEM = insert(Item.__table__).returning(Item.id)


def answered_today(participation_id, now):
    start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return db.session.scalar(
        select(func.count(Item.id)).where(
            Item.participation_id == participation_id, Item.answered_at >= start
        )
    )


def daily_cap_reached(campaign, participation, now):
    return bool(campaign.daily_cap) and answered_today(participation.id, now) >= campaign.daily_cap
