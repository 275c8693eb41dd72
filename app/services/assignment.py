"""Who sees what next, and what an answer does (paper, section 3).

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
sentence left is held, it starts again rather than wait (``AllHeld``). SQLite has one writer at a time and ignores these
clauses. Unique constraints back the rules: one item per position and per
sentence for a volunteer, one ticket per number. The campaign's own
counters, which every judgment changes, are changed last, just before the
commit (``count_for_campaign``): its row is then locked only while the
transaction commits, never while it waits for another lock.

On PostgreSQL the rows that many volunteers' answers change (the answered
sentence's and slot's counters, the campaign's counters and ticket number)
are written with the COMMIT itself, in one pipelined round trip
(``prepared.at_commit``, ``prepared.commit_after``), in that order. A gevent
process runs many requests between two round trips of one transaction, so
a lock taken earlier would be held all that while by a transaction that is
only waiting for its turn.
"""
import random
import secrets
import time
import weakref
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import String, bindparam, case, cast, event, exists, func, insert, literal_column, select, update
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, aliased
from sqlalchemy.orm.attributes import set_committed_value

from ..extensions import db
from ..prepared import Prepared, at_commit, commit_after, dialect_name
from ..models import Campaign, Control, Item, Output, Participation, Sentence, Slot, Ticket, as_loaded
from . import quality, rewards

CHOICES = ("left", "right", "equal")

# The statements of the judging path are built once, with bound parameters:
# on SQLite, building a statement costs more than running it.
# An update takes the lock (the row's on PostgreSQL, the write lock on
# SQLite) and returns the row as it is under that lock, in one statement.
_participations = Participation.__table__
_by_id = _participations.c.id == bindparam("lock_participation_id")
_by_user = (_participations.c.user_id == bindparam("lock_user_id")) & (
    _participations.c.campaign_id == bindparam("lock_campaign_id")
)


def _lock_statement(which, participation_id):
    """The lock, returning the row and the volunteer's valid ticket numbers
    (comma-separated). The tickets' subquery names the participation by
    bound parameters, not by correlation: SQLAlchemy writes RETURNING
    columns unqualified on SQLite, where a correlated ``id`` would be the
    ticket's."""
    tickets = (
        select(func.aggregate_strings(cast(Ticket.number, String), literal_column("','")))
        .where(Ticket.participation_id == participation_id, Ticket.voided_at.is_(None))
        .scalar_subquery()
    )
    return (
        update(_participations)
        .where(which)
        .values(items_served=_participations.c.items_served)
        .returning(*_participations.c, tickets)
    )


_LOCK_BY_ID = Prepared(_lock_statement(_by_id, bindparam("lock_participation_id")))
_LOCK_BY_USER = Prepared(_lock_statement(_by_user, select(_participations.c.id).where(_by_user).scalar_subquery()))
_PARTICIPATION_COLUMNS = tuple(column.key for column in _participations.c)
_CURRENT_ITEM = Prepared(
    select(*Item.__table__.c)
    .where(Item.participation_id == bindparam("participation_id"), Item.answered_at.is_(None))
    .order_by(Item.position.desc())
    .limit(1)
)
_new_pending = Sentence.pending + bindparam("pending_delta", type_=Sentence.pending.type)
_BUMP_SENTENCE = Prepared(
    update(Sentence)
    .where(Sentence.id == bindparam("sentence_id"))
    .values(
        pending=_new_pending,
        collected=Sentence.collected + bindparam("collected_delta", type_=Sentence.collected.type),
        is_open=case((_new_pending < Sentence.capacity, True), else_=False),
    )
)
_BUMP_SLOT = Prepared(
    update(Slot)
    .where(Slot.id == bindparam("slot_id"))
    .values(
        pending=Slot.pending + bindparam("pending_delta", type_=Slot.pending.type),
        collected=Slot.collected + bindparam("collected_delta", type_=Slot.collected.type),
    )
)
_LOCK_SENTENCE = select(Sentence.id).where(Sentence.id == bindparam("sentence_id"))
_LOCK_SENTENCE_WAIT = _LOCK_SENTENCE.with_for_update()
_LOCK_SENTENCE_SKIP = _LOCK_SENTENCE.with_for_update(skip_locked=True)


