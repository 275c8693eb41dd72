"""What an answer does (paper, section 3): it is recorded once, moves the
counters, is checked against the control rules, and may win a ticket.

Every function here works inside the caller's transaction, on a
participation the caller has locked (``assignment.lock_volunteer``).
"""
from dataclasses import dataclass

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm.attributes import set_committed_value

from .. import protocols
from ..database import execute
from ..extensions import db
from ..models import Item
from . import holds, quality, research, rewards, suspicious
from .counters import change_holds, count_answer, count_for_campaign, set_counters
from .reservations import release_hold

_ANSWERED = ("answered_at", "choice", "score", "spans", "seconds", "passed", "holding", "too_fast")
_ANSWER = (
    update(Item.__table__)
    .where(Item.id == bindparam("item_id"), Item.answered_at.is_(None))
    .values(**{key: bindparam(f"new_{key}", type_=getattr(Item, key).type) for key in _ANSWERED})
)


@dataclass
class Outcome:
    status: str  # "accepted", "stale", "dismissed", "closed"
    item: Item = None
    new_ticket: int = None  # the number of a ticket won (on PostgreSQL made with the commit: None)
    dismissal_reason: str = None
    counted: bool = True  # False: below the reading floor, no progress


def submit(campaign, participation, token, answer, now):
    """Record the answer to the volunteer's current item, exactly once.

    ``answer`` is what the campaign's protocol parsed (``parse``). A token
    that is not the current item's (a double click, a resubmitted form, a
    replayed request) changes nothing and returns "stale". An answer below
    the reading floor is stored but counts toward no ticket or ranking
    place. One after the campaign closed (or ended) is refused, "closed":
    the ranking and the raffle's list are final then.
    """
    if not campaign.is_serving_at(now):
        return Outcome("closed", counted=False)
    protocol = protocols.of(campaign)
    row = db.session.execute(protocol.CURRENT_ITEM, {"participation_id": participation.id}).first()
    item = row[0] if row is not None else None
    if participation.is_dismissed or item is None or item.token != token:
        return Outcome("stale")
    seconds = max(0.0, (now - item.served_at).total_seconds())
    too_fast = bool(campaign.fast_seconds_per_word) and quality.too_fast(
        seconds, protocol.reading_words(campaign, row[1:]), campaign.fast_seconds_per_word
    )
    try:
        values = protocol.answer_values(item, answer)
    except ValueError:  # an answer that does not fit the item shown (a forged post): nothing changes
        return Outcome("stale")
    answer = dict(
        dict.fromkeys(_ANSWERED), answered_at=now, seconds=seconds, holding=False, too_fast=too_fast, **values,
    )
    answered = execute(_ANSWER, {"item_id": item.id, **{f"new_{k}": v for k, v in answer.items()}}).rowcount
    if not answered:
        return Outcome("stale")
    count_answer(campaign.id, now)
    if item.slot_id is not None:
        # A held slot turns from pending into collected; an expired hold
        # comes back as a judgment beyond the reservation. With the commit,
        # in the lock order (sentence, slot, campaign).
        change_holds(item.slot_id, item.sentence_id, 0 if item.holding else 1, 1, deferred=True,
                     preferred=_preferred(item, answer.get("choice")))
        count_for_campaign(campaign.id, collected=1, over_slot=item.slot_id, equal=int(answer["choice"] == "equal"))
    # The row now holds exactly these values (the update above matched it).
    for key, value in answer.items():
        set_committed_value(item, key, value)
    counted = not too_fast
    counters = dict(items_answered=item.position, fast_run=0 if counted else participation.fast_run + 1)
    if counted:
        counters.update(items_counted=participation.items_counted + 1, reached_count_at=now)
    counters.update(protocol.counters(participation, item, answer))
    counters.update(suspicious.counters(participation, answer["choice"], too_fast, now))
    if item.slot_id is not None:  # counted in the campaign's crowd counters above
        counters.update(holds.crowd_counters(participation, answer["choice"]))
    if research.is_row(item):
        counters.update(research.row_counters(participation, [item]))
    set_counters(participation, **counters)
    reason = protocol.dismissal_reason(campaign, participation, item)
    if reason:
        dismiss(campaign, participation, reason, now)
        return Outcome("dismissed", item=item, dismissal_reason=reason)
    _check_signs(campaign, participation, item, now)
    ticket = None
    if counted and rewards.earns_ticket(participation.items_counted, campaign.raffle_every):
        ticket = rewards.award_ticket(campaign.id, participation.id, item.position, now)
    return Outcome("accepted", item=item, new_ticket=ticket, counted=counted)


def _preferred(item, choice):
    """The system a pairwise answer prefers: None for "equal" (and for a DA score)."""
    return {"left": item.left_system_id, "right": item.right_system_id}.get(choice)


def _check_signs(campaign, participation, item, now):
    """Hold the volunteer for review when their answers show a sign
    (``holds.sign``, or the protocol's ``hold_reason``); a held volunteer
    stays held until an organiser acts."""
    if participation.is_held:
        return
    share = holds.crowd_equal_share(campaign.equal_judgments, campaign.collected_judgments,
                                    own_equal=participation.crowd_equal, own=participation.crowd_answers)
    found = holds.sign(
        participation.tests_left, participation.tests_right, participation.tests_equal, participation.fast_run,
        share, min_tests=campaign.hold_min_tests, alpha=campaign.hold_alpha, fast_limit=campaign.hold_fast_run,
    ) or protocols.hold_reason(campaign, participation, item)
    if found is not None:
        set_counters(participation, held_at=now, held_reason=found)
        rewards.list_changed(campaign.id)  # their tickets leave the raffle's list


def dismiss(campaign, participation, reason, now):
    """Stop a volunteer: discard (never delete) their judgments, free slots."""
    participation.dismissed_at = now
    participation.dismissed_reason = reason
    items = db.session.scalars(
        select(Item).where(Item.participation_id == participation.id, Item.discarded_at.is_(None))
    ).all()
    discarded = equal = 0
    for item in items:
        if item.answered_at is None:
            release_hold(item)
            continue
        item.discarded_at = now
        item.discarded_reason = reason
        if item.slot_id is not None:
            change_holds(item.slot_id, item.sentence_id, -1, -1, preferred=_preferred(item, item.choice))
            discarded += 1
            equal += item.choice == "equal"
    count_for_campaign(campaign.id, collected=-discarded, equal=-equal, volunteers=-1)
    set_counters(participation, crowd_answers=0, crowd_equal=0)  # out of the crowd's counters now
    rewards.void_tickets(participation.id, now)
