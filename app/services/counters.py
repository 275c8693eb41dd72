"""The counters every judgment moves, kept in place so that choosing the next
item never counts judgments: a sentence's and a slot's pending and
collected judgments, a volunteer's items and controls, the campaign's
collected and over-collected judgments and its volunteers.

A slot and its sentence move together, the sentence first (the lock order
of ``assignment``). A volunteer's counters change in the object at once and
in the database by one statement when the transaction commits (cheaper than
the unit of work's flush of the object, which every answer would pay). The
campaign's row, which every judgment changes, is changed last, with the
commit (``database.at_commit``): on PostgreSQL it is locked only then.
"""
from datetime import datetime, timedelta

from sqlalchemy import Integer, bindparam, case, event, func, select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from ..database import at_commit, execute, run_at_commit
from ..extensions import db
from ..models import Campaign, Item, Participation, Sentence, Slot, utcnow
from . import totals

_new_pending = Sentence.pending + bindparam("pending_delta", type_=Sentence.pending.type)
_BUMP_SENTENCE = (
    update(Sentence.__table__)
    .where(Sentence.id == bindparam("sentence_id"))
    .values(
        pending=_new_pending,
        collected=Sentence.collected + bindparam("collected_delta", type_=Sentence.collected.type),
        is_open=case((_new_pending < Sentence.capacity, True), else_=False),
    )
)
# A pairwise answer for one side (``preferred``: its system, else NULL) moves
# that side's votes with the collected count, in the same statement.
_BUMP_SLOT = (
    update(Slot.__table__)
    .where(Slot.id == bindparam("slot_id"))
    .values(
        pending=Slot.pending + bindparam("pending_delta", type_=Slot.pending.type),
        collected=Slot.collected + bindparam("collected_delta", type_=Slot.collected.type),
        votes_a=Slot.votes_a + case((Slot.system_a_id == bindparam("preferred", type_=Integer),
                                     bindparam("collected_delta", type_=Integer)), else_=0),
        votes_b=Slot.votes_b + case((Slot.system_b_id == bindparam("preferred", type_=Integer),
                                     bindparam("collected_delta", type_=Integer)), else_=0),
    )
)
# The campaign counts an over-collected judgment when the slot just
# collected has more than its target (decided by the database, at the commit).
_COUNT_FOR_CAMPAIGN = (
    update(Campaign.__table__)
    .where(Campaign.id == bindparam("campaign_id"))
    .values(
        collected_judgments=Campaign.collected_judgments
        + bindparam("collected", type_=Campaign.collected_judgments.type),
        over_collected=Campaign.over_collected
        + select(func.count())
        .where(Slot.id == bindparam("over_slot", type_=Slot.id.type), Slot.collected > Slot.target)
        .scalar_subquery(),
        equal_judgments=Campaign.equal_judgments + bindparam("equal", type_=Campaign.equal_judgments.type),
        volunteers=Campaign.volunteers + bindparam("volunteers", type_=Campaign.volunteers.type),
    )
)
# A volunteer's counters and hold, written by one statement with the commit.
VOLUNTEER_COUNTERS = (
    "items_served", "items_answered", "items_counted", "reached_count_at", "controls_answered", "controls_failed",
    "tests_left", "tests_right", "tests_equal", "fast_run", "held_at", "held_reason",
    "answers_total", "answers_left", "answers_right", "answers_equal", "answers_too_fast", "minute_at", "minute_answers",
    "busiest_minute", "research_controls", "research_tests", "research_tests_too_fast", "crowd_answers", "crowd_equal",
)
_SAVE_COUNTERS = (
    update(Participation.__table__)
    .where(Participation.id == bindparam("participation_id"))
    .values(**{key: bindparam(f"new_{key}", type_=getattr(Participation, key).type) for key in VOLUNTEER_COUNTERS})
)
_CAMPAIGNS = "bozka_campaign_counts"
_VOLUNTEERS = "bozka_participation_counters"


def _run_or_defer(statement, params, deferred):
    if deferred:
        at_commit(statement, params)
    else:
        execute(statement, params)


def bump_sentence(sentence_id, pending_delta, collected_delta=0, deferred=False):
    """Move a sentence's counters now or, ``deferred``, with the commit."""
    _run_or_defer(
        _BUMP_SENTENCE,
        {"sentence_id": sentence_id, "pending_delta": pending_delta, "collected_delta": collected_delta},
        deferred,
    )


def change_holds(slot_id, sentence_id, pending_delta, collected_delta=0, deferred=False, preferred=None):
    """Move a slot's and its sentence's counters together (sentence first),
    now or, ``deferred``, with the commit. ``preferred``: the system a
    pairwise answer collected (or discarded) prefers; None for "equal"."""
    bump_sentence(sentence_id, pending_delta, collected_delta, deferred)
    _run_or_defer(
        _BUMP_SLOT, {"slot_id": slot_id, "pending_delta": pending_delta, "collected_delta": collected_delta,
                     "preferred": preferred}, deferred
    )
    if collected_delta:
        totals.moved(slot_id, collected_delta, preferred)


