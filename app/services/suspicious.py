"""Suspicious patterns for organisers to look at (issue: gaming the game).

Nothing here punishes anybody: only the control-sentence rule dismisses.
The report lists volunteers whose answers always take the same side or are
always "equal", who answer faster than anyone can read, or who come in
bursts, and addresses from which many accounts registered.
"""
from collections import defaultdict

from sqlalchemy import func, or_, select

from ..extensions import db
from ..models import Participation, User

MIN_ANSWERS = 20  # too few answers say nothing
SAME_SIDE = 0.9
ALWAYS_EQUAL = 0.6
FAST_SHARE = 0.3
BURST_PER_MINUTE = 15
ACCOUNTS_PER_ADDRESS = 3
SHOWN = 100  # volunteers listed at most, those with the most answers first


def counters(participation, choice, too_fast, now):
    """The report's counters after one more answer (``choice``: left, right,
    equal, or None for a score), kept on the volunteer's row with the
    answer's commit, so the report never reads the judgments."""
    minute = now.replace(second=0, microsecond=0)
    in_minute = participation.minute_answers + 1 if participation.minute_at == minute else 1
    return {
        "answers_total": participation.answers_total + 1,
        "answers_left": participation.answers_left + (choice == "left"),
        "answers_right": participation.answers_right + (choice == "right"),
        "answers_equal": participation.answers_equal + (choice == "equal"),
        "answers_too_fast": participation.answers_too_fast + bool(too_fast),
        "minute_at": minute,
        "minute_answers": in_minute,
        "busiest_minute": max(participation.busiest_minute, in_minute),
    }


def reasons_of(total, left, right, equal, fast):
    """The patterns a volunteer's counts show: [(code, share)]."""
    reasons = []
    if total >= MIN_ANSWERS and max(left, right) / total >= SAME_SIDE:
        reasons.append(("same_side", round(max(left, right) / total, 2)))
    if total >= MIN_ANSWERS and equal / total >= ALWAYS_EQUAL:
        reasons.append(("equal", round(equal / total, 2)))
    if fast and fast / total >= FAST_SHARE:
        reasons.append(("fast", round(fast / total, 2)))
    return reasons


def report(campaign):
    """Volunteers showing a pattern (the SHOWN with the most answers, and
    how many in all) and addresses shared by several accounts: one read of
    the volunteers' counters, whatever the number of judgments."""
    p = Participation
    total = p.answers_total
    signs = or_(
        (total >= MIN_ANSWERS) & ((p.answers_left >= SAME_SIDE * total) | (p.answers_right >= SAME_SIDE * total)
                                  | (p.answers_equal >= ALWAYS_EQUAL * total)),
        (p.answers_too_fast > 0) & (p.answers_too_fast >= FAST_SHARE * total),
        p.busiest_minute > BURST_PER_MINUTE,
    )
    flagged = p.campaign_id == campaign.id, signs
    count = db.session.scalar(select(func.count(p.id)).where(*flagged))
    rows = db.session.execute(
        select(p.id, User.username, total, p.answers_left, p.answers_right, p.answers_equal, p.answers_too_fast,
               p.busiest_minute)
        .join(User, User.id == p.user_id)
        .where(*flagged)
        .order_by(total.desc(), p.id)
        .limit(SHOWN)
    ).all()
    volunteers = [
        {"participation_id": pid, "username": username, "answers": answers,
         "reasons": reasons_of(answers, left, right, equal, fast),
         "burst": busiest if busiest > BURST_PER_MINUTE else None}
        for pid, username, answers, left, right, equal, fast, busiest in rows
    ]
    return {"volunteers": volunteers, "flagged": count, "addresses": _shared_addresses(campaign)}


def _shared_addresses(campaign):
    """Groups of accounts that registered from one address (by keyed hash)."""
    groups = defaultdict(list)
    rows = db.session.execute(
        select(User.signup_address, User.username)
        .join(Participation, Participation.user_id == User.id)
        .where(Participation.campaign_id == campaign.id, User.signup_address.is_not(None))
    )
    for address, username in rows:
        groups[address].append(username)
    return [
        {"accounts": len(names), "usernames": sorted(names)}
        for names in groups.values()
        if len(names) >= ACCOUNTS_PER_ADDRESS
    ]
