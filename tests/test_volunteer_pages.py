"""Small things a new volunteer met (issue 22): the home page's title, the
password rule before sending, a "native speaker" level in the profile,
the exports and the dashboard."""
import csv
import io
import re

from sqlalchemy import select

from app.extensions import db
from app.models import Participation
from helpers import csrf_token


def test_the_home_page_title_names_the_site_once(client, make_campaign):
    make_campaign(sentences=5)
    db.session.execute(db.text("UPDATE campaigns SET status = 'draft'"))  # no campaign: the home page itself
    db.session.commit()
    html = client.get("/").get_data(as_text=True)
    title = re.search(r"<title>(.*?)</title>", html, re.S).group(1)
    assert title == "Help evaluate machine translation · Bozka"


def test_the_password_rule_is_shown_before_sending_and_described_by(client, make_campaign):
    make_campaign(sentences=5)
    html = client.get("/c/test/register").get_data(as_text=True)
    rule = "At least 8 characters; not a common password, nor your username or email."
    assert f'<small id="password-help">{rule}</small>' in html
    field = re.search(r'<input[^>]*id="password"[^>]*>', html).group(0)
    assert 'aria-describedby="password-help"' in field


def test_native_speaker_is_a_level_above_c1_c2_and_is_exported(app, client, make_campaign):
    from helpers import staff_client

    make_campaign(sentences=5)
    html = client.get("/c/test/register").get_data(as_text=True)
    options = re.findall(r'<option value="([^"]*)"', html[html.index('id="target_level"'):].split("</select>")[0])
    assert options[-2:] == ["C1-C2", "native"]
    token = csrf_token(client, "/c/test/register")
    client.post("/c/test/register", data={
        "csrf_token": token, "username": "ane", "email": "ane@example.org", "password": "correct horse 1",
        "password2": "correct horse 1", "age_group": "26-35", "studies_level": "university",
        "studies_field": "humanities", "source_level": "C1-C2", "target_level": "native", "consent": "y"})
    assert db.session.scalar(select(Participation.target_level)) == "native"
    organiser = staff_client(app, "organiser", "organiser1")
    rows = list(csv.DictReader(io.StringIO(organiser.get("/organiser/c/test/export/volunteers.csv").get_data(as_text=True))))
    assert rows[0]["target_level"] == "native"
    assert organiser.get("/organiser/c/test/").status_code == 200
