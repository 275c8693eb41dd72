"""Where people land after logging in or confirming their email (issue 22):
back where they were going (Flask-Login's ``next``, on this site only), or
their own campaign."""
import re

import pytest
from flask import current_app
from sqlalchemy import select

from app.extensions import db
from app.models import User, utcnow
from app.services import accounts
from helpers import csrf_token, register


def _log_out(client):
    client.post("/logout", data={"csrf_token": csrf_token(client, "/c/test/welcome")})


def _log_in(client, url="/login", email="ane@example.org", password="correct horse 1"):
    token = csrf_token(client, url)
    return client.post(url, data={"csrf_token": token, "email": email, "password": password})


def test_a_volunteer_in_one_campaign_lands_on_its_judging_page(client, make_campaign):
    make_campaign(sentences=20)
    register(client)
    _log_out(client)
    response = _log_in(client)
    assert response.status_code == 302 and response.headers["Location"] == "/c/test/evaluate"


def test_login_goes_back_to_the_page_that_asked_for_it(client, make_campaign):
    make_campaign(sentences=20)
    register(client)
    _log_out(client)
    response = client.get("/c/test/welcome")
    assert response.status_code == 302
    login_url = response.headers["Location"]
    assert "next=" in login_url
    response = _log_in(client, login_url)
    assert response.headers["Location"] == "/c/test/welcome"


def test_the_header_log_in_link_carries_the_page(client, make_campaign):
    make_campaign(sentences=20)
    html = client.get("/c/test/raffle").get_data(as_text=True)
    assert re.search(r'href="/login\?next=/c/test/raffle', html)


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/", "/\\evil.example"])
def test_next_off_the_site_falls_back_to_the_campaign(client, make_campaign, target):
    make_campaign(sentences=20)
    register(client)
    _log_out(client)
    response = _log_in(client, "/login?next=" + target)
    assert response.headers["Location"] == "/c/test/evaluate"


def test_organisers_land_on_their_campaigns(client, make_campaign):
    make_campaign(sentences=20)
    user = accounts.create_user("org@example.org", "org", "staff-password", role="organiser")
    user.email_confirmed_at = utcnow()
    db.session.commit()
    response = _log_in(client, email="org@example.org", password="staff-password")
    assert response.headers["Location"] == "/organiser/"


def test_a_volunteer_in_no_or_two_campaigns_lands_home(client, make_campaign):
    make_campaign(sentences=20)
    accounts.create_user("lone@example.org", "lone", "password-123")
    db.session.commit()
    response = _log_in(client, email="lone@example.org", password="password-123")
    assert response.headers["Location"] == "/"


def test_confirming_the_email_leads_to_the_campaign(client, make_campaign):
    make_campaign(sentences=20)
    register(client)
    user = db.session.scalar(select(User))
    token = accounts.make_token(current_app.config["SECRET_KEY"], "confirm", user)
    response = client.get(f"/confirm/{token}")
    assert response.headers["Location"] == "/c/test/evaluate"
    assert "Thank you: your email is confirmed." in client.get("/c/test/evaluate").get_data(as_text=True)


def test_confirming_while_logged_out_logs_in_and_comes_back(client, make_campaign):
    make_campaign(sentences=20)
    register(client)
    _log_out(client)
    user = db.session.scalar(select(User))
    token = accounts.make_token(current_app.config["SECRET_KEY"], "confirm", user)
    response = client.get(f"/confirm/{token}")
    assert response.headers["Location"] == "/c/test/evaluate"
    login = client.get("/c/test/evaluate")
    assert login.status_code == 302 and "next=" in login.headers["Location"]
    assert _log_in(client, login.headers["Location"]).headers["Location"] == "/c/test/evaluate"
