"""A campaign's name, description and instructions in several languages
(issue 22): the importer's [texts.LANG] tables, the choice of the text for
an interface language, and the pages that show it with its lang and dir."""
import os
from types import SimpleNamespace

import pytest
from sqlalchemy import func, select

from app.cli import import_campaign
from app.extensions import db
from app.models import Campaign, Control
from app.services import accounts, export
from app.services.campaign_texts import campaign_text
from app.services.campaign_writer import create_campaign
from app.services.importer import CampaignFormatError, read_campaign
from helpers import QUIET_SIGNS, csrf_token, give_every_campaign, register, write_campaign
from test_languages import EN_EU, EN_UR, Page

DEFAULTS = 'name = "Judge translations"\ndescription = "Twelve sentences."\ninstructions = "instructions.txt"\n'
BASQUE = ('[texts.eu]\nname = "Epaitu itzulpenak"\ndescription = "Hamabi esaldi."\n'
          'instructions = "instructions.eu.txt"\n')
INSTRUCTIONS = "Read both translations.\n\nChoose the better one."
INSTRUCTIONS_EU = "Irakurri bi itzulpenak.\n\nAukeratu hobea."


def _folder(tmp_path, tables, top="", defaults=DEFAULTS):
    """A valid campaign whose manifest has ``defaults`` and ``top`` at the
    top and the TOML ``tables`` at the end."""
    folder = write_campaign(str(tmp_path / "c"), **QUIET_SIGNS)
    manifest = os.path.join(folder, "campaign.toml")
    text = open(manifest, encoding="utf-8").read().replace('name = "Test campaign"\n', defaults)
    with open(manifest, "w", encoding="utf-8") as handle:
        handle.write(top + text + tables)
    for name, content in (("instructions.txt", INSTRUCTIONS), ("instructions.eu.txt", INSTRUCTIONS_EU)):
        with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
            handle.write(content + "\n")
    return folder


def _error(folder):
    with pytest.raises(CampaignFormatError) as info:
        read_campaign(folder)
    return info.value


# --- the importer -----------------------------------------------------------------


def test_texts_in_other_languages_are_read_and_written(app, tmp_path):
    folder = _folder(tmp_path, BASQUE + '[texts.es]\nname = "Juzga traducciones"\n'
                                        '[texts.pt-BR]\ndescription = "Doze frases."\n')
    spec, campaign = import_campaign(folder)
    assert spec.name == "Judge translations" and spec.instructions == INSTRUCTIONS  # the defaults stay
    expected = {
        "eu": {"name": "Epaitu itzulpenak", "description": "Hamabi esaldi.", "instructions": INSTRUCTIONS_EU},
        "es": {"name": "Juzga traducciones"},
        "pt_BR": {"description": "Doze frases."},  # babel's form of the code
    }
    assert spec.texts == expected
    db.session.expire_all()
    assert db.session.get(Campaign, campaign.id).texts == expected


def test_a_campaign_without_texts_has_none(app, tmp_path):
    spec, campaign = import_campaign(_folder(tmp_path, ""))
    assert spec.texts == {} and campaign.texts is None


@pytest.mark.parametrize("tables, top, message", [
    ('[texts.xx]\nname = "X"\n', "", "texts.xx: 'xx' is not a language code that CLDR knows, such as 'eu' or 'es'"),
    ('[texts.und]\nname = "X"\n', "", "texts.und: 'und' is not a language code"),
    ('[texts.root]\nname = "X"\n', "", "texts.root: 'root' is not a language code"),
    ('[texts."e u"]\nname = "X"\n', "", "texts.e u: 'e u' is not a language code"),
    ('[texts.en]\nname = "X"\n', "", "texts.en: the default texts are in en (interface_language)"),
    ('[texts.eu]\nname = "X"\n', 'interface_language = "eu"\n', "texts.eu: the default texts are in eu"),
    ('[texts.eu]\nname = "X"\n[texts.EU]\nname = "Y"\n', "", "texts.EU: a second table for the language eu"),
    ('[texts.eu]\ntitle = "X"\n', "",
     "texts.eu: unknown key(s): title; a language may give name, description, instructions"),
    ("[texts.eu]\n", "", "texts.eu: must be a table of texts: name, description, instructions"),
    ('[texts]\neu = "Epaitu itzulpenak"\n', "", "texts.eu: must be a table of texts"),
    ("", 'texts = "eu"\n', "texts: must be tables of languages, such as [texts.eu]"),
    ('[texts.eu]\nname = "  "\n', "", "texts.eu.name: empty text"),
    ('[texts.eu]\ndescription = ""\n', "", "texts.eu.description: empty text"),
    ('[texts.eu]\ninstructions = ""\n', "", "texts.eu.instructions: empty text"),
    ("[texts.eu]\nname = 3\n", "", "texts.eu.name: a text in quotes expected"),
    (f'[texts.eu]\nname = "{"x" * 201}"\n', "", "texts.eu.name: longer than 200 characters"),
])
def test_bad_texts_reject_the_folder_naming_the_key(tmp_path, tables, top, message):
    error = _error(_folder(tmp_path, tables, top))
    assert error.path == "campaign.toml" and error.message.startswith(message), error.message


