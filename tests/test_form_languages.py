"""Every form's refusals in every interface language: each form of the site
is sent empty and with bad values, and no English message may show on a
Basque or Spanish page (WTForms' own messages come from our catalogue)."""
import html
import re

import pytest

from app.extensions import db
from app.models import utcnow
from app.services import accounts
from helpers import csrf_token, give_every_campaign, register
from test_translations import _catalog, _template

LANGUAGES = ("eu", "es")
ERRORS = re.compile(r'<p class="(?:error|flash flash-error)"[^>]*>(.*?)</p>', re.S)


def _errors(response):
    found = ERRORS.findall(response.get_data(as_text=True))
    return [html.unescape(re.sub(r"<[^>]+>", "", text)).strip() for text in found]


def _client(app, language, email=None, password=None):
    client = app.test_client()
    client.set_cookie("bozka_lang", language, domain="localhost")
    if email:
        token = csrf_token(client, "/login")
        client.post("/login", data={"csrf_token": token, "email": email, "password": password})
    return client


def _post(client, form_page, url, data, follow=True):
    return client.post(url, data={"csrf_token": csrf_token(client, form_page), **data}, follow_redirects=follow)


BAD_REGISTRATION = {
    "username": "a b!", "email": "not-an-email", "password": "short", "password2": "other", "real_name": "x" * 300,
    "age_group": "bogus", "studies_level": "bogus", "studies_field": "bogus", "source_level": "bogus",
    "target_level": "bogus",
}


def _cases(app, campaign):
    """(name, who, form page, URL, data): who is None (a visitor),
    "volunteer" (no campaign joined yet), "judge" or "organiser"."""
    reset = "/reset/" + accounts.make_token(app.config["SECRET_KEY"], "reset", _user("visitor"))
    slug = campaign.slug
    organiser_page = f"/organiser/c/{slug}/"
    cases = [
        ("register empty", None, f"/c/{slug}/register", f"/c/{slug}/register", {}),
        ("register bad", None, f"/c/{slug}/register", f"/c/{slug}/register", BAD_REGISTRATION),
        ("login empty", None, "/login", "/login", {}),
        ("login bad", None, "/login", "/login", {"email": "x" * 300, "password": "wrong"}),
        ("reset request empty", None, "/reset", "/reset", {}),
        ("reset request bad", None, "/reset", "/reset", {"email": "not-an-email"}),
        ("reset empty", None, reset, reset, {}),
        ("reset bad", None, reset, reset, {"password": "short", "password2": "other"}),
        ("join empty", "volunteer", f"/c/{slug}/join", f"/c/{slug}/join", {}),
        ("join bad", "volunteer", f"/c/{slug}/join", f"/c/{slug}/join", {"source_level": "x", "target_level": "y"}),
        ("judgment empty", "judge", f"/c/{slug}/evaluate", f"/c/{slug}/evaluate", {}),
        ("judgment bad", "judge", f"/c/{slug}/evaluate", f"/c/{slug}/evaluate", {"choice": "both"}),
        ("practice empty", "judge", f"/c/{slug}/practice", f"/c/{slug}/practice", {"number": "1", "better": "left"}),
        ("status bad", "organiser", organiser_page, f"/organiser/c/{slug}/status",
         {"status": "bogus", "starts_at": "yesterday", "ends_at": "2026-13-45T99:99"}),
        ("announce empty", "organiser", organiser_page, f"/organiser/c/{slug}/announce", {}),
        ("announce bad", "organiser", organiser_page, f"/organiser/c/{slug}/announce", {"text": "\x07" * 3}),
        ("commit bad", "organiser", organiser_page, f"/organiser/c/{slug}/raffle/commit", {"seed_sha256": "xyz"}),
        ("draw empty", "organiser", organiser_page, f"/organiser/c/{slug}/raffle/draw", {}),
        ("draw bad", "organiser", organiser_page, f"/organiser/c/{slug}/raffle/draw",
         {"seed": "s" * 300, "prizes": "many"}),
        ("draw out of range", "organiser", organiser_page, f"/organiser/c/{slug}/raffle/draw",
         {"seed": "seed", "prizes": "0"}),
        ("notify bad", "organiser", f"/organiser/c/{slug}/raffle/winners", f"/organiser/c/{slug}/raffle/notify",
         {"prize": "first", "note": "\x07"}),
        ("accounts empty", "admin", "/organiser/accounts", "/organiser/accounts", {}),
        ("accounts bad", "admin", "/organiser/accounts", "/organiser/accounts",
         {"role": "king", "username": "a b", "email": "nobody", "password": "short"}),
        ("dismiss empty", "organiser", f"/organiser/c/{slug}/volunteer/1", f"/organiser/c/{slug}/volunteer/1/dismiss",
         {}),
    ]
    return cases


