"""The suspicious-patterns report (issue 30): it reads each volunteer's
counters, kept with every answer's commit, never the judgments; the counts
equal a recount of the answers, and the page lists at most SHOWN volunteers."""
import random
from collections import Counter, defaultdict
from datetime import timedelta

from sqlalchemy import select

from app.extensions import db
from app.models import Item, Participation, utcnow
from app.services import accounts, evaluation, suspicious
from helpers import staff_client


def volunteer(campaign, name):
    user = accounts.create_user(f"{name}@example.org", name, "password-123")
    return accounts.join_campaign(user, campaign, "B1-B2", "C1-C2")


def answer_many(campaign, participation, count, side, start, seconds_apart, rng):
    """``count`` answers: controls right, test items ``side``."""
    now = start
    for _ in range(count):
        step = evaluation.show(campaign, participation.id, now, rng)
        if step.item is None:
            return
        item = step.item
        choice = ("left" if item.better_left else "right") if item.is_control else side
        evaluation.answer(campaign, participation.id, item.token, choice, now, rng)
        now += timedelta(seconds=seconds_apart)


def recount(participation_id):
    """The report's figures from the answers themselves (as it read them before)."""
    items = db.session.scalars(select(Item).where(Item.participation_id == participation_id,
                                                  Item.answered_at.is_not(None))).all()
    sides = Counter(item.choice for item in items)
    minutes = defaultdict(int)
    for item in items:
        minutes[item.answered_at.replace(second=0, microsecond=0)] += 1
    return (len(items), sides["left"], sides["right"], sides["equal"], sum(item.too_fast for item in items),
            max(minutes.values(), default=0))


def test_counters_equal_a_recount_and_flag_the_patterns(app, make_campaign):
    campaign = make_campaign(sentences=40, systems=("A", "B", "C"))
    rng = random.Random(3)
    start = utcnow().replace(second=0, microsecond=0)
    lefty, steady, quick = (volunteer(campaign, name) for name in ("lefty", "steady", "quick"))
    db.session.commit()
    answer_many(campaign, lefty, 25, "left", start, 5, rng)  # 12 a minute: no burst
    answer_many(campaign, steady, 25, "equal", start, 7, rng)
    answer_many(campaign, quick, 20, "right", start, 1, rng)  # 20 in one minute
    for p in (lefty, steady, quick):
        row = db.session.get(Participation, p.id)
        assert (row.answers_total, row.answers_left, row.answers_right, row.answers_equal, row.answers_too_fast,
                row.busiest_minute) == recount(p.id)
    made = suspicious.report(campaign)
    found = {entry["username"]: entry for entry in made["volunteers"]}
    # The same volunteers as the rule applied to a recount of the answers.
    expected = {p.user.username for p in (lefty, steady, quick)
                if suspicious.reasons_of(*recount(p.id)[:5]) or recount(p.id)[5] > suspicious.BURST_PER_MINUTE}
    assert set(found) == expected and made["flagged"] == len(expected)
    assert [code for code, _share in found["steady"]["reasons"]] == ["equal"] and found["steady"]["burst"] is None
    assert found["quick"]["burst"] == 20 and found["quick"]["answers"] == 20


def test_the_page_lists_at_most_shown_and_says_how_many(app, make_campaign, monkeypatch):
    monkeypatch.setattr(suspicious, "SHOWN", 2)
    campaign = make_campaign(sentences=30, systems=("A", "B"))
    rng = random.Random(4)
    start = utcnow()
    for n, count in enumerate((21, 23, 22)):
        p = volunteer(campaign, f"same{n}")
        db.session.commit()
        answer_many(campaign, p, count, "equal", start, 5, rng)
    page = staff_client(app, "organiser").get("/organiser/c/test/suspicious").get_data(as_text=True)
    assert "same1" in page and "same2" in page and "same0" not in page  # the most answers first
    assert "Showing the 2 with the most answers of 3." in page
