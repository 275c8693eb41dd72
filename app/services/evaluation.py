"""One volunteer step: answer the current item and get the next, in one
transaction. Used by the HTML form and the JSON API alike."""
import functools
import logging
import time
from dataclasses import dataclass

from sqlalchemy.exc import DBAPIError, OperationalError

from .. import protocols
from ..database import BusyWait, busy, dialect_name
from ..extensions import db
from . import answers, assignment, rewards

_UNKNOWN = object()


@dataclass
class Step:
    status: str  # ok, accepted, stale, dismissed, finished, closed, capped
    item: object = None
    answered: int = 0  # answers that count (participation.items_counted)
    tickets: tuple = ()  # the latest valid ticket numbers (rewards.LATEST_SHOWN), in the order won
    tickets_count: int = 0  # every valid ticket of the volunteer's
    new_ticket: int = None
    dismissal_reason: str = None
    texts: tuple = None  # the texts ``item`` shows, read in the step's transaction
    presented: object = None  # what ``present`` made of the step, before the commit
    participation_id: int = None
    counted: bool = True  # False: the answer was below the reading floor, or refused (closed)
    held: bool = False  # held for review (services/holds.py)
    changed: bool = False  # the answer was stored or dismissed the volunteer, whatever is served next


def _finish(campaign, participation, tickets, status, now, rng, new_ticket=None, reason=None, current=_UNKNOWN,
            present=None, counted=True):
    """Complete a step: the item to show (serving one if needed), then commit.

    ``tickets`` are the volunteer's latest valid ticket numbers and how many
    they have (as read with the lock, with any won in this transaction).

    ``current`` is the volunteer's unanswered item when the caller knows it
    (None right after an accepted answer: there is at most one). ``present``,
    if given, turns the step into the response while its objects are still
    loaded (a commit expires them), so answering needs no reads after the commit.
    """
    item = None
    changed = status in ("accepted", "dismissed")  # before the status says what comes next
    if participation.is_dismissed:
        status, reason = "dismissed", participation.dismissed_reason
    elif not campaign.is_serving_at(now):
        status = "closed"  # not even the item served before the close
    else:
        item = assignment.current_item(participation.id) if current is _UNKNOWN else current
        if item is None and assignment.daily_cap_reached(campaign, participation, now):
            status = "capped"
        elif item is None:
            item = assignment.serve_next(campaign, participation, now, rng)
            if item is None:
                status = "finished"
    step = Step(
        status=status,
        item=item,
        answered=participation.items_counted,
        tickets=tickets.latest if not participation.is_dismissed else (),
        tickets_count=tickets.count if not participation.is_dismissed else 0,
        new_ticket=new_ticket,
        dismissal_reason=reason,
        texts=item_texts(campaign, item) if item is not None else None,
        participation_id=participation.id,
        counted=counted,
        held=participation.is_held,
        changed=changed,
    )
    if present is None:
        db.session.commit()
        return step
    step.presented = present(step)
    # Nothing is read after this commit (the request's session ends with
    # the request).
    _commit_keeping_objects()
    return step


def _commit_keeping_objects():
    """Commit without expiring what the session holds: for a caller that
    reads nothing afterwards, or only rows it locks and reads again (a
    reload would cost a query for each object, the campaign's systems too)."""
    session = db.session()
    expire, session.expire_on_commit = session.expire_on_commit, False
    try:
        session.commit()
    finally:
        session.expire_on_commit = expire


log = logging.getLogger("bozka.evaluation")
RETRIES = 3


def retrying(step):
    """Run a whole step again when the database was busy or restarted.

    Every step is one transaction and an answer counts only once per item
    token, so running it again can neither lose nor double a judgment. A
    busy SQLite is tried again, waiting cooperatively, for up to
    BOZKA_BUSY_WAIT seconds; a restarted database RETRIES times. Then the
    error reaches the caller (a clean 503).
    """

    @functools.wraps(step)
    def run(*args, **kwargs):
        attempt, waits = 0, None
        try:
            while True:
                try:
                    return step(*args, **kwargs)
                except (OperationalError, DBAPIError) as exc:
                    db.session.rollback()
                    if busy(exc):
                        waits = waits or BusyWait()
                        again = waits.wait()
                    elif attempt < RETRIES and (isinstance(exc, OperationalError) or exc.connection_invalidated):
                        time.sleep(0.05 * 2 ** attempt)
                        again = True
                    else:
                        again = False
                    if not again:
                        raise
                    if attempt == 0:
                        log.warning("database busy or restarted (%s); trying again", exc.__class__.__name__)
                    attempt += 1
        finally:
            if waits is not None:
                waits.done()

    return run


