"""Gaming the game: judgments faster than reading are kept but do not
count, a daily cap, the suspicious-pattern report, the honeypot. The signs
that hold a volunteer: tests/security/test_holds.py."""
import random
import re
from datetime import timedelta

from sqlalchemy import select

from app.extensions import db
from app.models import Item, Participation, User
from app.services import evaluation, quality, suspicious
from app.services.security import address_hash
from helpers import register
from security_helpers import START, join_volunteer, judge_items, login, make_staff


def test_the_floor_follows_the_length_of_the_texts():
    # Two 20-word translations of a 20-word source: 2.25 s.
    assert quality.too_fast(2.2, 60) and not quality.too_fast(2.3, 60)
    assert quality.too_fast(0.4, 2) and not quality.too_fast(0.6, 2)  # never under half a second
    assert not quality.too_fast(0.1, 40, seconds_per_word=0)  # a campaign may turn it off


def test_fast_judgments_are_kept_marked_and_do_not_count(app, make_campaign):
    campaign = make_campaign(sentences=20, control_first=0, control_every=1000, fast_seconds_per_word=0.0375)
    participation = join_volunteer(campaign, "quick")
    assert judge_items(campaign, participation, ["left"] * 4, [0.2, 30, 0.1, 30]) == ["accepted"] * 4
    flags = db.session.scalars(select(Item.too_fast).where(Item.answered_at.is_not(None)).order_by(Item.position)).all()
    assert flags == [True, False, True, False]
    db.session.refresh(campaign)
    db.session.refresh(participation)
    assert campaign.collected_judgments == 4 and participation.items_answered == 4  # stored
    assert participation.items_counted == 2  # but only the two read count toward tickets and the ranking
    assert participation.dismissed_at is None


def test_the_daily_cap_stops_serving_until_the_next_day(app, make_campaign):
    campaign = make_campaign(sentences=20, control_first=0, control_every=1000, daily_cap=3)
    participation = join_volunteer(campaign, "keen")
    # The third answer is kept; its reply already says "capped" (no next item).
    assert judge_items(campaign, participation, ["left"] * 5, [30] * 5) == ["accepted"] * 2 + ["capped"] * 2
    rng = random.Random(1)
    later = evaluation.show(campaign, participation.id, START + timedelta(hours=5), rng)
    assert later.status == "capped" and later.item is None
    tomorrow = evaluation.show(campaign, participation.id, START + timedelta(days=1), rng)
    assert tomorrow.status == "ok" and tomorrow.item is not None
    db.session.refresh(participation)
    assert participation.dismissed_at is None and participation.items_answered == 3


def test_the_daily_cap_through_the_site(app, client, make_campaign):
    make_campaign(sentences=20, control_first=0, control_every=1000, daily_cap=2)
    register(client)
    from helpers import csrf_token

    token = csrf_token(client, "/c/test/welcome")
    for _ in range(2):
        item = client.get("/c/test/api/item").get_json()["item"]
        client.post("/c/test/api/judgment", json={"token": item["token"], "choice": "left"},
                    headers={"X-CSRFToken": token})
    data = client.get("/c/test/api/item").get_json()
    assert data["status"] == "capped" and data["item"] is None
    page = client.get("/c/test/evaluate").get_data(as_text=True)
    assert "tomorrow" in page.lower() or "today" in page.lower()


