"""The rough edges a newcomer met on the volunteer's side (issue 31, items 4,
5 and 6), through Flask's test client: the dismissed page says why, the
language chosen before registering is the account's (its pages and every
mail), and the judging, practice, home and instructions pages say the right
thing in the page's language. The served checks are in
tests/e2e/test_e2e_phone.py."""
import os
import re

import pytest
from sqlalchemy import select
from werkzeug.datastructures import LanguageAccept

from app.choices import DISMISSAL_REASONS, by_live_rule
from app.extensions import db
from app.languages import LANGUAGE_COOKIE, expressed_locale, mail_locale
from app.models import OutboxMail, Participation, User, utcnow
from app.services import answers, review, score_quality
from app.protocols.pairwise import controls as control_rules
from app.services.campaign_writer import create_campaign
from app.services.importer import read_campaign
from helpers import QUIET_SIGNS, csrf_token, register, write_campaign

CONTROLS_FAILED = "you have not passed the control sentences"
BY_ORGANISERS = "The organisers reviewed your answers and ended your participation in this campaign."


def _participation(username="ane"):
    return db.session.scalar(select(Participation).join(User).where(User.username == username))


def _dismissed_page(client, reason, slug="test"):
    participation = _participation()
    answers.dismiss(participation.campaign, participation, reason, utcnow())
    db.session.commit()
    return client.get(f"/c/{slug}/evaluate").get_data(as_text=True)


# --- item 4: the dismissed page says why --------------------------------------------------------


def test_every_live_rule_code_is_labelled_and_free_text_is_not():
    for code in (control_rules.INITIAL_CONTROL_FAILED, control_rules.CONTROL_FAILURE_RATE, score_quality.NOT_LOWER,
                 score_quality.LOW_VARIATION):
        assert by_live_rule(code)
    assert {code for code, _ in DISMISSAL_REASONS} == {
        control_rules.INITIAL_CONTROL_FAILED, control_rules.CONTROL_FAILURE_RATE, score_quality.NOT_LOWER,
        score_quality.LOW_VARIATION}
    for written in ("Answers from a bot", "first_controls_failed ", "", None):
        assert not by_live_rule(written)


@pytest.mark.parametrize("reason", [control_rules.INITIAL_CONTROL_FAILED, control_rules.CONTROL_FAILURE_RATE])
def test_a_volunteer_dismissed_by_the_controls_is_told_so(app, client, make_campaign, reason):
    make_campaign()
    register(client)
    page = _dismissed_page(client, reason)
    assert "Thank you for your time" in page
    assert CONTROLS_FAILED in page and BY_ORGANISERS not in page


def test_a_volunteer_dismissed_by_an_organiser_is_not_told_they_failed_the_controls(app, client, make_campaign):
    campaign = make_campaign()
    register(client)
    participation = _participation()
    # As the organiser's page does: their own words, kept with the discarded judgments.
    review.dismiss(campaign, participation, "Pasted the same <answer> everywhere", utcnow())
    db.session.commit()
    page = client.get("/c/test/evaluate").get_data(as_text=True)
    assert BY_ORGANISERS in page
    assert CONTROLS_FAILED not in page and "damaged translations" not in page
    assert "Pasted the same" not in page  # the organiser's note is theirs, not shown to the volunteer
    # In Basque too.
    client.set_cookie(LANGUAGE_COOKIE, "eu", domain="localhost")
    db.session.get(User, participation.user_id).locale = "eu"
    db.session.commit()
    basque = client.get("/c/test/evaluate").get_data(as_text=True)
    assert '<html lang="eu"' in basque and BY_ORGANISERS not in basque
    assert re.search(r'<p id="dismissed-by-organiser">[^<]+</p>', basque)


@pytest.fixture
def da_campaign(app, tmp_path):
    folder = write_campaign(str(tmp_path / "da"), protocol="da", reference=True, **QUIET_SIGNS)
    if os.path.exists(os.path.join(folder, "controls.tsv")):
        os.remove(os.path.join(folder, "controls.tsv"))  # a DA folder has none
    campaign = create_campaign(read_campaign(folder))
    db.session.commit()
    return campaign


DA_TOLD = {
    score_quality.NOT_LOWER: "did not tell the damaged translations we showed from the good ones",
    score_quality.LOW_VARIATION: "your scores barely changed whatever the translation",
    "Scored everything 50 on purpose": BY_ORGANISERS,
}