def _read(statement, params):
    """Run a statement on the session's connection, without flushing first:
    for reads and updates of rows that the judging path changes only through
    SQL, never as pending objects (an ORM-enabled statement costs more).
    The judging path's own statements are ``Prepared`` (app/prepared.py)."""
    if isinstance(statement, Prepared):
        return statement.run(params)
    return db.session.connection().execute(statement, params)


def _is_sqlite():
    return dialect_name() == "sqlite"


_COUNTS = "bozka_campaign_counts"


def count_for_campaign(campaign_id, collected=0, over_collected=0, over_slot=None):
    """Change the campaign's judgment counters when the transaction commits.
    ``over_slot``: a slot just collected (by a statement run before the
    counters); one more over-collected judgment if it now has more than its
    target (decided by the database, at the commit)."""
    counts = db.session.info.setdefault(_COUNTS, {})
    before = counts.get(campaign_id, (0, 0, None))
    if over_slot is not None and before[2] is not None:
        raise ValueError("one collected slot per campaign and transaction")
    counts[campaign_id] = (before[0] + collected, before[1] + over_collected, over_slot or before[2])


_COUNT_JUDGMENTS = Prepared(
    update(Campaign)
    .where(Campaign.id == bindparam("campaign_id"))
    .values(
        collected_judgments=Campaign.collected_judgments
        + bindparam("collected", type_=Campaign.collected_judgments.type),
        over_collected=Campaign.over_collected
        + bindparam("over", type_=Campaign.over_collected.type)
        + select(func.count())
        .where(Slot.id == bindparam("over_slot", type_=Slot.id.type), Slot.collected > Slot.target)
        .scalar_subquery(),
    )
)


@event.listens_for(Session, "after_soft_rollback")
def _forget_campaign_counts(session, _previous_transaction):
    session.info.pop(_COUNTS, None)


def lock_participation(participation_id):
    """Serialise one volunteer's requests; returns the fresh participation."""
    return lock_volunteer(participation_id)[0]


def lock_volunteer(participation_id=None, *, user_id=None, campaign_id=None):
    """Serialise one volunteer's requests (by participation id, or by user
    and campaign); returns the fresh participation and the volunteer's valid
    ticket numbers, in one statement. (None, ()) if there is no such
    participation (a user who has not joined the campaign)."""
    if participation_id is not None:
        row = _read(_LOCK_BY_ID, {"lock_participation_id": participation_id}).first()
    else:
        row = _read(_LOCK_BY_USER, {"lock_user_id": user_id, "lock_campaign_id": campaign_id}).first()
    if row is None:
        return None, ()
    participation = as_loaded(Participation, dict(zip(_PARTICIPATION_COLUMNS, row)))
    tickets = row[-1]
    return participation, tuple(sorted(int(number) for number in tickets.split(","))) if tickets else ()


def current_item(participation_id):
    """The item served and not yet answered, if any (there is at most one)."""
    row = _read(_CURRENT_ITEM, {"participation_id": participation_id}).first()
    return as_loaded(Item, dict(zip(_ITEM_COLUMNS, row))) if row is not None else None


def _run_or_defer(statement, params, deferred):
    """Run a counter statement now, or with the commit (``prepared.at_commit``)."""
    if deferred:
        at_commit(statement, params)
    else:
        _read(statement, params)


def _bump_sentence(sentence_id, pending_delta, collected_delta=0, deferred=False):
    _run_or_defer(
        _BUMP_SENTENCE,
        {"sentence_id": sentence_id, "pending_delta": pending_delta, "collected_delta": collected_delta},
        deferred,
    )


def lock_sentence(sentence_id, skip_locked=False):
    """Lock a sentence's row (and so its slots: see the module docstring).
    With ``skip_locked``, return False at once if another transaction holds it.
    SQLite ignores row locks (its transaction holds the one write lock), so
    nothing is run there."""
    if _is_sqlite():
        return True
    query = _LOCK_SENTENCE_SKIP if skip_locked else _LOCK_SENTENCE_WAIT
    return db.session.execute(query, {"sentence_id": sentence_id}).first() is not None


