"""Numbers, percentages and times in the interface language's own style,
one style per page, times with their zone (UTC)."""
import re
from datetime import datetime, timedelta

import pytest
from flask_babel import force_locale, format_datetime

from app.extensions import db
from app.formats import percent, utc
from app.models import utcnow
from app.services import accounts, raffle
from app.services.raffle_rules import sha256_hex
from helpers import csrf_token, give_every_campaign

# 81 of 1,190 judgments: 6.8 % done.
STYLES = {
    "en": {"count": "81 / 1,190", "completion": "6.8%"},
    "es": {"count": "81 / 1.190", "completion": "6,8\xa0%"},
    "eu": {"count": "81 / 1.190", "completion": "%\xa06,8"},
}


def _organiser(app, language):
    user = accounts.create_user(f"boss-{language}@example.org", f"boss-{language}", "a long password 1",
                                role="organiser")
    user.email_confirmed_at = utcnow()
    give_every_campaign(user)
    client = app.test_client()
    client.set_cookie("bozka_lang", language, domain="localhost")
    client.post("/login", data={"csrf_token": csrf_token(client, "/login"), "email": user.email,
                                "password": "a long password 1"})
    return client


@pytest.mark.parametrize("language", ["eu", "es", "en"])
def test_the_dashboard_writes_numbers_in_the_interface_language(app, make_campaign, language):
    campaign = make_campaign()
    campaign.target_judgments, campaign.collected_judgments = 1190, 81
    db.session.commit()
    page = _organiser(app, language).get(f"/organiser/c/{campaign.slug}/panel").get_data(as_text=True)
    text = re.sub(r"[ \t\r\n]+", " ", re.sub(r"<[^>]+>", " ", page))
    style = STYLES[language]
    assert style["count"] in text
    assert style["completion"] in text
    # No figure in another style: no English decimal point in Basque or Spanish, no bare "6.81%".
    assert "6.81" not in text and "%6" not in text
    if language != "en":
        assert not re.search(r"\b\d+\.\d\b", text), re.search(r"\b\d+\.\d\b", text).group(0)


@pytest.mark.parametrize("language", ["eu", "es"])
def test_the_raffle_page_names_the_time_zone(app, client, make_campaign, language):
    campaign = make_campaign()
    campaign.ends_at = (utcnow() + timedelta(days=1)).replace(second=0, microsecond=0)
    committed = datetime(2026, 11, 25, 6, 7, 47)
    raffle.commit(campaign, sha256_hex("seed"), None, committed, beacon="drand quicknet round 1",
                  beacon_at=campaign.ends_at + timedelta(minutes=1))
    db.session.commit()
    client.set_cookie("bozka_lang", language, domain="localhost")
    page = client.get(f"/c/{campaign.slug}/raffle").get_data(as_text=True)
    with app.test_request_context(), force_locale(language):
        when = format_datetime(committed, "medium")
        shown = str(utc(committed))
    assert when in shown and "UTC" in shown
    assert shown in page
    assert ":07:47" in when and "2026-11-25" not in page  # Babel's style of the language, not ISO


def test_percentages_follow_the_language_pattern(app):
    with app.test_request_context():
        for language, expected in (("en", "6.8%"), ("es", "6,8\xa0%"), ("eu", "%\xa06,8")):
            with force_locale(language):
                assert percent(0.0681) == expected
                assert percent(1 / 3, 0) == expected.replace("6,8", "33").replace("6.8", "33")
        assert percent(None) == "–"