def count_answer(campaign_id, moment):
    """One more answer in the dashboard's count of the minute of ``moment``, with the commit."""
    totals.answered(campaign_id, moment)


def count_for_campaign(campaign_id, collected=0, over_slot=None, equal=0, volunteers=0):
    """Change the campaign's counters when the transaction commits.
    ``over_slot``: a slot just collected (by a statement run before the
    counters); one more over-collected judgment if it now has more than its
    target. ``equal``: judgments answered "equal" (the crowd's share).
    ``volunteers``: joined (+1) or dismissed (-1)."""
    counts = db.session.info.setdefault(_CAMPAIGNS, {})
    before = counts.get(campaign_id, (0, None, 0, 0))
    if over_slot is not None and before[1] is not None:
        raise ValueError("one collected slot per campaign and transaction")
    counts[campaign_id] = (before[0] + collected, over_slot or before[1], before[2] + equal, before[3] + volunteers)


def set_counters(participation, **values):
    """Change a locked volunteer's counters: in the object at once (as
    loaded, so the unit of work leaves them alone), in the database with
    the commit."""
    for key, value in values.items():
        set_committed_value(participation, key, value)
    db.session.info.setdefault(_VOLUNTEERS, {})[participation.id] = participation


def recount_volunteers(campaign_id):
    """Count a campaign's volunteers not dismissed afresh (a repair, and for
    benchmarks that build states by inserting rows)."""
    db.session.execute(update(Campaign).where(Campaign.id == campaign_id).values(volunteers=select(func.count()).where(
        Participation.campaign_id == campaign_id, Participation.dismissed_at.is_(None)).scalar_subquery()))


@event.listens_for(Session, "before_commit")
def _write_counters(session):
    """The statements kept for the commit, then the volunteers' counters,
    then the campaigns' (the row every judgment changes), then the
    dashboard's totals (from the slots as moved)."""
    volunteers = session.info.pop(_VOLUNTEERS, None) or {}
    campaigns = session.info.pop(_CAMPAIGNS, None) or {}
    run_at_commit([
        (_SAVE_COUNTERS, {"participation_id": participation_id,
                          **{f"new_{key}": getattr(participation, key) for key in VOLUNTEER_COUNTERS}})
        for participation_id, participation in sorted(volunteers.items())
    ])
    for campaign_id, (collected, slot, equal, joined) in sorted(campaigns.items()):
        if collected or slot or joined:
            session.connection().execute(_COUNT_FOR_CAMPAIGN, {
                "campaign_id": campaign_id, "collected": collected, "over_slot": slot, "equal": equal,
                "volunteers": joined})
    # After the campaign's row: a ticket or a raffle version kept for the commit
    # locks that row before anything here, so every transaction locks it before
    # the totals' rows (in the other order two judgments deadlocked on PostgreSQL).
    totals.write(session)


@event.listens_for(Session, "after_soft_rollback")
def _forget_counters(session, _previous_transaction):
    session.info.pop(_VOLUNTEERS, None)
    session.info.pop(_CAMPAIGNS, None)


# The public figure. A test item's answer moves the campaign's collected
# judgments and a control's does not, so a count shown as it moves would tell
# a volunteer which of their answers were controls (issue 28). The public
# progress is the count as it stood at the start of the current period:
# what a volunteer sees after an answer is the same whatever its kind.
_EPOCH = datetime(2000, 1, 1)  # naive UTC, as every stored time


def public_period(seconds, now=None):
    """(number, start) of the period of ``seconds`` that ``now`` (default:
    the clock) is in; periods are counted from 2000-01-01 UTC, so every
    process agrees on them."""
    now = utcnow() if now is None else now
    number = int((now - _EPOCH).total_seconds() // seconds)
    return number, _EPOCH + timedelta(seconds=number * seconds)


_ANSWERED_SINCE = (
    select(Campaign.collected_judgments - select(func.count(Item.id)).where(
        Item.campaign_id == bindparam("campaign_id"), Item.answered_at >= bindparam("since"),
        Item.slot_id.is_not(None), Item.discarded_at.is_(None),
    ).scalar_subquery())
    .where(Campaign.id == bindparam("campaign_id"))
)


def public_collected(campaign_id, seconds):
    """The collected judgments the public progress shows: as they stood at
    the start of the current period of ``seconds`` (0: as they are now),
    less any discarded since. One statement: the counter less the test
    answers since the period began, read from the index on answer times."""
    if not seconds:
        return db.session.scalar(select(Campaign.collected_judgments).where(Campaign.id == campaign_id))
    _number, since = public_period(seconds)
    return db.session.scalar(_ANSWERED_SINCE, {"campaign_id": campaign_id, "since": since})

