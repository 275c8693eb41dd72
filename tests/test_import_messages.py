"""The importer's messages (issue 31, item 10): system names say what is
allowed, unknown language codes are refused, texts no volunteer would read
are warned of, the DA dry run speaks of DA, and a DA folder's practice.tsv
is refused."""
import os

import pytest

from app.services.campaign_texts import known_language, unread_texts
from app.services.importer import CampaignFormatError, read_campaign
from helpers import write_campaign

SITE = ["en", "es", "eu", "ur"]


def _error(folder):
    with pytest.raises(CampaignFormatError) as info:
        read_campaign(folder)
    return info.value


def _manifest(folder, old, new):
    path = os.path.join(folder, "campaign.toml")
    text = open(path, encoding="utf-8").read()
    assert old in text
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text.replace(old, new))
    return folder


@pytest.mark.parametrize("name", ["Bing/Microsoft", "-lead", "système", "a" * 65])
def test_an_invalid_system_name_says_what_is_allowed(tmp_path, name):
    folder = _manifest(write_campaign(str(tmp_path / "c"), sentences=6),
                       'B = "systems/B.txt"', f'"{name}" = "systems/B.txt"')
    error = _error(folder)
    assert error.path == "campaign.toml"
    assert error.message == (f"invalid system name {name!r}: use A-Z, a-z, 0-9, space, '.', '_', '+' and '-' "
                             "(up to 64 characters, the first a letter or digit)")


@pytest.mark.parametrize("code", ["en", "eu", "en-GB", "ur", "ha", "es-419", "sr-Latn", "pt-BR", "eu-FR", "ha-NG",
                                  "EN-gb", "zh-Hans-CN"])
def test_codes_cldr_knows_pass(code):
    assert known_language(code)


@pytest.mark.parametrize("code", ["xx-zz", "xx", "und", "root", "eu-QQ", "en-Xxxx", "en_GB", "e", "english", ""])
def test_unknown_codes_do_not(code):
    assert not known_language(code)


@pytest.mark.parametrize("key", ["source_language", "target_language", "interface_language"])
def test_an_unknown_language_code_is_refused(tmp_path, key):
    folder = write_campaign(str(tmp_path / "c"), sentences=6)
    if key == "interface_language":
        _manifest(folder, 'source = "source.txt"\n', 'source = "source.txt"\ninterface_language = "xx-zz"\n')
    else:
        _manifest(folder, f'{key} = "{"en" if key == "source_language" else "eu"}"', f'{key} = "xx-zz"')
    error = _error(folder)
    assert (error.path, error.message) == (
        "campaign.toml", f"{key}: 'xx-zz' is not a language code that CLDR knows, such as 'eu', 'en-GB' or 'ur'")


def test_real_codes_with_or_without_a_region_import(tmp_path):
    folder = _manifest(write_campaign(str(tmp_path / "c"), sentences=6),
                       'target_language = "eu"', 'target_language = "ha-NG"')
    _manifest(folder, 'source_language = "en"', 'source_language = "en-GB"')
    spec = read_campaign(folder)
    assert (spec.source_language, spec.target_language) == ("en-GB", "ha-NG")


def test_texts_no_volunteer_reads_are_named():
    (warning,) = unread_texts({"ha": {"name": "X"}, "eu": {"name": "Y"}, "es_ES": {"name": "Z"}}, SITE)
    assert warning.startswith("texts.ha: no volunteer will read these texts")
    assert "this site's interface is in en, es, eu, ur only. Add an interface in Hausa" in warning
    assert 'interface_language = "ha"' in warning
    assert unread_texts({"ha": {"name": "X"}}, SITE + ["ha"]) == []


def test_the_import_warns_of_a_hausa_table_and_imports_it(app, tmp_path):
    folder = write_campaign(str(tmp_path / "c"), sentences=6)
    with open(os.path.join(folder, "campaign.toml"), "a", encoding="utf-8") as handle:
        handle.write('[texts.ha]\nname = "Yi hukunci kan fassarori"\n[texts.eu]\nname = "Epaitu itzulpenak"\n')
    result = app.test_cli_runner().invoke(args=["campaign", "import", folder])
    assert result.exit_code == 0, result.output
    assert "Texts also in: ha, eu." in result.output
    assert result.output.count("Warning: texts.") == 1 and "Warning: texts.ha: no volunteer will read" in result.output
    from app.models import Campaign
    from app.extensions import db
    assert db.session.scalar(db.select(Campaign.texts))["ha"] == {"name": "Yi hukunci kan fassarori"}


def test_the_da_dry_run_speaks_of_da(app, tmp_path):
    folder = write_campaign(str(tmp_path / "c"), sentences=6, systems=("A", "B", "C"), protocol="da")
    result = app.test_cli_runner().invoke(args=["campaign", "import", "--dry-run", folder])
    assert result.exit_code == 0, result.output
    assert "Valid: test: 6 sentences, 3 systems (18 translations to score)." in result.output
    assert "pair" not in result.output and "control" not in result.output


def test_a_da_folder_with_practice_is_refused(app, tmp_path):
    folder = write_campaign(str(tmp_path / "c"), sentences=6, protocol="da", practice=2)
    error = _error(folder)
    assert (error.path, error.line) == ("practice.tsv", None)
    assert error.message.startswith("a da campaign has no practice items")
    result = app.test_cli_runner().invoke(args=["campaign", "import", "--dry-run", folder])
    assert result.exit_code == 1 and f"{os.path.join(folder, 'practice.tsv')}: a da campaign" in result.output
