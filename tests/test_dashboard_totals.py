"""The dashboard's totals (issue 30: per system pair, per completeness bin,
per minute of answers) are kept with each commit: after judgments, an
expired reservation answered late (over-collection), and a dismissal (which
moves the counters back), they equal a recount from the slots, sentences
and answers, on SQLite and PostgreSQL."""
import random
from datetime import timedelta

from sqlalchemy import case, func, select

from app.extensions import db
from app.models import Campaign, Item, Participation, Sentence, Slot, utcnow
from app.services import accounts, dashboard, evaluation, review, totals
from app.protocols.pairwise import dashboard as pairwise_dashboard
from app.protocols.da import dashboard as da_dashboard
from app.services.campaign_writer import import_in_batches
from app.services.importer import read_campaign
from da_simulation import judge, make_da_campaign
from helpers import QUIET_SIGNS, write_campaign


def recount_pairs(campaign):
    """pair_completion as it was computed before the totals: from every slot."""
    rows = db.session.execute(
        select(Slot.system_a_id, Slot.system_b_id, func.sum(Slot.collected), func.sum(Slot.target),
               func.sum(case((Slot.collected > Slot.target, Slot.collected - Slot.target), else_=0)),
               func.sum(case((Slot.identical.is_(True), 1), else_=0)))
        .join(Sentence, Sentence.id == Slot.sentence_id).where(Sentence.campaign_id == campaign.id)
        .group_by(Slot.system_a_id, Slot.system_b_id)).all()
    names = {s.id: s.name for s in campaign.systems}
    order = {s.id: s.position for s in campaign.systems}
    return [{"systems": [names[a], names[b]], "collected": int(c), "target": int(t), "over": int(o),
             "identical": int(i)} for a, b, c, t, o, i in sorted(rows, key=lambda r: (order[r[0]], order[r[1]]))]


def recount_bins(campaign):
    counts = {}
    for collected, capacity in db.session.execute(
            select(Sentence.collected, Sentence.capacity).where(Sentence.campaign_id == campaign.id)):
        key = -1 if capacity == 0 else 10 if collected >= capacity else collected * 10 // capacity
        counts[key] = counts.get(key, 0) + 1
    bins = [{"bin": f"{10 * k}-{10 * k + 9}%", "count": counts.get(k, 0)} for k in range(10)]
    bins.append({"bin": "100%", "count": counts.get(10, 0)})
    return {"bins": bins, "nothing_to_judge": counts.get(-1, 0)}


def recount_chart(campaign):
    minutes = {}
    for (at,) in db.session.execute(select(Item.answered_at).where(
            Item.campaign_id == campaign.id, Item.answered_at.is_not(None))):
        key = at.replace(second=0, microsecond=0).isoformat(timespec="minutes")
        minutes[key] = minutes.get(key, 0) + 1
    return dashboard.rate_chart(sorted(minutes.items()))


def assert_totals_are_the_rows(campaign):
    db.session.expire_all()
    assert pairwise_dashboard.pair_completion(campaign) == recount_pairs(campaign)
    assert dashboard.sentence_histogram(campaign) == recount_bins(campaign)
    assert dashboard.answer_rate(campaign.id) == recount_chart(campaign)


def _volunteer(campaign, n):
    user = accounts.create_user(f"t{n}@example.org", f"t{n}", "password-123")
    participation = accounts.join_campaign(user, campaign, "B1-B2", "C1-C2")
    db.session.commit()
    return participation.id


def _answer(campaign, pid, item, now, rng):
    choice = ("left" if item.better_left else "right") if item.is_control else rng.choice(["left", "right", "equal"])
    return evaluation.answer(campaign, pid, item.token, choice, now, rng)


def test_pairwise_totals_follow_judgments_expiries_and_dismissals(app, make_campaign):
    campaign = make_campaign(sentences=6, systems=("A", "B", "C"), identical=(2,), judgments_per_pair=1)
    rng, start = random.Random(4), utcnow().replace(second=0, microsecond=0)
    assert_totals_are_the_rows(campaign)  # at import: targets and identical slots, nothing collected
    late = _volunteer(campaign, 0)
    now = start
    step = evaluation.show(campaign, late, now, rng)
    while step.item.is_control:
        step = _answer(campaign, late, step.item, now, rng)
    held = step.item  # reserved, then left to expire
    people = [_volunteer(campaign, n) for n in range(1, 5)]
    for minute in range(0, 400, 3):  # answers over more than 120 minutes: bars of two minutes
        now = start + timedelta(minutes=minute)
        pid = people[minute % len(people)]
        step = evaluation.show(campaign, pid, now, rng)
        if step.item is not None:
            _answer(campaign, pid, step.item, now, rng)
    assert_totals_are_the_rows(campaign)
    # The expired reservation answered after its slot was filled again: over-collected.
    evaluation.answer(campaign, late, held.token, "left", now, rng)
    assert sum(row["over"] for row in pairwise_dashboard.pair_completion(campaign)) == 1
    assert_totals_are_the_rows(campaign)
    # A dismissal discards the volunteer's judgments: the totals move back.
    busiest = max(people, key=lambda pid: db.session.get(Participation, pid).items_answered)
    review.dismiss(campaign, db.session.get(Participation, busiest), "spam", now)
    db.session.commit()
    assert_totals_are_the_rows(campaign)
    assert sum(row["collected"] for row in pairwise_dashboard.pair_completion(campaign)) == \
        db.session.get(Campaign, campaign.id).collected_judgments
    # The repair writes the same rows.
    before = (pairwise_dashboard.pair_completion(campaign), dashboard.sentence_histogram(campaign),
              dashboard.answer_rate(campaign.id))
    totals.recount(campaign.id)
    db.session.commit()
    assert (pairwise_dashboard.pair_completion(campaign), dashboard.sentence_histogram(campaign),
            dashboard.answer_rate(campaign.id)) == before


def test_da_completion_is_the_slots(app, tmp_path):
    campaign = make_da_campaign(str(tmp_path / "da"))
    judge(campaign)  # the optimiser is dismissed by the live rule: their scores go back
    rows = db.session.execute(
        select(Slot.system_a_id, func.sum(Slot.collected), func.sum(Slot.target))
        .join(Sentence, Sentence.id == Slot.sentence_id).where(Sentence.campaign_id == campaign.id)
        .group_by(Slot.system_a_id)).all()
    assert da_dashboard.completion(campaign) == {a: (int(c), int(t)) for a, c, t in rows}
    assert dashboard.sentence_histogram(campaign) == recount_bins(campaign)
    assert dashboard.answer_rate(campaign.id) == recount_chart(campaign)


def test_an_import_in_batches_adds_up(app, tmp_path):
    folder = write_campaign(str(tmp_path / "batches"), sentences=7, identical=(3,), **QUIET_SIGNS)
    campaign_id = import_in_batches(read_campaign(folder), batch=3)
    campaign = db.session.get(Campaign, campaign_id)
    assert_totals_are_the_rows(campaign)
    histogram = dashboard.sentence_histogram(campaign)
    assert histogram["bins"][0]["count"] == 6 and histogram["nothing_to_judge"] == 1  # sentence 3: all outputs the same
