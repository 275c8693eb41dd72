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
sentence left is held, it starts again rather than wait (``slots.AllHeld``).
SQLite has one writer at a time and ignores these clauses. Unique
constraints back the rules: one item per position and per sentence for a
volunteer, one ticket per number. The campaign's own
counters, which every judgment changes, are changed last, just before the
commit (``counters.count_for_campaign``): its row is then locked only
while the transaction commits, never while it waits for another lock.

The counters are in ``counters``, the reservations in ``reservations``,
taking a slot in ``slots``, what an item is in the campaign's protocol
(``app.protocols``), what an answer does in ``answers``.
"""
import secrets
from datetime import timedelta

from sqlalchemy import String, bindparam, cast, exists, func, insert, literal_column, select, update

from .. import protocols
from ..database import execute
from ..extensions import db
from ..models import Item, Participation, Sentence, Ticket
from . import reservations
from .counters import set_counters
from .rewards import LATEST_SHOWN

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
    """The lock, returning the participation and the volunteer's latest
    valid ticket numbers (``rewards.LATEST_SHOWN``, comma-separated): a
    walk back along the tickets' index, the same cost at 5 tickets or 500
    (the count is the participation's ``tickets_valid``). The tickets'
    subquery names the participation by bound parameters, not by
    correlation: SQLAlchemy writes RETURNING columns unqualified on SQLite,
    where a correlated ``id`` would be the ticket's."""
    latest = (
        select(Ticket.number)
        .where(Ticket.participation_id == participation_id, Ticket.voided_at.is_(None))
        .order_by(Ticket.number.desc())
        .limit(LATEST_SHOWN)
        .subquery()
    )
    tickets = select(func.aggregate_strings(cast(latest.c.number, String), literal_column("','"))).scalar_subquery()
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
    .where(
        Item.participation_id == bindparam("participation_id"), Item.answered_at.is_(None), Item.skipped_at.is_(None)
    )
    .order_by(Item.position.desc())
    .limit(1)
    .execution_options(populate_existing=True)
)


def lock_participation(participation_id):
    """Serialise one volunteer's requests; returns the fresh participation."""
    return lock_volunteer(participation_id)[0]


def lock_volunteer(participation_id=None, *, user_id=None, campaign_id=None):
    """Serialise one volunteer's requests (by participation id, or by user
    and campaign); returns the fresh participation and the volunteer's latest
    valid ticket numbers (at most ``rewards.LATEST_SHOWN``, in the order
    won), in one statement. (None, ()) if there is no such participation (a
    user who has not joined the campaign)."""
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
        fields = protocols.of(campaign).serve(campaign, participation, position, rng)
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


_HELD_UNSEEN = (
    select(Sentence.id)
    .where(
        Sentence.campaign_id == bindparam("campaign_id"),
        Sentence.pending > Sentence.collected,
        ~exists().where(Item.participation_id == bindparam("participation_id"), Item.sentence_id == Sentence.id),
    )
    .limit(1)
)


def more_may_come(campaign_id, participation_id):
    """Whether a volunteer with nothing to judge now may get more later: a
    sentence they have not seen is reserved by someone else, and comes back
    if that reservation times out. Otherwise they judged everything there is
    for them."""
    params = {"campaign_id": campaign_id, "participation_id": participation_id}
    return db.session.execute(_HELD_UNSEEN, params).first() is not None
