"""A campaign's texts in several languages.

The ``name``, ``description`` and ``instructions`` of campaign.toml are the
default texts, written in the campaign's ``interface_language``; a
``[texts.LANG]`` table gives any of them in another language
(docs/campaign-format.md). ``read_texts`` checks those tables for the
importer; ``campaign_text`` picks the text a page in a given language shows.
"""
import re
from typing import NamedTuple

from babel import Locale, UnknownLocaleError, negotiate_locale

from ..languages import language_name, text_direction
from .format_error import CampaignFormatError

FIELDS = ("name", "description", "instructions")
NAME_LENGTH = 200  # campaigns.name
LANGUAGE_TAG = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")  # the form of a BCP 47 code


class CampaignText(NamedTuple):
    """A campaign text as a page shows it, with the language it is written
    in (BCP 47, for ``lang``) and its direction (for ``dir``)."""

    text: str
    lang: str
    dir: str


def language_key(code):
    """The language code in babel's form ('pt_BR' for 'pt-BR'), or None when
    CLDR does not know the language."""
    try:
        locale = Locale.parse(code.replace("-", "_"))
    except (UnknownLocaleError, ValueError):
        return None
    # Babel reads 'und' as English and knows 'root': neither is a language readers read.
    if locale.language == "root" or locale.language != code.replace("-", "_").split("_")[0].lower():
        return None
    return str(locale)


def known_language(code):
    """Whether CLDR (through Babel) knows a BCP 47 code: a language it knows,
    with scripts or regions it names ('en-GB', 'sr-Latn', and 'eu-FR',
    which has no locale of its own). Babel's parser alone drops what it
    does not know ('en-Xxxx' reads as 'en')."""
    if not LANGUAGE_TAG.match(code):
        return False
    language, *subtags = code.split("-")
    names = Locale("en")
    return language_key(language) is not None and all(
        tag.title() in names.scripts or tag.upper() in names.territories for tag in subtags
    )


def read_in_interface(key, interface_languages):
    """Whether a page in one of ``interface_languages`` takes a text in the
    language ``key`` (babel's code): its language, or it without the region."""
    return any(negotiate_locale([language], [key]) for language in interface_languages)


def unread_texts(texts, interface_languages):
    """Warnings for the [texts.LANG] tables (``read_texts``'s keys) that no
    volunteer reads: a page takes a campaign's texts in its interface
    language, and the site has no interface in that language."""
    warnings = []
    for key in texts:
        if not read_in_interface(key, interface_languages):
            code = key.replace("_", "-")
            shown = ", ".join(sorted(interface_languages))
            warnings.append(
                f"texts.{code}: no volunteer will read these texts: a page shows a campaign's texts in its "
                f"interface language, and this site's interface is in {shown} only. Add an interface in "
                f"{language_name(code)} (docs/translating.md), or make them the campaign's default texts "
                f"(interface_language = \"{code}\"), which everyone reads"
            )
    return warnings


def _error(key, message):
    return CampaignFormatError("campaign.toml", None, f"{key}: {message}")


def read_texts(raw, defaults, default_language, read_instructions):
    """The ``[texts]`` table of campaign.toml, checked: {language in babel's
    form: {field: text}}. ``defaults``: the default text of each field ("" if
    none); ``read_instructions(name)``: the text of an instructions file.
    Raises CampaignFormatError naming the key at fault."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _error("texts", "must be tables of languages, such as [texts.eu]")
    texts = {}
    for code, table in raw.items():
        where = f"texts.{code}"
        key = language_key(code)
        if key is None:
            raise _error(where, f"{code!r} is not a language code that CLDR knows, such as 'eu' or 'es'")
        if key == language_key(default_language):
            raise _error(where, f"the default texts are in {default_language} (interface_language); "
                                "write them as name, description and instructions at the top")
        if key in texts:
            raise _error(where, f"a second table for the language {key}")
        if not isinstance(table, dict) or not table:
            raise _error(where, f"must be a table of texts: {', '.join(FIELDS)}")
        unknown = sorted(set(table) - set(FIELDS))
        if unknown:
            raise _error(where, f"unknown key(s): {', '.join(unknown)}; a language may give {', '.join(FIELDS)}")
        texts[key] = {field: _text(field, table[field], f"{where}.{field}", defaults[field], read_instructions)
                      for field in FIELDS if field in table}
    return texts


def _text(field, value, where, default, read_instructions):
    """One text of a [texts.LANG] table (for instructions, the file's text);
    ``where``: its key, for the errors."""
    if not isinstance(value, str):
        raise _error(where, "a text in quotes expected")
    if not value.strip():
        raise _error(where, "empty text")
    if not default:
        raise _error(where, f"the campaign has no default {field} to translate")
    if field != "instructions":
        if field == "name" and len(value.strip()) > NAME_LENGTH:
            raise _error(where, f"longer than {NAME_LENGTH} characters")
        return value.strip()
    text = read_instructions(value.strip())
    if not text:
        raise CampaignFormatError(value.strip(), None, f"instructions file of {where} is empty")
    return text


def campaign_text(campaign, field, locale=None):
    """The campaign's ``field`` (name, description or instructions) for a
    page in ``locale`` (babel's code): the campaign's text in that language,
    or in its language without the region ('pt' for 'pt_BR'), else the
    default text. A CampaignText."""
    given = {key: fields[field] for key, fields in (campaign.texts or {}).items() if field in fields}
    return pick_text(getattr(campaign, field), campaign.interface_language, given, locale)


def pick_text(default, default_language, given, locale=None):
    """The text of ``given`` ({babel's code: text}) for a page in ``locale``,
    as ``campaign_text`` picks it, else ``default`` (in ``default_language``)."""
    key = negotiate_locale([str(locale)], list(given)) if locale and given else None
    if key is None:
        return CampaignText(default, default_language, text_direction(default_language))
    return CampaignText(given[key], key.replace("_", "-"), text_direction(key))
