"""Sequential assignment (issue 32) on the site: the pair first (fewest
judgments, breadth first), a sentence the volunteer has not seen; a pair the
anytime-valid test decides is retired by the re-plan and gets no new items;
discarded judgments that take its decision away open it again."""
import random
import re
from collections import Counter
from datetime import timedelta

from sqlalchemy import select

from app.extensions import db
from app.models import Item, PairTotal, Participation, utcnow
from app.services import evaluation, review
from app.protocols.pairwise import decisions
from test_dashboard_totals import _volunteer

SYSTEMS = ("A", "B", "C", "D")


def judge(campaign, pid, now, rng, prefer="A"):
    """Answer what is served: controls right, tests for ``prefer`` when shown,
    else at random; returns the test items answered."""
    answered = []
    step = evaluation.show(campaign, pid, now, rng)
    while step.item is not None:
        item = step.item
        if item.is_control:
            choice = "left" if item.better_left else "right"
        else:
            names = {s.id: s.name for s in campaign.systems}
            left, right = names[item.left_system_id], names[item.right_system_id]
            choice = "left" if left == prefer else "right" if right == prefer else rng.choice(("left", "right"))
            answered.append(item)
        step = evaluation.answer(campaign, pid, item.token, choice, now, rng)
        now += timedelta(seconds=20)
    return answered


def a_ahead(make_campaign, **settings):
    """Systems A, B, C judged by three volunteers who prefer A (the rest at
    random), the pairs re-planned after each."""
    campaign = make_campaign(sentences=60, systems=("A", "B", "C"), assignment="sequential", judgments_per_pair=5,
                             **settings)
    rng, now = random.Random(2), utcnow()
    for n in range(1, 4):
        judge(campaign, _volunteer(campaign, n), now, rng, prefer="A")
        decisions.refresh(campaign.id, now)
    return campaign


def pair_rows(campaign):
    db.session.expire_all()
    names = {s.id: s.name for s in campaign.systems}
    return {(names[p.system_a_id], names[p.system_b_id]): p
            for p in db.session.scalars(select(PairTotal).where(PairTotal.campaign_id == campaign.id))}


def test_breadth_first_by_pair_and_no_source_twice(app, make_campaign):
    campaign = make_campaign(sentences=40, systems=SYSTEMS, assignment="sequential", judgments_per_pair=3)
    rng, now = random.Random(3), utcnow()
    pid = _volunteer(campaign, 1)
    items = judge(campaign, pid, now, rng, prefer=None)
    assert len({item.sentence_id for item in items}) == len(items) == 40  # every source once
    per_pair = Counter(p.collected for p in pair_rows(campaign).values())
    # 40 judgments over 6 pairs; the pairs' counts move with each commit, and on
    # SQLite the next item is chosen before the answer's commit: one behind.
    assert max(per_pair) - min(per_pair) <= 2


def test_a_decided_pair_is_retired_and_opened_again_when_judgments_are_discarded(app, make_campaign):
    campaign = make_campaign(sentences=60, systems=("A", "B"), assignment="sequential", judgments_per_pair=5)
    rng, now = random.Random(5), utcnow()
    # The first prefers A on all 60 sentences, the second answers them at random
    # (breadth first: a second round of the same sentences).
    people = [_volunteer(campaign, n) for n in range(1, 3)]
    judge(campaign, people[0], now, rng, prefer="A")
    judge(campaign, people[1], now + timedelta(hours=1), rng, prefer=None)
    now += timedelta(hours=2)
    decisions.refresh(campaign.id, now)
    (pair,) = pair_rows(campaign).values()
    assert pair.wins_a > 20 and pair.wins_b == 0  # A, or a tie where the second said B
    assert pair.decided_id is not None and not pair.is_open and pair.decided_at == now
    late = _volunteer(campaign, 9)
    # Nothing: no test item of the retired pair, nor a control before none.
    assert evaluation.show(campaign, late, now, rng).item is None
    # Dismissing the first: what is left is a coin's record, undecided.
    review.dismiss(campaign, db.session.get(Participation, people[0]), "spam", now)
    db.session.commit()
    assert decisions.refresh(campaign.id, now) == 1
    (pair,) = pair_rows(campaign).values()
    assert pair.wins_a + pair.wins_b == 60 and abs(pair.wins_a - pair.wins_b) < 20
    assert pair.is_open and pair.decided_id is None and pair.decided_at is None
    # The pair takes judgments again: the late volunteer gets a test item now.
    step = evaluation.show(campaign, late, now, rng)
    while step.item is not None and step.item.is_control:
        step = evaluation.answer(campaign, late, step.item.token,
                                 "left" if step.item.better_left else "right", now, rng)
    assert step.item is not None and step.item.slot_id is not None


def test_the_paper_rule_still_fills_the_fullest_sentence_first(app, make_campaign):
    campaign = make_campaign(sentences=10, systems=SYSTEMS, assignment="ebaluatoia", judgments_per_pair=2)
    rng, now = random.Random(1), utcnow()
    for n in range(1, 4):
        judge(campaign, _volunteer(campaign, n), now, rng, prefer=None)
    rows = pair_rows(campaign)
    assert all(p.is_open and p.decided_id is None for p in rows.values())
    decisions.refresh(campaign.id, now)  # decisions are kept for the dashboard, whatever the rule
    assert sum(p.collected for p in pair_rows(campaign).values()) == 30


