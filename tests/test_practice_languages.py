"""Practice explanations in other interface languages (issue 31): the
optional why.<code> columns of practice.tsv, checked as [texts.<code>]
tables are, stored, and shown on a page in that language."""
import os
import re

import pytest
from sqlalchemy import select

from app.cli import import_campaign
from app.extensions import db
from app.models import PracticeItem
from app.protocols.pairwise import practice as pairwise_practice
from app.services import practice
from app.services.campaign_writer import create_campaign
from app.services.importer import CampaignFormatError, read_campaign
from helpers import QUIET_SIGNS, register, write_campaign

HEADER = "source\tbetter\tworse\twhy"
SITE = ["en", "es", "eu", "ur"]


def _write(folder, header, *lines):
    with open(os.path.join(folder, "practice.tsv"), "w") as f:
        f.write("\n".join((header, *lines)) + "\n")


@pytest.fixture
def folder(tmp_path):
    return write_campaign(str(tmp_path / "c"), **(QUIET_SIGNS | {"sentences": 20, "practice": 1}))


def test_why_columns_are_read_and_an_empty_cell_falls_back(app, folder):
    _write(folder, f"{HEADER}\twhy.eu\twhy.es",
           "P 1.\tR 1.\tW 1.\tBecause 1.\tHorregatik 1.\tPorque 1.",
           "P 2.\tR 2.\tW 2.\tBecause 2.\t\tPorque 2.",
           "P 3.\tR 3.\tW 3.\tBecause 3.")  # both left out: the line's trailing tabs go with its end
    spec = read_campaign(folder, interface_languages=SITE)
    assert [row[4] for row in spec.practice] == [{"eu": "Horregatik 1.", "es": "Porque 1."}, {"es": "Porque 2."}, {}]
    _spec, campaign = import_campaign(folder)
    rows = db.session.scalars(select(PracticeItem).order_by(PracticeItem.number)).all()
    assert [row.why_texts for row in rows] == [{"eu": "Horregatik 1.", "es": "Porque 1."}, {"es": "Porque 2."}, None]
    # The page's language when given, else the why column's, in the interface_language.
    assert pairwise_practice.show(campaign, 1, True, "eu").why == ("Horregatik 1.", "eu", "ltr")
    assert pairwise_practice.show(campaign, 1, True, "es").why.text == "Porque 1."
    assert pairwise_practice.show(campaign, 2, True, "eu").why == ("Because 2.", "en", "ltr")
    assert pairwise_practice.show(campaign, 1, True, "ur").why.text == "Because 1."
    assert pairwise_practice.show(campaign, 3, True, None).why.text == "Because 3."


@pytest.mark.parametrize("header, message", [
    (f"{HEADER}\tnotes", "column 5 (notes): an extra column must be why.<language>"),
    (f"{HEADER}\t\twhy.eu", "column 5 (empty): an extra column must be why.<language>"),
    (f"{HEADER}\twhy.", "column 5 (why.): an extra column must be why.<language>"),
    (f"{HEADER}\twhy.eu\twhy.qqq", "column 6 (why.qqq): 'qqq' is not a language code that CLDR knows"),
    (f"{HEADER}\twhy.en", "column 5 (why.en): the why column is in en (interface_language)"),
    (f"{HEADER}\twhy.es\twhy.ES", "column 6 (why.es): a second column for the language es"),
    (f"{HEADER}\twhy.fr", "column 5 (why.fr): this site has no interface in fr (it has en, es, eu, ur)"),
    ("source\tbetter\twhy\tworse", "header must be: source<TAB>better<TAB>worse<TAB>why<TAB>why.<language>..."),
])
def test_a_malformed_header_is_refused_with_its_column(folder, header, message):
    _write(folder, header, "P 1.\tR 1.\tW 1.\tBecause 1.")
    with pytest.raises(CampaignFormatError) as info:
        read_campaign(folder, interface_languages=SITE)
    assert info.value.path == "practice.tsv" and info.value.line == 1 and message in info.value.message


def test_too_many_fields_are_refused_with_their_line(folder):
    _write(folder, f"{HEADER}\twhy.eu", "P 1.\tR 1.\tW 1.\tBecause 1.\tHorregatik.\tMore.")
    with pytest.raises(CampaignFormatError) as info:
        read_campaign(folder, interface_languages=SITE)
    assert info.value.line == 2 and "expected 4 to 5 tab-separated fields, found 6" in info.value.message


def test_the_controls_header_takes_no_extra_column(folder):
    with open(os.path.join(folder, "controls.tsv")) as f:
        lines = f.read().splitlines()
    with open(os.path.join(folder, "controls.tsv"), "w") as f:
        f.write("\n".join([lines[0] + "\twhy.eu"] + [line + "\tx" for line in lines[1:]]) + "\n")
    with pytest.raises(CampaignFormatError) as info:
        read_campaign(folder)
    assert info.value.line == 1 and info.value.message == "header must be: source<TAB>better<TAB>worse"


def _feedback(client, language):
    client.set_cookie("bozka_lang", language, domain="localhost")
    html = client.get("/c/test/practice").get_data(as_text=True)
    fields = dict(re.findall(r'name="(csrf_token|number|better)" type="hidden" value="([^"]*)"', html))
    return client.post("/c/test/practice", data={**fields, "choice": "left"}).get_data(as_text=True)


def test_a_page_shows_the_explanation_of_its_language(client, tmp_path):
    folder = write_campaign(str(tmp_path / "c"), **(QUIET_SIGNS | {"sentences": 20}))
    _write(folder, f"{HEADER}\twhy.eu", "P 1.\tR 1.\tW 1.\tBecause 1.\tHorregatik 1.")
    create_campaign(read_campaign(folder, interface_languages=SITE))
    db.session.commit()
    register(client)
    basque = _feedback(client, "eu")
    assert '<p class="why"><bdi lang="eu" dir="ltr">Horregatik 1.</bdi></p>' in basque
    assert 'id="why-note"' not in basque
    spanish = _feedback(client, "es")  # no why.es: the English explanation, said to be English
    assert '<bdi lang="en" dir="ltr">Because 1.</bdi>' in spanish and 'id="why-note"' in spanish
    english = _feedback(client, "en")
    assert '<bdi lang="en" dir="ltr">Because 1.</bdi>' in english and 'id="why-note"' not in english
