"""Interface languages: complete catalogues, selection, plurals and numbers."""
import os

import pytest
from babel.messages.pofile import read_po

from app.languages import available_locales
from helpers import csrf_token, register

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRANSLATIONS = os.path.join(ROOT, "translations")
SHIPPED = ["eu", "es", "ur"]


def _catalog(language):
    with open(os.path.join(TRANSLATIONS, language, "LC_MESSAGES", "messages.po"), "rb") as handle:
        return read_po(handle)


def _template():
    with open(os.path.join(TRANSLATIONS, "messages.pot"), "rb") as handle:
        return read_po(handle)


@pytest.mark.parametrize("language", SHIPPED)
def test_shipped_languages_are_complete(language):
    catalog = _catalog(language)
    problems = []
    for message in catalog:
        if not message.id:
            continue
        strings = message.string if isinstance(message.string, (list, tuple)) else [message.string]
        if message.fuzzy:
            problems.append(f"fuzzy: {message.id!r}")
        if not all(strings):
            problems.append(f"untranslated: {message.id!r}")
    for message, errors in catalog.check():
        problems.extend(f"{message.id!r}: {error}" for error in errors)
    assert problems == []


@pytest.mark.parametrize("language", SHIPPED)
def test_catalogues_have_every_interface_string(language):
    """A string added to the code but not to a catalogue fails here:
    run `flask translate update` and translate it."""
    wanted = {m.id if isinstance(m.id, str) else m.id[0] for m in _template() if m.id}
    # Iterating a catalogue never yields obsolete ("#~") entries: Babel keeps them in catalog.obsolete.
    have = {m.id if isinstance(m.id, str) else m.id[0] for m in _catalog(language) if m.id}
    assert wanted - have == set()


def test_template_is_up_to_date(tmp_path):
    """translations/messages.pot matches the code (run `flask translate update`)."""
    from babel.messages.frontend import CommandLineInterface

    out = tmp_path / "now.pot"
    CommandLineInterface().run(["pybabel", "-q", "extract", "-F", os.path.join(ROOT, "babel.cfg"), "-k", "_l",
                                "--no-location", "--sort-output", "-o", str(out), ROOT])
    with open(out, "rb") as handle:
        now = {m.id if isinstance(m.id, str) else m.id[0] for m in read_po(handle) if m.id}
    committed = {m.id if isinstance(m.id, str) else m.id[0] for m in _template() if m.id}
    assert now - committed == set(), "strings missing from messages.pot"


def test_available_languages():
    assert set(available_locales(TRANSLATIONS)) >= {"en", "eu", "es"}


def test_language_choice_order(app, client, make_campaign):
    make_campaign()
    # The browser's language, when nothing was chosen.
    page = client.get("/c/test/", headers={"Accept-Language": "es-ES,es;q=0.9"}).get_data(as_text=True)
    assert '<html lang="es"' in page
    # The visitor's choice wins over the browser, and is kept in a cookie.
    token = csrf_token(client, "/c/test/")
    client.post("/language?next=/c/test/", data={"csrf_token": token, "lang": "eu"})
    page = client.get("/c/test/", headers={"Accept-Language": "es"}).get_data(as_text=True)
    assert '<html lang="eu"' in page
    # A registered volunteer's choice is remembered in the profile.
    register(client)
    token = csrf_token(client, "/c/test/welcome")
    client.post("/language", data={"csrf_token": token, "lang": "es"})
    from app.extensions import db
    from app.models import User

    assert db.session.query(User).one().locale == "es"
    # An unknown language is ignored.
    client.post("/language", data={"csrf_token": token, "lang": "xx"})
    assert db.session.query(User).one().locale == "es"


def test_campaign_default_language_applies_last(app, client, make_campaign):
    campaign = make_campaign()
    campaign.interface_language = "eu"
    from app.extensions import db

    db.session.commit()
    page = client.get("/c/test/", headers={"Accept-Language": "fr"}).get_data(as_text=True)
    assert '<html lang="eu"' in page


def test_plurals_and_numbers_through_babel(app):
    from flask_babel import force_locale, format_number, ngettext

    with app.test_request_context():
        for language in ("eu", "es"):
            with force_locale(language):
                assert format_number(1234) == "1.234"
                one = ngettext("You have judged %(num)d sentence.", "You have judged %(num)d sentences.", 1)
                five = ngettext("You have judged %(num)d sentence.", "You have judged %(num)d sentences.", 5)
                assert "1" in one and "5" in five and one.replace("1", "") != five.replace("5", "")
        with force_locale("en"):
            assert format_number(1234) == "1,234"


def test_the_volunteers_summary_in_each_language(app):
    """The count and raffle numbers shown on the pages and sent with every
    judgment: the catalogue's own plural forms, the numbers as given."""
    from flask_babel import force_locale, ngettext

    from app.volunteer.texts import tickets_summary

    with app.test_request_context():
        for language in ("en", "eu", "es"):
            with force_locale(language):
                first = tickets_summary(1, (), 10)
                later = tickets_summary(23, (3, 14), 10)
                assert ngettext("You have judged %(num)d sentence.", "You have judged %(num)d sentences.", 1) in first
                assert ngettext("Every %(num)d sentence earns a raffle number.",
                                "Every %(num)d sentences earn a raffle number.", 10) in first
                assert ngettext("You have judged %(num)d sentence.", "You have judged %(num)d sentences.", 23) in later
                assert ngettext("Your raffle number:", "Your raffle numbers:", 2) + " <strong>3, 14</strong>" in later
                assert first.startswith('<p class="mine">') and hasattr(first, "__html__")
        with force_locale("en"):
            assert "You have judged 1 sentence." in tickets_summary(1, (7,), 10)
            assert "Your raffle number: <strong>7</strong>" in tickets_summary(1, (7,), 10)


def test_the_log_in_notice_is_translated(app, client, make_campaign):
    """Flask-Login's notice on a page that needs an account is ours, translated."""
    client.set_cookie("bozka_lang", "es", domain="localhost")
    page = client.get("/organiser/", follow_redirects=True).get_data(as_text=True)
    assert "Inicia sesión para ver esta página." in page and "Please log in" not in page
