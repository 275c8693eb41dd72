"""One volunteer step: answer the current item and get the next, in one
transaction. Used by the HTML form and the JSON endpoint alike."""
import functools
import logging
import time
from dataclasses import dataclass

from sqlalchemy.exc import DBAPIError, OperationalError

from ..extensions import db
from ..models import Output
from . import assignment
from .rewards import ticket_numbers


@dataclass
class Step:
    status: str  # ok, accepted, stale, dismissed, finished, closed, capped
    item: object = None
    answered: int = 0
    tickets: tuple = ()
    new_ticket: int = None
    dismissal_reason: str = None


def _finish(campaign, participation, status, now, rng, new_ticket=None, reason=None):
    item = None
    if participation.is_dismissed:
        status, reason = "dismissed", participation.dismissed_reason
    else:
        item = assignment.current_item(participation.id)
        if item is None and assignment.daily_cap_reached(campaign, participation, now):
            status = "capped"
        elif item is None:
            item = assignment.current_or_next(campaign, participation, now, rng)
            if item is None:
                status = "finished" if campaign.is_serving_at(now) else "closed"
    step = Step(
        status=status,
        item=item,
        answered=participation.items_answered,
        tickets=tuple(ticket_numbers(participation.id)) if not participation.is_dismissed else (),
        new_ticket=new_ticket,
        dismissal_reason=reason,
    )
    db.session.commit()
    return step


log = logging.getLogger("bozka.evaluation")
RETRIES = 3


def retrying(step):
    """Run a whole step again when the database was busy or restarted.

    Every step is one transaction and an answer counts only once per item
    token, so running it again can neither lose nor double a judgment. If
    the database stays away, the error reaches the caller (a clean 503).
    """

    @functools.wraps(step)
    def run(*args, **kwargs):
        for attempt in range(RETRIES + 1):
            try:
                return step(*args, **kwargs)
            except (OperationalError, DBAPIError) as exc:
                db.session.rollback()
                if attempt == RETRIES or not (isinstance(exc, OperationalError) or exc.connection_invalidated):
                    raise
                log.warning("database busy or restarted (%s); trying again", exc.__class__.__name__)
                time.sleep(0.05 * 2 ** attempt)
        return None

    return run


@retrying
def show(campaign, participation_id, now, rng):
    participation = assignment.lock_participation(participation_id)
    return _finish(campaign, participation, "ok", now, rng)


@retrying
def answer(campaign, participation_id, token, choice, now, rng):
    participation = assignment.lock_participation(participation_id)
    outcome = assignment.submit(campaign, participation, token, choice, now)
    ticket = outcome.new_ticket.number if outcome.new_ticket is not None else None
    return _finish(campaign, participation, outcome.status, now, rng, ticket, outcome.dismissal_reason)


def item_texts(item):
    """(source, left, right) texts of an item, controls and tests alike."""
    if item.is_control:
        control = item.control
        if item.better_left:
            return control.source, control.better, control.worse
        return control.source, control.worse, control.better
    outputs = dict(
        db.session.query(Output.system_id, Output.text).filter(Output.sentence_id == item.sentence_id)
    )
    return item.sentence.source, outputs[item.left_system_id], outputs[item.right_system_id]


def step_payload(step):
    """The JSON form of a step. Nothing in it tells a control from a test."""
    payload = {
        "status": step.status,
        "answered": step.answered,
        "tickets": list(step.tickets),
        "new_ticket": step.new_ticket,
        "item": None,
    }
    if step.item is not None:
        source, left, right = item_texts(step.item)
        payload["item"] = {
            "token": step.item.token,
            "position": step.item.position,
            "source": source,
            "left": left,
            "right": right,
        }
    return payload
