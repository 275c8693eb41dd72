"""Reservations: an item served holds its slot until it is answered or the
campaign's reservation timeout passes; then the slot goes back to the pool.

Every request that serves an item frees the reservations that timed out,
in whatever process: it never waits, skipping reservations and sentences
that another transaction holds (that one, or a later request, frees them),
and each hold is released once (``release_hold``).
"""
import weakref
from datetime import datetime, timedelta

from sqlalchemy import bindparam, func, select, update

from ..database import dialect_name, execute
from ..extensions import db
from ..models import Item, Sentence, Slot
from .counters import change_holds

_LOCK_SENTENCE = select(Sentence.id).where(Sentence.id == bindparam("sentence_id"))
_LOCK_SENTENCE_WAIT = _LOCK_SENTENCE.with_for_update()
_LOCK_SENTENCE_SKIP = _LOCK_SENTENCE.with_for_update(skip_locked=True)
_EARLIEST_EXPIRY = select(func.min(Item.expires_at).label("earliest")).where(
    Item.campaign_id == bindparam("campaign_id"), Item.holding.is_(True)
)  # one look-up in ix_items_hold

# Per database (engine) and campaign: when this process last found no
# expired reservation, and the earliest expiry of those it found.
_expiry_memos = weakref.WeakKeyDictionary()
_NEVER = (datetime.max, None)
# Reservations made by requests that were under way during the look-up
# (their time taken before it, their row written after) expire no earlier
# than the look-up's time plus the timeout, minus at most this much.
EXPIRY_MARGIN = timedelta(seconds=60)
# Reservations one request frees at most: when thousands expire together
# (a class closing its phones), each request pays for a bounded batch under
# the write lock and the next requests free the rest (issue 30: 2.7 s for 5,000 at once).
RELEASE_BATCH = 50


def lock_sentence(sentence_id, skip_locked=False):
    """Lock a sentence's row (and so its slots: see ``assignment``).
    With ``skip_locked``, return False at once if another transaction holds it.
    SQLite ignores row locks (its transaction holds the one write lock), so
    nothing is run there."""
    if dialect_name() == "sqlite":
        return True
    query = _LOCK_SENTENCE_SKIP if skip_locked else _LOCK_SENTENCE_WAIT
    return execute(query, {"sentence_id": sentence_id}).first() is not None


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
        change_holds(item.slot_id, item.sentence_id, -1)
    db.session.refresh(item)


def release_expired(campaign_id, now, timeout=None):
    """Free the slots of reservations that timed out (an indexed look-up),
    the oldest first, at most RELEASE_BATCH of them.

    Given the campaign's ``timeout`` (seconds), the look-up is skipped while
    this process knows that no reservation can have expired yet (see
    ``_no_expiry_before``)."""
    memo = _expiry_memo()
    if timeout is not None and memo.get(campaign_id, _NEVER)[0] <= now < _no_expiry_before(memo, campaign_id, timeout):
        return 0
    earliest = execute(_EARLIEST_EXPIRY, {"campaign_id": campaign_id}).scalar()
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
        .order_by(Item.expires_at, Item.id)  # along ix_items_hold: no sort of every expired one
        .limit(RELEASE_BATCH)
        .with_for_update(skip_locked=True)
    ).all()
    released = 0
    for item in expired:
        if item.sentence_id is not None and not lock_sentence(item.sentence_id, skip_locked=True):
            continue
        release_hold(item)
        released += 1
    return released


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


def release_pair(campaign_id, system_a_id, system_b_id):
    """Free the reservations of a system pair that gets no more judgments (a
    sequential campaign retired it: protocols/pairwise/decisions.py). An answer that
    still comes is counted, as after a timeout (``answers.submit``); a hold
    another transaction has locked lapses with the timeout instead."""
    held = db.session.scalars(
        select(Item)
        .join(Slot, Slot.id == Item.slot_id)
        .where(Item.campaign_id == campaign_id, Item.holding.is_(True),  # along ix_items_hold
               Slot.system_a_id == system_a_id, Slot.system_b_id == system_b_id)
        .with_for_update(of=Item, skip_locked=True)
    ).all()
    released = 0
    for item in held:
        if lock_sentence(item.sentence_id, skip_locked=True):
            release_hold(item)
            released += 1
    return released