def test_the_suspicious_pattern_report(app, make_campaign):
    campaign = make_campaign(sentences=30, control_first=0, control_every=1000, fast_seconds_per_word=0.0375)
    n = 25
    lefty = join_volunteer(campaign, "lefty", "addr-1")
    judge_items(campaign, lefty, ["left"] * n, [20] * n)
    equal = join_volunteer(campaign, "equal", "addr-1")
    judge_items(campaign, equal, ["equal"] * 18 + ["left", "right"] * 4, [20] * n)
    fast = join_volunteer(campaign, "fast", "addr-1")
    judge_items(campaign, fast, ["left", "right", "equal"] * 9, [0.2] * n)
    honest = join_volunteer(campaign, "honest", "addr-2")
    judge_items(campaign, honest, ["left", "right", "left", "equal", "right"] * 5, [20] * n)
    other = join_volunteer(campaign, "other", "addr-2")
    judge_items(campaign, other, ["right", "left"] * 3, [20] * 6)

    report = suspicious.report(campaign)
    by_name = {entry["username"]: entry for entry in report["volunteers"]}
    assert set(by_name) == {"lefty", "equal", "fast"}
    assert [code for code, _share in by_name["lefty"]["reasons"]] == ["same_side"]
    assert dict(by_name["equal"]["reasons"])["equal"] >= suspicious.ALWAYS_EQUAL
    assert [code for code, _share in by_name["fast"]["reasons"]] == ["fast"]
    assert by_name["fast"]["burst"] > suspicious.BURST_PER_MINUTE
    assert by_name["lefty"]["burst"] is None  # three a minute
    assert report["addresses"] == [{"accounts": 3, "usernames": ["equal", "fast", "lefty"]}]
    # Nobody was punished by the report.
    assert db.session.scalar(select(db.func.count(Participation.id)).where(Participation.dismissed_at.is_not(None))) == 0
    assert db.session.scalar(select(db.func.count(Item.id)).where(Item.discarded_at.is_not(None))) == 0


def test_a_burst_alone_is_reported(app, make_campaign):
    campaign = make_campaign(sentences=30, control_first=0, control_every=1000)
    # Three seconds apart: not "too fast" for short outputs, but 20 in a minute.
    bursty = join_volunteer(campaign, "bursty")
    judge_items(campaign, bursty, ["left", "right"] * 10, [3] * 20)
    entries = suspicious.report(campaign)["volunteers"]
    assert [(e["username"], e["reasons"], e["burst"] >= 16) for e in entries] == [("bursty", [], True)]


def test_the_report_is_for_organisers_only(app, make_campaign):
    make_campaign()
    for role in ("organiser", "researcher", "volunteer"):
        make_staff(role, role)
    expected = {"organiser": 200, "researcher": 403, "volunteer": 403}
    for role, status in expected.items():
        client = app.test_client()
        login(client, f"{role}@example.org")
        assert client.get("/organiser/c/test/suspicious").status_code == status, role
    assert app.test_client().get("/organiser/c/test/suspicious").status_code == 302  # to the login page


# --- the honeypot ------------------------------------------------------------------

def test_the_honeypot_stops_a_bot_and_keeps_nothing(app, client, make_campaign):
    make_campaign()
    from helpers import csrf_token

    token = csrf_token(client, "/c/test/register")
    response = client.post("/c/test/register", data={
        "csrf_token": token, "username": "botty", "email": "bot@example.org", "password": "correct horse 1",
        "password2": "correct horse 1", "age_group": "26-35", "studies_level": "university",
        "studies_field": "humanities", "source_level": "B1-B2", "target_level": "C1-C2", "consent": "y",
        "website": "http://spam.example/",
    })
    assert response.status_code == 200
    assert "could not be completed" in response.get_data(as_text=True)
    assert db.session.scalar(select(db.func.count(User.id))) == 0
    # A person leaves it empty and is registered.
    assert register(client).status_code == 302
    assert db.session.scalar(select(db.func.count(User.id))) == 1


def test_the_honeypot_is_hidden_from_people(app, client, make_campaign):
    make_campaign()
    page = client.get("/c/test/register").get_data(as_text=True)
    wrapper = re.search(r'<div class="hp" aria-hidden="true">(.*?)</div>', page, re.S)
    assert wrapper, "the honeypot is missing"
    assert 'tabindex="-1"' in wrapper.group(1) and 'autocomplete="off"' in wrapper.group(1)
    with open("static/css/bozka.css", encoding="utf-8") as handle:
        css = handle.read()
    assert re.search(r"\.hp\s*\{[^}]*(inset-inline-start:\s*-\d{4,}px|display:\s*none)", css)  # off screen, start side


def test_the_signup_address_is_kept_as_a_keyed_hash_only(app, client, make_campaign):
    make_campaign()
    register(client)
    user = db.session.scalar(select(User))
    assert user.signup_address == address_hash(app.config["SECRET_KEY"], "127.0.0.1")
    assert "127.0.0.1" not in user.signup_address
    assert address_hash("another key", "127.0.0.1") != user.signup_address