def test_a_text_the_campaign_has_no_default_of(tmp_path):
    no_description = 'name = "Judge translations"\ninstructions = "instructions.txt"\n'
    error = _error(_folder(tmp_path, '[texts.eu]\ndescription = "Hamabi esaldi."\n', defaults=no_description))
    assert error.message == "texts.eu.description: the campaign has no default description to translate"
    no_instructions = 'name = "Judge translations"\n'
    error = _error(_folder(tmp_path, BASQUE, defaults=no_instructions))
    assert error.message.startswith("texts.eu.description: the campaign has no default description")
    error = _error(_folder(tmp_path, '[texts.eu]\ninstructions = "instructions.eu.txt"\n', defaults=no_instructions))
    assert error.message == "texts.eu.instructions: the campaign has no default instructions to translate"


@pytest.mark.parametrize("name, content, message", [
    ("missing.txt", None, "instructions file not found"),
    ("../outside.txt", None, "instructions file is outside the campaign folder"),
    ("latin1.txt", b"Caf\xe9", "invalid UTF-8"),
    ("blank.txt", b"  \n\n", "instructions file of texts.eu.instructions is empty"),
])
def test_bad_instructions_files_name_the_file(tmp_path, name, content, message):
    folder = _folder(tmp_path, f'[texts.eu]\ninstructions = "{name}"\n')
    if content is not None:
        with open(os.path.join(folder, name), "wb") as handle:
            handle.write(content)
    error = _error(folder)
    assert (error.path, error.message) == (name, message)


def test_nothing_is_written_when_a_text_is_bad(app, tmp_path):
    with pytest.raises(CampaignFormatError):
        import_campaign(_folder(tmp_path, '[texts.eu]\nname = "Epaitu itzulpenak"\ntitle = "X"\n'))
    assert db.session.scalar(select(func.count(Campaign.id))) == 0


def test_the_demo_campaigns_speak_basque_and_spanish():
    for folder, languages in ((EN_EU, {"eu", "es"}), (os.path.join(os.path.dirname(EN_EU), "en-eu-da"), {"eu", "es"}),
                              (EN_UR, {"eu", "es", "ur"})):
        spec = read_campaign(folder)
        assert set(spec.texts) == languages, folder
        for texts in spec.texts.values():
            assert set(texts) == {"name", "description", "instructions"}
            assert texts["instructions"].count("\n\n") == spec.instructions.count("\n\n")  # paragraph for paragraph


# --- the text a page shows ----------------------------------------------------------

def _campaign(texts, interface_language="en"):
    return SimpleNamespace(name="Judge translations", description="Twelve sentences.", instructions="Read.",
                           interface_language=interface_language, texts=texts)


def test_the_text_of_the_interface_language_else_the_default():
    campaign = _campaign({"eu": {"name": "Epaitu itzulpenak"}, "pt": {"name": "Julgue traduções"}})
    assert campaign_text(campaign, "name", "eu") == ("Epaitu itzulpenak", "eu", "ltr")
    assert campaign_text(campaign, "name", "en") == ("Judge translations", "en", "ltr")
    assert campaign_text(campaign, "name", "es") == ("Judge translations", "en", "ltr")  # none in Spanish
    assert campaign_text(campaign, "name", None) == ("Judge translations", "en", "ltr")
    assert campaign_text(campaign, "name", "pt_BR").text == "Julgue traduções"  # the language without the region
    # Each text falls back on its own.
    assert campaign_text(campaign, "description", "eu") == ("Twelve sentences.", "en", "ltr")
    assert campaign_text(_campaign(None), "name", "eu").text == "Judge translations"