def test_the_dashboard_shows_each_pairs_decision_from_the_anytime_test(app, make_campaign):
    from helpers import staff_client

    campaign = a_ahead(make_campaign)
    page = staff_client(app).get("/organiser/c/test/panel").get_data(as_text=True)
    rows = dict(re.findall(r'<tr data-pair="([^"]+)">(.*?)</tr>', page))
    assert set(rows) == {"A|B", "A|C", "B|C"}
    assert "A better" in rows["A|B"] and "A better" in rows["A|C"]
    assert re.search(r"Undecided(: about [\d,]+ more judgments?)?</td>", rows["B|C"])
    assert re.search(r"2 of 3 pairs decided", page)
    assert "anytime-valid test" in page


def test_volunteers_see_the_pairs_decided_and_progress_towards_the_goal(app, make_campaign):
    from app.services import leaderboard
    from helpers import register

    campaign = a_ahead(make_campaign)
    client = app.test_client()
    register(client, username="ane", email="ane@example.org")
    welcome = client.get("/c/test/welcome").get_data(as_text=True)
    decided = re.findall(r"<li>(.*?) translates better than (.*?)</li>", welcome)
    assert sorted(decided) == [("<bdi>A</bdi>", "<bdi>B</bdi>"), ("<bdi>A</bdi>", "<bdi>C</bdi>")]
    leaderboard.invalidate(campaign.id)
    assert leaderboard.get(campaign.id).public_payload()["settled"] == (2, 3)
    page = client.get("/c/test/evaluate").get_data(as_text=True)
    assert re.search(r'<progress id="progress-bar" data-goal="pairs" max="3" value="2"', page)
    assert "system pairs decided" in page


def test_a_volunteer_is_told_when_the_campaign_reached_its_goal(app, make_campaign):
    from helpers import register

    campaign = make_campaign(sentences=60, systems=("A", "B"), assignment="sequential", judgments_per_pair=5)
    rng, now = random.Random(4), utcnow()
    judge(campaign, _volunteer(campaign, 1), now, rng, prefer="A")
    decisions.refresh(campaign.id, now)
    client = app.test_client()
    register(client, username="ane", email="ane@example.org")
    welcome = client.get("/c/test/welcome").get_data(as_text=True)
    assert 'id="goal-reached"' in welcome and "Continue evaluating" not in welcome
    # Not even a control (the first item is one): no test item could follow it.
    page = client.get("/c/test/evaluate").get_data(as_text=True)
    assert 'name="token"' not in page and "The campaign has reached its goal" in page
    # Another volunteer whose next item would be a control: nothing either.
    late = _volunteer(campaign, 2)
    assert evaluation.show(campaign, late, now, rng).item is None
    assert db.session.scalar(select(Item.id).where(Item.participation_id == late)) is None


def test_with_the_goal_top_the_volunteer_is_told_the_best_system_is_decided(app, make_campaign):
    from helpers import register

    campaign = a_ahead(make_campaign, goal="top")
    rows = pair_rows(campaign)
    assert not any(p.is_open for p in rows.values())
    assert rows[("B", "C")].decided_id is None  # retired undecided: it cannot change the top
    client = app.test_client()
    register(client, username="ane", email="ane@example.org")
    welcome = client.get("/c/test/welcome").get_data(as_text=True)
    assert "The best system is decided beyond reasonable doubt" in welcome
    assert "Every comparison between the systems is decided" not in welcome


def test_a_retired_pairs_reservations_are_released_and_a_late_answer_still_counts(app, make_campaign):
    from app.models import Slot

    campaign = make_campaign(sentences=60, systems=("A", "B"), assignment="sequential", judgments_per_pair=5)
    rng, now = random.Random(5), utcnow()
    judge(campaign, _volunteer(campaign, 1), now, rng, prefer="A")
    # The second volunteer holds a test item of the pair when the first's answers decide it.
    slow = _volunteer(campaign, 2)
    step = evaluation.show(campaign, slow, now, rng)
    while step.item.is_control:
        step = evaluation.answer(campaign, slow, step.item.token, "left" if step.item.better_left else "right",
                                 now, rng)
    held = step.item
    # (on a clock an hour behind: their requests do not find the hold expired)
    judge(campaign, _volunteer(campaign, 3), now - timedelta(hours=1), rng, prefer="A")
    db.session.expire_all()
    assert db.session.get(Item, held.id).holding
    slot = db.session.get(Slot, held.slot_id)
    pending, collected = slot.pending, slot.collected
    assert decisions.refresh(campaign.id, now) == 1
    db.session.expire_all()
    assert not db.session.get(Item, held.id).holding  # released at once, not at the timeout
    assert db.session.get(Slot, held.slot_id).pending == pending - 1
    # The late answer is still recorded and counted.
    evaluation.answer(campaign, slow, held.token, "left", now + timedelta(seconds=30), rng)
    db.session.expire_all()
    assert db.session.get(Item, held.id).answered_at is not None
    assert db.session.get(Slot, held.slot_id).collected == collected + 1


def test_each_pair_walks_the_sentences_in_an_order_of_its_own():
    """Slot.shuffle (pairwise.scramble): the orders of two pairs are unrelated,
    else a keen volunteer's seen sentences would lead every pair's walk."""
    from scipy.stats import spearmanr

    from app.protocols.pairwise.protocol import scramble

    sentences = range(1, 2001)
    orders = {pair: [scramble(s, *pair) for s in sentences] for pair in ((1, 2), (1, 5), (3, 4), (12, 13))}
    first = {pair: set(sorted(sentences, key=lambda s: order[s - 1])[:200]) for pair, order in orders.items()}
    for pair in ((1, 5), (3, 4), (12, 13)):
        assert abs(spearmanr(orders[(1, 2)], orders[pair]).statistic) < 0.1, pair
        assert 5 <= len(first[(1, 2)] & first[pair]) <= 40, pair  # about 10 % of the first 200 in common
    assert all(0 <= value < 2 ** 30 for order in orders.values() for value in order)