@dataclass(frozen=True)
class Volunteer:
    """A volunteer named by their user id instead of their participation's
    id: the lock finds the participation (one statement fewer), and ``show``
    and ``answer`` return None when the user has not joined the campaign."""

    user_id: int


@dataclass(frozen=True)
class Tickets:
    latest: tuple  # the latest valid numbers, in the order won
    count: int  # all the valid ones


def _lock(campaign, who):
    """The locked participation (None if not joined) and its ``Tickets``,
    the count as the lock read it (a ticket won later adds one)."""
    if isinstance(who, Volunteer):
        participation, latest = assignment.lock_volunteer(user_id=who.user_id, campaign_id=campaign.id)
    else:
        participation, latest = assignment.lock_volunteer(who)
    return participation, Tickets(latest, participation.tickets_valid if participation is not None else 0)


@retrying
def show(campaign, participation_id, now, rng, present=None):
    """The volunteer's current item (serving one if needed). ``participation_id``
    may be a ``Volunteer`` (a user id)."""
    participation, tickets = _lock(campaign, participation_id)
    if participation is None:
        db.session.rollback()
        return None
    return _finish(campaign, participation, tickets, "ok", now, rng, present=present)


def answer(campaign, participation_id, token, choice, now, rng, present=None):
    """Record the answer and serve the next item. On SQLite (one writer at a
    time) both happen in one transaction. On PostgreSQL the answer commits
    first: a volunteer's transaction looking for a free sentence then holds
    no other sentence (the one just answered), so volunteers never wait for
    each other in a circle (see slots.AllHeld). ``participation_id``
    may be a ``Volunteer`` (a user id)."""
    if dialect_name() == "sqlite":
        return _answer_and_next(campaign, participation_id, token, choice, now, rng, present)
    recorded = _record(campaign, participation_id, token, choice, now)
    if recorded is None:
        return None
    return _next_after(campaign, participation_id, *recorded, now, rng, present)


@retrying
def _record(campaign, participation_id, token, choice, now):
    participation, _tickets = _lock(campaign, participation_id)
    if participation is None:
        db.session.rollback()
        return None
    outcome = answers.submit(campaign, participation, token, choice, now)
    # _next_after locks and reads the participation again; the campaign's
    # settings do not change in a step.
    _commit_keeping_objects()
    # On PostgreSQL a ticket won is made by the commit (rewards.award_ticket).
    ticket = outcome.new_ticket if outcome.new_ticket is not None else rewards.ticket_made_at_commit()
    return outcome.status, ticket, outcome.dismissal_reason, outcome.counted


@retrying
def _next_after(campaign, participation_id, status, ticket, reason, counted, now, rng, present):
    participation, tickets = _lock(campaign, participation_id)  # the new ticket is among them
    return _finish(campaign, participation, tickets, status, now, rng, ticket, reason, present=present,
                   counted=counted)


@retrying
def _answer_and_next(campaign, participation_id, token, choice, now, rng, present=None):
    participation, tickets = _lock(campaign, participation_id)
    if participation is None:
        db.session.rollback()
        return None
    outcome = answers.submit(campaign, participation, token, choice, now)
    ticket = outcome.new_ticket
    if ticket is not None:  # won after the lock read the latest and the count
        tickets = Tickets(rewards.latest(tuple(sorted((*tickets.latest, ticket)))), tickets.count + 1)
    # After an accepted answer the volunteer has no unanswered item left.
    current = None if outcome.status == "accepted" else _UNKNOWN
    return _finish(campaign, participation, tickets, outcome.status, now, rng, ticket, outcome.dismissal_reason,
                   current=current, present=present, counted=outcome.counted)


def item_texts(campaign, item):
    """The texts an item shows (the protocol's ``texts_of``); none read when
    serving the item read them."""
    if item.texts is not None:
        return item.texts
    return protocols.of(campaign).texts_of(item)


def well_formed_answer(campaign, data):
    """(token, answer) of a judgment sent as JSON, or None when it is not one."""
    if not isinstance(data, dict):
        return None
    token, answer = data.get("token"), protocols.of(campaign).parse(data)
    if answer is None or not isinstance(token, str) or len(token) > 32:
        return None
    return token, answer


def step_payload(campaign, step):
    """The JSON form of a step. Nothing in it tells a quality-control item
    from a test (not even the item's position: the control schedule is public)."""
    payload = {
        "status": step.status,
        "answered": step.answered,
        "counted": step.counted,
        "held": step.held,
        "tickets": list(step.tickets),
        "tickets_count": step.tickets_count,
        "new_ticket": step.new_ticket,
        "item": None,
    }
    if step.item is not None:
        texts = step.texts if step.texts is not None else item_texts(campaign, step.item)
        payload["item"] = {"token": step.item.token, **protocols.of(campaign).payload(campaign, texts)}
    return payload