@pytest.mark.parametrize("reason", list(DA_TOLD))
def test_a_da_volunteer_is_told_the_reason_they_were_dismissed_for(app, client, da_campaign, reason):
    register(client)
    page = _dismissed_page(client, reason)
    assert DA_TOLD[reason] in page
    assert not any(told in page for other, told in DA_TOLD.items() if other != reason)
    assert CONTROLS_FAILED not in page and reason not in page


# --- item 5: the language chosen before registering is the account's ----------------------------


def test_the_rule_of_an_accounts_language():
    available = ["en", "es", "eu", "ur"]
    # At registration: the switcher's choice, else the browser's; never a default nobody chose.
    assert expressed_locale(available, "eu", LanguageAccept([("es", 1)])) == "eu"
    assert expressed_locale(available, None, LanguageAccept([("fr", 1), ("es", 0.5)])) == "es"
    assert expressed_locale(available, "xx", LanguageAccept([("fr", 1)])) is None
    assert mail_locale(available, "ur", "es") == "ur"
    assert mail_locale(available, None, "es") == "es"
    assert mail_locale(available, "xx", "yy") == "en"


def _mails_to(address):
    return db.session.scalars(select(OutboxMail).where(OutboxMail.recipient == address).order_by(OutboxMail.id)).all()


def _register_in(app, language, **who):
    client = app.test_client()
    client.set_cookie(LANGUAGE_COOKIE, language, domain="localhost")
    register(client, **who)
    return client


def test_the_language_chosen_before_registering_is_saved_and_mails_use_it(app, make_campaign):
    make_campaign()
    _register_in(app, "eu")
    user = db.session.scalar(select(User).where(User.username == "ane"))
    assert user.locale == "eu"
    (confirmation,) = _mails_to("ane@example.org")
    assert confirmation.subject == _in("eu", "Confirm your email for Bozka")

    # Someone registers again with the same email, from a Spanish page: the owner is told in Basque.
    stranger = app.test_client()
    stranger.set_cookie(LANGUAGE_COOKIE, "es", domain="localhost")
    register(stranger, username="other", email="ane@example.org")
    notice = _mails_to("ane@example.org")[-1]
    assert "ane" in notice.body and "Someone tried" not in notice.subject
    assert notice.subject == _in("eu", "Someone tried to register on Bozka with your email")

    # A password reset asked from an English page: in Basque too.
    visitor = app.test_client()
    token = csrf_token(visitor, "/reset")
    visitor.post("/reset", data={"csrf_token": token, "email": "ane@example.org"})
    reset = _mails_to("ane@example.org")[-1]
    assert reset.subject == _in("eu", "Reset your Bozka password")
    assert db.session.scalar(select(User).where(User.username == "ane")).locale == "eu"  # still hers


def _in(language, message):
    from flask_babel import force_locale, gettext

    with force_locale(language):
        translated = gettext(message)
    assert translated != message, f"{message!r} has no {language} translation"
    return translated


def test_a_new_device_shows_the_accounts_language_once_logged_in(app, make_campaign):
    make_campaign()
    _register_in(app, "ur", username="sana", email="sana@example.org")
    device = app.test_client()  # no cookie; the browser asks for English
    headers = {"Accept-Language": "en-GB,en;q=0.9"}
    assert '<html lang="en"' in device.get("/login", headers=headers).get_data(as_text=True)
    token = csrf_token(device, "/login")
    answer = device.post("/login", data={"csrf_token": token, "email": "sana@example.org",
                                         "password": "correct horse 1"}, headers=headers)
    assert answer.status_code == 302
    assert f"{LANGUAGE_COOKIE}=ur" in answer.headers.get("Set-Cookie", "")  # kept on the device after log-out
    page = device.get("/c/test/instructions", headers=headers).get_data(as_text=True)
    assert '<html lang="ur" dir="rtl"' in page
    # The confirmation link opened on yet another device: that one keeps her language too.
    (mail,) = _mails_to("sana@example.org")
    link = re.search(r"http://localhost(/confirm/\S+)", mail.body).group(1)
    answer = app.test_client().get(link, headers=headers)
    assert answer.status_code == 302 and f"{LANGUAGE_COOKIE}=ur" in answer.headers.get("Set-Cookie", "")