def _user(name, role="volunteer"):
    from app.models import User

    user = db.session.query(User).filter_by(username=name).one_or_none()
    if user is None:
        user = accounts.create_user(f"{name}@example.org", name, "a long password 1", role=role)
        user.email_confirmed_at = utcnow()
        give_every_campaign(user)
    return user


def _refusals(app, campaign, language):
    """{case name: [error texts]} for one interface language."""
    clients = {None: _client(app, language)}
    clients["organiser"] = _client(app, language, _user("boss", "organiser").email, "a long password 1")
    clients["admin"] = _client(app, language, _user("chief", "admin").email, "a long password 1")
    clients["volunteer"] = _client(app, language, _user(f"newcomer{language}").email, "a long password 1")
    judge = clients["judge"] = _client(app, language, _user(f"judge{language}").email, "a long password 1")
    token = csrf_token(judge, f"/c/{campaign.slug}/join")
    judge.post(f"/c/{campaign.slug}/join",
               data={"csrf_token": token, "source_level": "B1-B2", "target_level": "C1-C2", "consent": "y"})
    found = {}
    for name, who, page, url, data in _cases(app, campaign):
        found[name] = _errors(_post(clients[who], page, url, data))
    return found


def _english_parts(text):
    """An English refusal and, for "Field: message", the message alone."""
    return {text, text.split(": ", 1)[-1]} - {""}


def test_every_forms_refusals_are_in_the_interface_language(app, make_campaign):
    campaign = make_campaign(practice=2)
    register(app.test_client(), username="volunteer1", email="volunteer1@example.org")  # participation 1
    english = _refusals(app, campaign, "en")
    for name, errors in english.items():
        assert errors, f"{name}: the English form showed no refusal, so this case checks nothing"
    msgids = {m.id if isinstance(m.id, str) else m.id[0] for m in _template() if m.id}
    problems = {}  # (language, why, English text): [cases]
    for language in LANGUAGES:
        translated = {m.id: m.string for m in _catalog(language) if m.id and isinstance(m.id, str)}
        for name, errors in _refusals(app, campaign, language).items():
            shown = " | ".join(errors)
            for message in sorted(set().union(*(_english_parts(e) for e in english[name]))):
                if message in shown:
                    problems.setdefault((language, _why(message, msgids, translated), message), []).append(name)
    report = [f"{language}: {message!r} ({why}) in: {', '.join(cases)}"
              for (language, why, message), cases in sorted(problems.items())]
    assert not report, "English refusals on a translated page:\n" + "\n".join(report)


def _why(message, msgids, translated):
    """Why the English text shows: the message's catalogue entry, if any."""
    entry = next((m for m in msgids if m == message or re.fullmatch(_pattern(m), message)), None)
    if entry is None:
        return "not in messages.pot: mark it, run `flask translate update` and translate it"
    if not translated.get(entry):
        return f"untranslated msgid {entry!r}"
    return f"msgid {entry!r} is translated, yet the English shows"


def _pattern(msgid):
    parts = re.split(r"%\(\w+\)[sd]", msgid)
    return ".+".join(re.escape(part) for part in parts)


def test_wtforms_own_messages_come_from_our_catalogue(tmp_path):
    """A Basque catalogue that translates WTForms' "Invalid email address."
    is what the form says (WTForms' own catalogues have no Basque)."""
    from babel.messages.mofile import write_mo
    from flask_babel import force_locale, get_domain

    from helpers import build_app

    folder = tmp_path / "translations" / "eu" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    catalog = _catalog("eu")
    catalog.add("Invalid email address.", "Helbide elektroniko baliogabea.")
    with open(folder / "messages.mo", "wb") as handle:
        write_mo(handle, catalog)
    (folder / "messages.po").touch()  # the site lists the languages with a catalogue
    app = build_app(tmp_path, BABEL_TRANSLATION_DIRECTORIES=str(tmp_path / "translations"))
    from app.auth.forms import ResetRequestForm

    with app.test_request_context("/reset", method="POST", data={"email": "nope"}), force_locale("eu"):
        # Flask-Babel keeps each language's catalogue for the process, whatever the app: read this one afresh.
        loaded = get_domain().get_translations_cache(None)
        loaded.clear()
        try:
            form = ResetRequestForm(meta={"csrf": False})
            assert not form.validate()
            assert form.email.errors == ["Helbide elektroniko baliogabea."]
        finally:
            loaded.clear()
