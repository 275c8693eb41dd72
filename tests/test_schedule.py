"""Schedules and rules said plainly (issue 18, item 7): before the start the
pages say when the campaign opens and registration goes on; after the end
they say it has ended and lead to the raffle; the instructions and the
registration page state the rule of the first control sentences."""
import re
from datetime import datetime, timedelta

from hypothesis import given, strategies as st

from app.extensions import db
from app.models import Campaign, utcnow
from app.services import accounts
from app.services.schedule import ENDED, OPEN, UPCOMING, phase
from helpers import csrf_token, register

NOW = datetime(2026, 6, 1, 12, 0)


def test_phase():
    hour = timedelta(hours=1)
    assert phase("open", None, None, NOW) == OPEN
    assert phase("open", NOW + hour, None, NOW) == UPCOMING
    assert phase("open", NOW - hour, NOW + hour, NOW) == OPEN
    assert phase("open", None, NOW, NOW) == ENDED  # the end itself is past
    assert phase("closed", NOW + hour, None, NOW) == ENDED
    assert phase("draft", None, None, NOW) == UPCOMING


times = st.one_of(st.none(), st.datetimes(min_value=NOW - timedelta(days=2), max_value=NOW + timedelta(days=2)))


@given(st.sampled_from(["draft", "open", "closed"]), times, times)
def test_open_is_exactly_when_items_are_served(status, starts_at, ends_at):
    campaign = Campaign(status=status, starts_at=starts_at, ends_at=ends_at)
    assert (phase(status, starts_at, ends_at, NOW) == OPEN) == campaign.is_serving_at(NOW)


def _schedule(campaign, **times):
    for name, value in times.items():
        setattr(campaign, name, value)
    db.session.commit()


def test_before_the_start_the_pages_say_when_it_opens(app, client, make_campaign):
    campaign = make_campaign()
    _schedule(campaign, starts_at=datetime(2031, 3, 5, 9, 30))
    page = client.get("/c/test/").get_data(as_text=True)
    assert 'This campaign opens on <time datetime="2031-03-05T09:30Z">March 5, 2031, 9:30:00\u202fAM UTC</time>.' in page
    assert "Register" in page and "Continue evaluating" not in page
    # In the volunteer's language, with the zone.
    page = client.get("/c/test/", headers={"Accept-Language": "es"}).get_data(as_text=True)
    assert "5 de marzo de 2031, 9:30:00 UTC" in page
    page = client.get("/c/test/", headers={"Accept-Language": "eu"}).get_data(as_text=True)
    assert "2031(e)ko martxoaren 5(a)" in page and "UTC" in page
    # Registration goes on; nothing leads to a "closed" page.
    assert "This campaign opens on" in client.get("/c/test/register").get_data(as_text=True)
    response = register(client)
    assert response.status_code == 302 and response.headers["Location"].endswith("/c/test/instructions")
    instructions = client.get("/c/test/instructions").get_data(as_text=True)
    assert "This campaign opens on" in instructions and "Show me the sentences" not in instructions
    welcome = client.get("/c/test/welcome").get_data(as_text=True)
    assert "This campaign opens on" in welcome and "Continue evaluating" not in welcome
    evaluate = client.get("/c/test/evaluate").get_data(as_text=True)
    assert "This campaign has not opened yet" in evaluate and "closed" not in evaluate
    # Once the start has passed, the same pages lead to the sentences.
    _schedule(campaign, starts_at=utcnow() - timedelta(minutes=1))
    assert "Continue evaluating" in client.get("/c/test/welcome").get_data(as_text=True)
    assert "Show me the sentences" in client.get("/c/test/instructions").get_data(as_text=True)


def _ended_pages(client, *paths):
    for path in paths:
        page = client.get(path).get_data(as_text=True)
        assert "This campaign has ended." in page, path
        assert 'href="/c/test/raffle"' in page, path
        for offer in ("Continue evaluating", "Show me the sentences", ">Register<", ">Take part<"):
            assert offer not in page, (path, offer)


def test_after_the_end_the_pages_say_it_ended(app, client, make_campaign):
    campaign = make_campaign()
    register(client)
    _schedule(campaign, ends_at=utcnow() - timedelta(minutes=1))
    _ended_pages(client, "/c/test/welcome", "/c/test/instructions")
    _ended_pages(app.test_client(), "/c/test/", "/c/test/instructions")
    _schedule(campaign, ends_at=None, status="closed")
    _ended_pages(client, "/c/test/welcome", "/c/test/instructions")
    _ended_pages(app.test_client(), "/c/test/")


def test_the_rule_of_the_first_controls_is_stated(app, client, make_campaign):
    """As pairwise's controls.dismissal_reason applies it: at every check_every-th item,
    not at once (the wording for each setting: tests/test_rules_told.py)."""
    campaign = make_campaign()
    first = "If you missed any of the first 2 control sentences, your participation ends at the next check."
    for path in ("/c/test/instructions", "/c/test/register"):
        page = client.get(path).get_data(as_text=True)
        assert "checked after every 10 sentences you judge" in page, path
        assert first in page, path
        assert "more than 1 in 3 of all your control sentences" in page, path
        assert "at once" not in page and "fail too many" not in page
    _schedule(campaign, control_first=1)
    page = client.get("/c/test/instructions").get_data(as_text=True)
    assert "If you missed the first control sentence, your participation ends at the next check." in page
    # A logged-in visitor joins through the join page: the rule is there too.
    register(client)
    other = app.test_client()
    accounts.create_user("second@example.org", "second", "correct horse 1")
    db.session.commit()
    token = csrf_token(other, "/login")
    other.post("/login", data={"csrf_token": token, "email": "second@example.org", "password": "correct horse 1"})
    page = other.get("/c/test/join").get_data(as_text=True)
    assert re.search(r"If you missed the first control sentence, your participation ends at the next check", page)
    _schedule(campaign, control_first=0)
    assert "first control sentence" not in client.get("/c/test/instructions").get_data(as_text=True)