def _change_holds(slot_id, sentence_id, pending_delta, collected_delta=0, deferred=False):
    """Move a slot's and its sentence's counters together (sentence first),
    now or, ``deferred``, with the commit."""
    _bump_sentence(sentence_id, pending_delta, collected_delta, deferred)
    _run_or_defer(
        _BUMP_SLOT, {"slot_id": slot_id, "pending_delta": pending_delta, "collected_delta": collected_delta}, deferred
    )


def release_hold(item):
    """Give an unanswered item's slot back to the pool, exactly once even
    when two server processes expire the same reservation."""
    released = db.session.execute(
        update(Item)
        .where(Item.id == item.id, Item.holding.is_(True))
        .values(holding=False)
        .execution_options(synchronize_session=False)
    ).rowcount
    if released and item.slot_id is not None:
        _change_holds(item.slot_id, item.sentence_id, -1)
    db.session.refresh(item)


def release_expired(campaign_id, now, timeout=None):
    """Free the slots of reservations that timed out (an indexed look-up).

    Every request that serves an item does this, in whatever process: it
    never waits, skipping reservations and sentences that another
    transaction holds (that one, or a later request, frees them), and each
    hold is released once (``release_hold``).

    Given the campaign's ``timeout`` (seconds), the look-up is skipped while
    this process knows that no reservation can have expired yet (see
    ``_no_expiry_before``)."""
    memo = _expiry_memo()
    if timeout is not None and memo.get(campaign_id, _NEVER)[0] <= now < _no_expiry_before(memo, campaign_id, timeout):
        return 0
    earliest = _read(_EARLIEST_EXPIRY, {"campaign_id": campaign_id}).scalar()
    if earliest is None or earliest >= now:
        memo[campaign_id] = (now, earliest)
        return 0  # the usual case, answered by one index look-up
    memo.pop(campaign_id, None)
    expired = db.session.scalars(
        select(Item)
        .where(
            Item.campaign_id == campaign_id,
            Item.holding.is_(True),
            Item.expires_at < now,
        )
        .order_by(Item.id)
        .with_for_update(skip_locked=True)
    ).all()
    released = 0
    for item in expired:
        if item.sentence_id is not None and not lock_sentence(item.sentence_id, skip_locked=True):
            continue
        release_hold(item)
        released += 1
    return released


_EARLIEST_EXPIRY = Prepared(
    select(func.min(Item.expires_at).label("earliest")).where(
        Item.campaign_id == bindparam("campaign_id"), Item.holding.is_(True)
    )
)  # one look-up in ix_items_hold

# Per database (engine) and campaign: when this process last found no
# expired reservation, and the earliest expiry of those it found.
_expiry_memos = weakref.WeakKeyDictionary()
_NEVER = (datetime.max, None)
# Reservations made by requests that were under way during the look-up
# (their time taken before it, their row written after) expire no earlier
# than the look-up's time plus the timeout, minus at most this much.
EXPIRY_MARGIN = timedelta(seconds=60)


def _expiry_memo():
    bind = db.session.get_bind()
    memo = _expiry_memos.get(bind)
    if memo is None:
        memo = _expiry_memos[bind] = {}
    return memo


