"""Issue 32's counters: each pairwise slot's answers for each side and each
pair's sentences won move with the commit of every judgment, late answer and
dismissal, and equal a recount from the stored answers (SQLite and PostgreSQL)."""
import random
from datetime import timedelta

from sqlalchemy import select

from app.extensions import db
from app.models import Item, PairTotal, Participation, Slot, utcnow
from app.services import evaluation, review, totals
from test_dashboard_totals import _answer, _volunteer


def recounted_votes(campaign):
    """Per slot (votes for a, votes for b), from the answers: what the counters must be."""
    votes = {slot.id: [0, 0] for slot in db.session.scalars(select(Slot).join(Item, Item.slot_id == Slot.id))}
    rows = db.session.execute(
        select(Item.slot_id, Item.choice, Item.left_system_id, Item.right_system_id, Slot.system_a_id)
        .join(Slot, Slot.id == Item.slot_id)
        .where(Item.campaign_id == campaign.id, Item.answered_at.is_not(None), Item.discarded_at.is_(None)))
    for slot, choice, left, right, system_a in rows:
        preferred = {"left": left, "right": right}.get(choice)
        if preferred is not None:
            votes[slot][preferred != system_a] += 1
    return {slot: tuple(v) for slot, v in votes.items()}


def assert_counters_are_the_answers(campaign):
    db.session.expire_all()
    votes = recounted_votes(campaign)
    stored = {slot.id: (slot.votes_a, slot.votes_b) for slot in db.session.scalars(select(Slot).where(
        Slot.id.in_(list(votes))))}
    assert stored == votes
    wins = {}
    for slot in db.session.scalars(select(Slot).where(Slot.id.in_(list(votes)))):
        a, b = votes[slot.id]
        entry = wins.setdefault((slot.system_a_id, slot.system_b_id), [0, 0])
        entry[0] += a > b
        entry[1] += b > a
    pairs = {(p.system_a_id, p.system_b_id): [p.wins_a, p.wins_b]
             for p in db.session.scalars(select(PairTotal).where(PairTotal.campaign_id == campaign.id))}
    assert {pair: pairs[pair] for pair in wins} == wins
    assert all(pairs[pair] == [0, 0] for pair in pairs if pair not in wins)
    return pairs


def test_votes_and_wins_follow_judgments_late_answers_and_dismissals(app, make_campaign):
    campaign = make_campaign(sentences=6, systems=("A", "B", "C"), identical=(2,), judgments_per_pair=3)
    rng, now = random.Random(7), utcnow()
    late = _volunteer(campaign, 0)
    step = evaluation.show(campaign, late, now, rng)
    while step.item.is_control:
        step = _answer(campaign, late, step.item, now, rng)
    held = step.item  # reserved, then left to expire
    people = [_volunteer(campaign, n) for n in range(1, 6)]
    for minute in range(0, 300, 2):
        now += timedelta(minutes=2)
        pid = people[minute % len(people)]
        step = evaluation.show(campaign, pid, now, rng)
        if step.item is not None:
            _answer(campaign, pid, step.item, now, rng)
    pairs = assert_counters_are_the_answers(campaign)
    assert sum(sum(w) for w in pairs.values()) > 0
    evaluation.answer(campaign, late, held.token, "left", now, rng)  # after its reservation expired
    assert_counters_are_the_answers(campaign)
    busiest = max(people, key=lambda pid: db.session.get(Participation, pid).items_answered)
    review.dismiss(campaign, db.session.get(Participation, busiest), "spam", now)
    db.session.commit()
    after = assert_counters_are_the_answers(campaign)
    assert after != pairs  # the dismissal took sentences' wins back
    totals.recount(campaign.id)  # the repair writes the same wins
    db.session.commit()
    assert assert_counters_are_the_answers(campaign) == after
