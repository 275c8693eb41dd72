"""Suspicious patterns for organisers to look at (issue: gaming the game).

Nothing here punishes anybody: only the control-sentence rule dismisses.
The report lists volunteers whose answers always take the same side or are
always "equal", who answer faster than anyone can read, or who come in
bursts, and addresses from which many accounts registered.
"""
from collections import defaultdict

from sqlalchemy import case, func, select

from ..extensions import db
from ..models import Item, Participation, User

MIN_ANSWERS = 20  # too few answers say nothing
SAME_SIDE = 0.9
ALWAYS_EQUAL = 0.6
FAST_SHARE = 0.3
BURST_PER_MINUTE = 15
ACCOUNTS_PER_ADDRESS = 3


def report(campaign):
    rows = db.session.execute(
        select(
            Item.participation_id,
            func.count(Item.id),
            func.sum(case((Item.choice == "left", 1), else_=0)),
            func.sum(case((Item.choice == "right", 1), else_=0)),
            func.sum(case((Item.choice == "equal", 1), else_=0)),
            func.sum(case((Item.too_fast.is_(True), 1), else_=0)),
        )
        .where(Item.campaign_id == campaign.id, Item.answered_at.is_not(None))
        .group_by(Item.participation_id)
    ).all()
    names = dict(
        db.session.execute(
            select(Participation.id, User.username)
            .join(User, User.id == Participation.user_id)
            .where(Participation.campaign_id == campaign.id)
        ).all()
    )
    volunteers = []
    for pid, total, left, right, equal, fast in rows:
        reasons = []
        if total >= MIN_ANSWERS and max(left, right) / total >= SAME_SIDE:
            reasons.append(("same_side", round(max(left, right) / total, 2)))
        if total >= MIN_ANSWERS and equal / total >= ALWAYS_EQUAL:
            reasons.append(("equal", round(equal / total, 2)))
        if fast and fast / total >= FAST_SHARE:
            reasons.append(("fast", round(fast / total, 2)))
        if reasons:
            volunteers.append({"participation_id": pid, "username": names.get(pid), "answers": total, "reasons": reasons})
    bursts = _bursts(campaign)
    for entry in volunteers:
        entry["burst"] = bursts.pop(entry["participation_id"], None)
    for pid, peak in bursts.items():
        volunteers.append({"participation_id": pid, "username": names.get(pid), "answers": None,
                           "reasons": [], "burst": peak})
    return {"volunteers": volunteers, "addresses": _shared_addresses(campaign)}


def _bursts(campaign):
    """Volunteers with more than BURST_PER_MINUTE answers in some minute."""
    per_minute = defaultdict(lambda: defaultdict(int))
    answered = db.session.execute(
        select(Item.participation_id, Item.answered_at).where(
            Item.campaign_id == campaign.id, Item.answered_at.is_not(None)
        )
    )
    for pid, at in answered:
        per_minute[pid][at.replace(second=0, microsecond=0)] += 1
    peaks = {pid: max(minutes.values()) for pid, minutes in per_minute.items()}
    return {pid: peak for pid, peak in peaks.items() if peak > BURST_PER_MINUTE}


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