def test_the_direction_is_the_shown_texts():
    campaign = _campaign({"eu": {"name": "Epaitu itzulpenak"}, "ar": {"name": "قيّم الترجمات"}}, "ur")
    assert campaign_text(campaign, "name", "eu")[1:] == ("eu", "ltr")
    assert campaign_text(campaign, "name", "es")[1:] == ("ur", "rtl")  # the default, in Urdu
    assert campaign_text(campaign, "name", "ar")[1:] == ("ar", "rtl")
    campaign = _campaign({"pt_BR": {"name": "Julgue traduções"}})
    assert campaign_text(campaign, "name", "pt_BR")[1:] == ("pt-BR", "ltr")  # BCP 47, for lang


# --- the pages ---------------------------------------------------------------------

@pytest.fixture
def basque(app, tmp_path):
    """A campaign with texts in Basque only, and the Basque demo (Basque and Spanish)."""
    campaign = create_campaign(read_campaign(_folder(tmp_path, BASQUE)))
    create_campaign(read_campaign(EN_EU))
    db.session.commit()
    return campaign


def _client(app, language):
    client = app.test_client()
    client.set_cookie("bozka_lang", language, domain="localhost")
    return client


def _shown(client, url, text, lang, direction="ltr"):
    """``text`` is on the page, every time with its own lang and dir."""
    response = client.get(url)
    assert response.status_code == 200, url
    entries = Page(response.get_data(as_text=True)).where(text)
    assert all((entry_lang, entry_dir) == (lang, direction) for _, entry_lang, entry_dir, _ in entries), (url, entries)


PAGES = ("/", "/c/test/", "/c/test/register", "/c/test/raffle")


def test_a_basque_interface_shows_the_basque_texts(app, basque):
    client = _client(app, "eu")
    for url in PAGES:
        _shown(client, url, "Epaitu itzulpenak", "eu")
    _shown(client, "/", "Demoa: ingelesetik euskarara", "eu")
    _shown(client, "/c/test/", "Hamabi esaldi.", "eu")
    for paragraph in INSTRUCTIONS_EU.split("\n\n"):
        _shown(client, "/c/test/instructions", paragraph, "eu")
    page = client.get("/c/test/").get_data(as_text=True)
    assert "Judge translations" not in page and "Twelve sentences." not in page
    assert "<title>Epaitu itzulpenak ·" in page
    register(client)
    _shown(client, "/c/test/welcome", "Epaitu itzulpenak", "eu")
    _shown(client, "/c/demo-en-eu/join", "Demoa: ingelesetik euskarara", "eu")
    assert "Read both translations." not in client.get("/c/test/instructions").get_data(as_text=True)


def test_an_english_interface_shows_the_default(app, basque):
    client = _client(app, "en")
    for url in PAGES:
        _shown(client, url, "Judge translations", "en")
    _shown(client, "/", "Demo: English to Basque", "en")
    _shown(client, "/c/test/", "Twelve sentences.", "en")
    for paragraph in INSTRUCTIONS.split("\n\n"):
        _shown(client, "/c/test/instructions", paragraph, "en")
    assert "Epaitu itzulpenak" not in client.get("/").get_data(as_text=True)


def test_a_language_without_texts_falls_back_to_the_default(app, basque):
    client = _client(app, "es")  # the campaign has no Spanish texts; the demo has
    for url in PAGES:
        _shown(client, url, "Judge translations", "en")
    _shown(client, "/c/test/", "Twelve sentences.", "en")
    _shown(client, "/c/test/instructions", "Choose the better one.", "en")
    _shown(client, "/", "Demo: del inglés al euskera", "es")
    assert '<html lang="es"' in client.get("/c/test/").get_data(as_text=True)


