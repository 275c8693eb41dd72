"""Announcements are kept (issue 22): shown to a volunteer who opens the
judging page later, until they dismiss it, a newer one replaces it, or it
expires; the live message still goes out."""
from datetime import timedelta

import pytest

from sqlalchemy import select

from app.extensions import db, socketio
from app.models import Announcement, Participation, utcnow
from app.services import announcements
from helpers import csrf_token, register, staff_client


@pytest.fixture
def organiser(app):
    # Made before the campaign: an admin (an organiser would need to be given it).
    return staff_client(app, "admin", "admin1")


def _announce(organiser, text):
    token = csrf_token(organiser, "/organiser/c/test/")
    return organiser.post("/organiser/c/test/announce", data={"csrf_token": token, "text": text})


def _banner(client):
    html = client.get("/c/test/evaluate").get_data(as_text=True)
    start = html.index('id="announcement"')
    return html[start - 80:html.index("</div>", start)]


def test_a_volunteer_who_comes_later_sees_the_latest_announcement_until_dismissed(app, client, make_campaign, organiser):
    make_campaign(sentences=20)
    _announce(organiser, "<b>Old</b> news")
    _announce(organiser, "<b>Prize day</b> tomorrow!")
    register(client)  # joins after both were sent
    banner = _banner(client)
    assert "&lt;b&gt;Prize day&lt;/b&gt; tomorrow!" in banner and "Old" not in banner and " hidden" not in banner
    latest = db.session.scalar(select(Announcement).order_by(Announcement.id.desc()))
    token = csrf_token(client, "/c/test/evaluate")
    response = client.post("/c/test/announcement/dismiss", data={"csrf_token": token, "announcement": latest.id})
    assert response.status_code == 302 and response.headers["Location"].endswith("/c/test/evaluate")
    banner = _banner(client)
    assert " hidden" in banner and "Prize day" not in banner
    # A newer one shows again.
    _announce(organiser, "Second week starts")
    assert "Second week starts" in _banner(client)


def test_a_dismissal_needs_its_csrf_token_and_an_announcement_of_the_campaign(app, client, make_campaign, organiser):
    make_campaign(sentences=20)
    _announce(organiser, "Hello")
    register(client)
    latest = db.session.scalar(select(Announcement))
    client.post("/c/test/announcement/dismiss", data={"announcement": latest.id})
    token = csrf_token(client, "/c/test/evaluate")
    client.post("/c/test/announcement/dismiss", data={"csrf_token": token, "announcement": latest.id + 1000})
    assert db.session.scalar(select(Participation.announcement_seen_id)) is None
    assert "Hello" in _banner(client)


def test_announcements_expire(app, make_campaign):
    campaign = make_campaign(sentences=5)
    now = utcnow()
    kept = announcements.publish(campaign.id, "Soon over", None, now, lifetime=timedelta(hours=1))
    db.session.commit()
    assert announcements.for_volunteer(campaign.id, None, now + timedelta(minutes=59)).id == kept.id
    assert announcements.for_volunteer(campaign.id, None, now + timedelta(hours=1, minutes=1)) is None
    assert announcements.for_volunteer(campaign.id, kept.id, now) is None


def test_the_live_announcement_still_reaches_connected_volunteers(app, client, make_campaign, organiser):
    make_campaign(sentences=20)
    register(client)
    sio = socketio.test_client(app, flask_test_client=client)
    sio.emit("join", {"campaign": "test"}, callback=True)
    sio.get_received()
    _announce(organiser, "Live")
    events = [e["args"][0] for e in sio.get_received() if e["name"] == "announcement"]
    assert events == [{"text": "Live", "id": db.session.scalar(select(Announcement.id))}]