def _no_expiry_before(memo, campaign_id, timeout):
    """No reservation of the campaign expires before this time: those seen
    at the last look-up expire at ``earliest`` or later, and those made
    since at the look-up's time plus the (current) timeout or later."""
    checked_at, earliest = memo[campaign_id]
    bound = checked_at + max(timedelta(seconds=timeout) - EXPIRY_MARGIN, timedelta(0))
    return bound if earliest is None else min(bound, earliest)


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
_PREPARED_NEXT, _PREPARED_NEXT_SKIP = Prepared(_NEXT_SENTENCE), Prepared(_NEXT_SENTENCE_SKIP)
_OPEN_SLOTS = Prepared(
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
_TAKE_SLOT = Prepared(
    update(Slot)
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
    skipping = _PREPARED_NEXT_SKIP
    if skip:
        skipping = _NEXT_SENTENCE_SKIP.where(Sentence.id.not_in(skip))
    sentence_id = _read(skipping, params).scalar()
    if sentence_id is not None or _is_sqlite():
        return sentence_id
    # Nothing free: is everything left held by others (they commit within
    # milliseconds), or is nothing left at all? Never queue for the lock:
    # the holder may hold it while looking for the sentence this
    # transaction holds (the one just answered), and so on in a circle.
    plain = _NEXT_SENTENCE.where(Sentence.id.not_in(skip)) if skip else _PREPARED_NEXT
    for pause in BUSY_PAUSES:
        if _read(plain, params).scalar() is None:
            return None
        time.sleep(pause * random.uniform(0.5, 1.5))
        sentence_id = _read(skipping, params).scalar()
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
        slots = _read(_OPEN_SLOTS, {"sentence_id": sentence_id}).all()
        slot = choose_slot(slots, rng)
        if slot is not None:
            taken = _read(
                _TAKE_SLOT,
                {
                    "slot_id": slot.id,
                    "text_sentence": sentence_id,
                    "text_system_a": slot.system_a_id,
                    "text_system_b": slot.system_b_id,
                },
            ).first()
            if taken is not None:
                # Locked above; with the commit, a round trip fewer while it is held.
                _bump_sentence(sentence_id, 1, deferred=True)
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
_CONTROLS_SEEN = Prepared(
    select(Control.id, _last_seen.c.position)
    .select_from(Control.__table__.outerjoin(_last_seen, _last_seen.c.control_id == Control.id))
    .where(Control.campaign_id == bindparam("campaign_id"))
    .order_by(Control.id)
)


def _serve_control(campaign, participation, rng):
    rows = _read(_CONTROLS_SEEN, {"campaign_id": campaign.id, "participation_id": participation.id}).all()
    control_ids = [cid for cid, _position in rows]
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
        release_expired(campaign.id, now, campaign.reservation_timeout)
        position = participation.items_served + 1
        if quality.is_control_position(position, campaign.control_first, campaign.control_every):
            fields = _serve_control(campaign, participation, rng)
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
    # One INSERT ... RETURNING instead of a unit-of-work flush; the object
    # is then attached as the row it is (no read back).
    item = as_loaded(Item, {"id": _read(_INSERT_ITEM, values).one()[0], **values})
    item.texts = texts
    db.session.info.setdefault(_INSERTED, []).append(item)
    set_counters(participation, items_served=position)
    return item


_COUNTERS = ("items_served", "items_answered", "reached_count_at", "controls_answered", "controls_failed")
_SAVE_COUNTERS = Prepared(
    update(Participation)
    .where(Participation.id == bindparam("participation_id"))
    .values(**{key: bindparam(f"new_{key}", type_=getattr(Participation, key).type) for key in _COUNTERS})
)
_PENDING_COUNTERS = "bozka_participation_counters"


def set_counters(participation, **values):
    """Change a locked volunteer's counters: in the object at once, in the
    database by one statement when the transaction commits (cheaper than
    the unit of work's flush of the object, which every answer would pay)."""
    for key, value in values.items():
        set_committed_value(participation, key, value)
    db.session.info.setdefault(_PENDING_COUNTERS, {})[participation.id] = participation


@event.listens_for(Session, "before_commit")
def _write_counters(session):
    """The counters kept for the commit: the volunteers', then the
    campaigns' (the row every judgment changes: the last one locked). On
    PostgreSQL they travel with the COMMIT itself (``prepared.commit_after``)."""
    volunteers = session.info.pop(_PENDING_COUNTERS, None) or {}
    campaigns = session.info.pop(_COUNTS, None) or {}
    statements = [
        (_SAVE_COUNTERS, {"participation_id": participation_id,
                          **{f"new_{key}": getattr(participation, key) for key in _COUNTERS}})
        for participation_id, participation in sorted(volunteers.items())
    ] + [
        (_COUNT_JUDGMENTS, {"campaign_id": campaign_id, "collected": collected, "over": over, "over_slot": slot})
        for campaign_id, (collected, over, slot) in sorted(campaigns.items())
        if collected or over or slot
    ]
    commit_after(statements)


@event.listens_for(Session, "after_soft_rollback")
def _forget_counters(session, _previous_transaction):
    session.info.pop(_PENDING_COUNTERS, None)


# Every column of a new item but its id, as the model's defaults make it.
_NEW_ITEM = {
    column.key: None for column in Item.__table__.columns if column.key != "id"
} | {"control_reused": False, "holding": False, "too_fast": False}
# Named columns: the id is left to the database (PostgreSQL refuses NULL).
_INSERT_ITEM = Prepared(
    insert(Item)
    .values({key: bindparam(key, type_=Item.__table__.c[key].type) for key in _NEW_ITEM})
    .returning(Item.id)
)
_INSERTED = "bozka_inserted_items"


@event.listens_for(Session, "after_soft_rollback")
def _forget_inserted(session, _previous_transaction):
    """Items inserted in a transaction that rolled back never existed: drop
    them from the session, as it drops the objects it inserted itself."""
    for item in session.info.pop(_INSERTED, ()):
        if item in session:
            session.expunge(item)


@event.listens_for(Session, "after_commit")
def _keep_inserted(session):
    session.info.pop(_INSERTED, None)


def current_or_next(campaign, participation, now, rng):
    """What the volunteer should see now (serving a new item if needed)."""
    item = current_item(participation.id)
    if item is None and campaign.is_serving_at(now) and not participation.is_dismissed:
        item = serve_next(campaign, participation, now, rng)
    return item


@dataclass
class Outcome:
    status: str  # "accepted", "stale", "dismissed"
    item: Item = None
    new_ticket: int = None  # the number of a ticket won (on PostgreSQL made with the commit: None)
    dismissal_reason: str = None
    extra: dict = field(default_factory=dict)


def submit(campaign, participation, token, choice, now):
    """Record the answer to the volunteer's current item, exactly once.

    A token that is not the current item's (a double click, a resubmitted
    form, a replayed request) changes nothing and returns "stale".
    """
    if choice not in CHOICES:
        raise ValueError("invalid choice")
    # The current item with the two translations it showed (for the reading
    # speed), in one statement.
    row = _read(_CURRENT_ITEM_TEXTS, {"participation_id": participation.id}).first()
    item = as_loaded(Item, dict(zip(_ITEM_COLUMNS, row))) if row is not None else None
    if participation.is_dismissed or item is None or item.token != token:
        return Outcome("stale")
    passed = quality.control_passed(item.better_left, choice) if item.is_control else None
    seconds = max(0.0, (now - item.served_at).total_seconds())
    too_fast = bool(campaign.fast_seconds_per_word) and quality.too_fast(
        seconds,
        sum(len(text.split()) for text in row[len(_ITEM_COLUMNS):] if text is not None),
        campaign.fast_seconds_per_word,
    )
    answer = dict(answered_at=now, choice=choice, seconds=seconds, passed=passed, holding=False, too_fast=too_fast)
    answered = _read(_ANSWER, {"item_id": item.id, **{f"new_{k}": v for k, v in answer.items()}}).rowcount
    if not answered:
        return Outcome("stale")
    if item.slot_id is not None:
        # A held slot turns from pending into collected; an expired hold
        # comes back as a judgment beyond the reservation.
        # With the commit, in the order of the module docstring (sentence,
        # slot, campaign): on PostgreSQL these shared rows are then locked
        # only while the server runs the transaction's last round trip. The
        # campaign counts an over-collected judgment if the slot now has
        # more than its target (it was complete before this answer).
        _change_holds(item.slot_id, item.sentence_id, 0 if item.holding else 1, 1, deferred=True)
        count_for_campaign(campaign.id, collected=1, over_slot=item.slot_id)
    # The row now holds exactly these values (the update above matched it).
    for key, value in answer.items():
        set_committed_value(item, key, value)
    counters = dict(items_answered=item.position, reached_count_at=now)
    if item.is_control:
        counters.update(
            controls_answered=participation.controls_answered + 1,
            controls_failed=participation.controls_failed + (0 if passed else 1),
        )
    set_counters(participation, **counters)
    reason = _check_controls(campaign, participation, item)
    if reason:
        dismiss(campaign, participation, reason, now)
        return Outcome("dismissed", item=item, dismissal_reason=reason)
    ticket = None
    if rewards.earns_ticket(item.position, campaign.raffle_every):
        ticket = rewards.award_ticket(campaign.id, participation.id, item.position, now)
    return Outcome("accepted", item=item, new_ticket=ticket)


_ANSWER = Prepared(
    update(Item)
    .where(Item.id == bindparam("item_id"), Item.answered_at.is_(None))
    .values(
        **{
            key: bindparam(f"new_{key}", type_=getattr(Item, key).type)
            for key in ("answered_at", "choice", "seconds", "passed", "holding", "too_fast")
        }
    )
)


_shown_left, _shown_right = aliased(Output), aliased(Output)
_items = Item.__table__
_ITEM_COLUMNS = tuple(column.key for column in _items.c)
# The current item's row (attached as an object by models.as_loaded, cheaper than
# the ORM's loading) with the texts it showed.
_CURRENT_ITEM_TEXTS = Prepared(
    select(*_items.c, _shown_left.text, _shown_right.text, Control.better, Control.worse)
    .select_from(_items)
    .outerjoin(
        _shown_left,
        (_shown_left.sentence_id == _items.c.sentence_id) & (_shown_left.system_id == _items.c.left_system_id),
    )
    .outerjoin(
        _shown_right,
        (_shown_right.sentence_id == _items.c.sentence_id) & (_shown_right.system_id == _items.c.right_system_id),
    )
    .outerjoin(Control, Control.id == _items.c.control_id)
    .where(_items.c.participation_id == bindparam("participation_id"), _items.c.answered_at.is_(None))
    .order_by(_items.c.position.desc())
    .limit(1)
)


def answered_today(participation_id, now):
    start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return db.session.scalar(
        select(func.count(Item.id)).where(
            Item.participation_id == participation_id, Item.answered_at >= start
        )
    )


def daily_cap_reached(campaign, participation, now):
    return bool(campaign.daily_cap) and answered_today(participation.id, now) >= campaign.daily_cap


_CONTROL_RESULTS = Prepared(
    select(Item.passed)
    .where(
        Item.participation_id == bindparam("participation_id"),
        Item.control_id.is_not(None),
        Item.answered_at.is_not(None),
    )
    .order_by(Item.position)
)


def _check_controls(campaign, participation, item):
    """Why the volunteer must stop now (``quality.dismissal_reason``), or None.
    The results are read only where the rule can dismiss."""
    if not quality.may_dismiss(
        item.position, item.is_control, participation.controls_answered,
        first=campaign.control_first, check_every=campaign.check_every,
    ):
        return None
    results = [row[0] for row in _CONTROL_RESULTS.run({"participation_id": participation.id}).all()]
    return quality.dismissal_reason(
        item.position,
        item.is_control,
        results,
        first=campaign.control_first,
        check_every=campaign.check_every,
        cutoff=campaign.cutoff,
        window=campaign.control_window,
    )


def dismiss(campaign, participation, reason, now):
    """Stop a volunteer: discard (never delete) their judgments, free slots."""
    participation.dismissed_at = now
    participation.dismissed_reason = reason
    items = db.session.scalars(
        select(Item).where(Item.participation_id == participation.id, Item.discarded_at.is_(None))
    ).all()
    discarded = 0
    for item in items:
        if item.answered_at is None:
            release_hold(item)
            continue
        item.discarded_at = now
        item.discarded_reason = reason
        if item.slot_id is not None:
            _change_holds(item.slot_id, item.sentence_id, -1, -1)
            discarded += 1
    if discarded:
        count_for_campaign(campaign.id, collected=-discarded)
    rewards.void_tickets(participation.id, now)