def test_lang_and_dir_are_those_of_the_language_shown(app, tmp_path):
    """A campaign written in Urdu (right to left) with a Basque name: the
    Basque interface shows it left to right, the Spanish one the Urdu default
    right to left."""
    folder = _folder(tmp_path, '[texts.eu]\nname = "Epaitu itzulpenak"\n', top='interface_language = "ur"\n',
                     defaults='name = "ترجموں کو پرکھیں"\ndescription = "بارہ جملے۔"\n')
    create_campaign(read_campaign(folder))
    create_campaign(read_campaign(EN_EU))  # two campaigns: the home page lists them
    db.session.commit()
    basque, spanish = _client(app, "eu"), _client(app, "es")
    for url in PAGES:
        _shown(basque, url, "Epaitu itzulpenak", "eu", "ltr")
        _shown(spanish, url, "ترجموں کو پرکھیں", "ur", "rtl")
    _shown(basque, "/c/test/", "بارہ جملے۔", "ur", "rtl")  # no Basque description: the Urdu one
    html = basque.get("/c/test/").get_data(as_text=True)
    assert '<html lang="eu" dir="ltr"' in html and '<bdi lang="eu" dir="ltr">Epaitu itzulpenak</bdi>' in html


def test_a_right_to_left_interface_keeps_each_texts_direction(app):
    """The Urdu interface (right to left): the Urdu demo's Urdu name right to
    left, the Basque demo's English default left to right."""
    create_campaign(read_campaign(EN_UR))
    create_campaign(read_campaign(EN_EU))
    db.session.commit()
    client = _client(app, "ur")
    assert '<html lang="ur" dir="rtl"' in client.get("/").get_data(as_text=True)
    _shown(client, "/", "ڈیمو: انگریزی سے اردو", "ur", "rtl")
    _shown(client, "/", "Demo: English to Basque", "en", "ltr")
    _shown(client, "/c/demo-en-eu/", "Demo: English to Basque", "en", "ltr")
    _shown(client, "/c/demo-en-ur/instructions", read_campaign(EN_UR).texts["ur"]["instructions"].split("\n\n")[1],
           "ur", "rtl")


def test_campaign_texts_are_escaped(app, tmp_path):
    folder = _folder(tmp_path, '[texts.eu]\nname = "<script>alert(1)</script>"\n')
    create_campaign(read_campaign(folder))
    db.session.commit()
    page = _client(app, "eu").get("/c/test/").get_data(as_text=True)
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_logout_page_names_the_campaign_in_the_volunteers_language(app, basque):
    client = _client(app, "eu")
    register(client)
    response = client.post("/logout", data={"csrf_token": csrf_token(client, "/c/test/welcome")})
    entries = Page(response.get_data(as_text=True)).where("Epaitu itzulpenak")
    assert all((lang, d) == ("eu", "ltr") for _, lang, d, _ in entries), entries


def test_organiser_pages_keep_the_default(app, basque):
    give_every_campaign(accounts.create_user("boss@example.org", "boss", "staff-password 1", role="organiser"))
    client = _client(app, "eu")
    client.post("/login", data={"csrf_token": csrf_token(client, "/login"), "email": "boss@example.org",
                                "password": "staff-password 1"})
    _shown(client, "/organiser/", "Judge translations", "en")
    _shown(client, "/organiser/c/test/", "Judge translations", "en")


def test_campaign_list_and_exports_do_not_change(app, tmp_path):
    spec, campaign = import_campaign(_folder(tmp_path, BASQUE), status="open")
    db.session.commit()
    client = _client(app, "eu")
    register(client)
    better = set(db.session.scalars(select(Control.better)))
    token = csrf_token(client, "/c/test/instructions")
    for _ in range(4):  # two controls, then sentences
        item = client.get("/c/test/api/item").get_json()["item"]
        client.post("/c/test/api/judgment", headers={"X-CSRFToken": token},
                    json={"token": item["token"], "choice": "right" if item["right"] in better else "left"})
    runner = app.test_cli_runner()

    def outputs():
        db.session.expire_all()
        found = {"list": runner.invoke(args=["campaign", "list"]).output}
        for kind, _formats in export.offered(campaign):
            result = runner.invoke(args=["export", kind, "test"])
            assert result.exit_code == 0, result.output
            found[kind] = result.output
        return found

    with_texts = outputs()
    assert with_texts["list"] == f"test\tpairwise\topen\t2/{campaign.target_judgments} judgments\n"
    assert len(with_texts["judgments"].splitlines()) == 5  # the header and four answers
    campaign.texts = None
    db.session.commit()
    assert outputs() == with_texts
    dry = runner.invoke(args=["campaign", "import", "--dry-run", _folder(tmp_path / "again", BASQUE)])
    assert dry.exit_code == 0 and "Texts also in: eu." in dry.output