def test_registering_where_nobody_chose_a_language_keeps_none(app, make_campaign):
    make_campaign()
    register(app.test_client())  # no cookie, no Accept-Language: the page fell back on English
    user = db.session.scalar(select(User).where(User.username == "ane"))
    assert user.locale is None
    # The browser's language is a choice too; the switcher's comes first.
    client = app.test_client()
    client.set_cookie(LANGUAGE_COOKIE, "es", domain="localhost")
    client.environ_base["HTTP_ACCEPT_LANGUAGE"] = "eu"
    register(client, username="mikel", email="mikel@example.org")
    assert db.session.scalar(select(User).where(User.username == "mikel")).locale == "es"
    browser = app.test_client()
    browser.environ_base["HTTP_ACCEPT_LANGUAGE"] = "eu,en;q=0.5"
    register(browser, username="jon", email="jon@example.org")
    assert db.session.scalar(select(User).where(User.username == "jon")).locale == "eu"
    # A language chosen later, with the switcher, replaces it.
    token = csrf_token(browser, "/c/test/instructions")
    browser.post("/language", data={"csrf_token": token, "lang": "ur"})
    assert db.session.scalar(select(User).where(User.username == "jon")).locale == "ur"


# --- item 6: the page's language, the protocol, the practice said once ---------------------------


def _with_texts(campaign):
    campaign.texts = {"eu": {"name": "Proba kanpaina"}}
    db.session.commit()


def test_the_judging_page_shows_the_campaign_name_in_the_page_language(app, client, make_campaign):
    _with_texts(make_campaign())
    register(client)
    client.set_cookie(LANGUAGE_COOKIE, "eu", domain="localhost")
    db.session.scalar(select(User)).locale = "eu"
    db.session.commit()
    page = client.get("/c/test/evaluate").get_data(as_text=True)
    assert '<span class="campaign-name"><bdi lang="eu" dir="ltr">Proba kanpaina</bdi></span>' in page
    assert "Test campaign" not in page
    db.session.scalar(select(User)).locale = "es"  # no Spanish name: the default, in its language
    db.session.commit()
    client.set_cookie(LANGUAGE_COOKIE, "es", domain="localhost")
    page = client.get("/c/test/evaluate").get_data(as_text=True)
    assert '<span class="campaign-name"><bdi lang="en" dir="ltr">Test campaign</bdi></span>' in page


def test_the_practice_explanation_says_which_language_it_is_in(app, client, make_campaign):
    make_campaign(practice=2)
    register(client)
    token = csrf_token(client, "/c/test/practice")
    english = client.post("/c/test/practice", data={"csrf_token": token, "number": 1, "better": "left",
                                                    "choice": "left"}).get_data(as_text=True)
    assert "Because 1." in english and 'id="why-note"' not in english
    db.session.scalar(select(User)).locale = "eu"
    db.session.commit()
    basque = client.post("/c/test/practice", data={"csrf_token": token, "number": 1, "better": "left",
                                                   "choice": "left"}).get_data(as_text=True)
    note = re.search(r'<p class="why-note" id="why-note">([^<]+)</p>', basque)
    assert note and "ingeles" in note.group(1)  # English, named in Basque
    assert '<p class="why"><bdi lang="en" dir="ltr">Because 1.</bdi></p>' in basque


def test_the_home_page_describes_both_protocols(app, client):
    page = client.get("/").get_data(as_text=True)
    assert "choose the better of two translations" in page
    assert "score one translation at a time from 0 to 100" in page
    basque = client.get("/", headers={"Accept-Language": "eu"}).get_data(as_text=True)
    assert "0tik 100era" in basque and "score one translation" not in basque


def test_the_practice_is_offered_first_only_before_judging(app, client, make_campaign):
    make_campaign(practice=2)
    register(client)
    page = client.get("/c/test/instructions").get_data(as_text=True)
    assert "Try a few practice sentences first" in page and "Show me the sentences" in page
    headers = {"X-CSRFToken": csrf_token(client, "/c/test/instructions")}
    item = client.get("/c/test/api/item").get_json()["item"]
    client.post("/c/test/api/judgment", json={"token": item["token"], "choice": "left"}, headers=headers)
    assert _participation().items_answered == 1
    page = client.get("/c/test/instructions").get_data(as_text=True)
    assert "Try a few practice sentences first" not in page and "practice sentences: you get feedback" not in page
    assert "Continue evaluating" in page and "Show me the sentences" not in page
    welcome = client.get("/c/test/welcome").get_data(as_text=True)
    assert "Try a few practice sentences first" not in welcome
