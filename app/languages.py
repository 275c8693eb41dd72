"""The interface language: which one a request gets, its text direction,
language names as CLDR writes them, and the catalogues the site has."""
import os
from functools import lru_cache

from babel import Locale, UnknownLocaleError
from flask import current_app, g, has_request_context, request
from flask_login import current_user

from .extensions import db
from .models import Campaign

LANGUAGE_COOKIE = "bozka_lang"


@lru_cache(maxsize=256)
def text_direction(code):
    """'rtl' or 'ltr' for a language code, from CLDR data."""
    try:
        return Locale.parse(code.replace("-", "_")).text_direction
    except (UnknownLocaleError, ValueError, AttributeError):
        return "ltr"


@lru_cache(maxsize=1024)
def language_name(code, in_locale="en", capitalised=False):
    """The language's name in ``in_locale`` as CLDR writes it in a sentence
    (lower case in Spanish or Basque); ``capitalised`` for a name that stands
    alone, as in the language menu."""
    try:
        name = Locale.parse(code.replace("-", "_")).get_display_name(in_locale)
    except (UnknownLocaleError, ValueError, AttributeError):
        return code
    if not name:
        return code
    return name[:1].upper() + name[1:] if capitalised else name


def available_locales(translations_dir):
    """English plus every language with a catalogue in translations/."""
    found = {"en"}
    if os.path.isdir(translations_dir):
        for name in os.listdir(translations_dir):
            if os.path.isfile(os.path.join(translations_dir, name, "LC_MESSAGES", "messages.po")):
                found.add(name)
    return sorted(found)


def _campaign_locale():
    """The default interface language of the campaign in the URL, if any."""
    slug = (request.view_args or {}).get("slug")
    if not slug or g.get("database_unavailable"):
        return None
    loaded = g.get("bozka_campaign")  # set by web.find_campaign
    if loaded is not None and loaded.slug == slug:
        return loaded.interface_language
    return db.session.scalar(db.select(Campaign.interface_language).where(Campaign.slug == slug))


def select_locale():
    """The page language of the request (``choose_locale``)."""
    if not has_request_context():
        return None  # the default locale
    # After a database error the volunteer's row cannot be read: the page is
    # made as for a visitor (errors.database_unavailable).
    known_user = not g.get("database_unavailable") and current_user.is_authenticated
    return choose_locale(
        current_app.config["LANGUAGES"],
        current_user.locale if known_user else None,
        request.cookies.get(LANGUAGE_COOKIE),
        request.accept_languages,
        _campaign_locale,
    )


def choose_locale(available, user_locale, cookie, accept_languages, campaign_locale):
    """The volunteer's choice, else the language cookie's, else the
    browser's (``accept_languages``: a werkzeug ``LanguageAccept``), else
    the campaign's default (``campaign_locale()``), else English."""
    if user_locale in available:
        return user_locale
    return expressed_locale(available, cookie, accept_languages) or campaign_locale() or "en"


def expressed_locale(available, cookie, accept_languages):
    """The language a visitor asked for: the switcher's (its cookie), else
    their browser's; None when neither is available (the page then falls
    back on a default nobody chose, which an account does not keep)."""
    if cookie in available:
        return cookie
    return accept_languages.best_match(available)


def mail_locale(available, user_locale, fallback):
    """The language of every mail to a person: the one their account keeps
    (``expressed_locale`` at registration, the switcher later), else
    ``fallback`` (the page's, or the campaign's for a winner), else English."""
    for code in (user_locale, fallback):
        if code in available:
            return code
    return "en"
