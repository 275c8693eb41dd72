"""Practice items (issue 18, item 7): imported from practice.tsv, shown with
feedback before item 1, and counting for nothing."""
import os
import random
import re

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from app.cli import import_campaign
from app.extensions import db
from app.models import PracticeItem
from app.protocols.pairwise import practice as pairwise_practice
from app.services import practice
from app.services.campaign_writer import create_campaign
from app.services.importer import CampaignFormatError, read_campaign
from helpers import DEMO, QUIET_SIGNS, csrf_token, register, write_campaign


def _error(folder):
    with pytest.raises(CampaignFormatError) as info:
        read_campaign(folder)
    return info.value


def _write_practice(folder, *lines, header="source\tbetter\tworse\twhy"):
    with open(os.path.join(folder, "practice.tsv"), "w") as f:
        f.write("\n".join((header, *lines)) + "\n")


@pytest.fixture
def folder(tmp_path):
    return write_campaign(str(tmp_path / "c"), sentences=6, controls=8, practice=3)


# The rule.

@pytest.mark.parametrize("better_left", [True, False])
def test_feedback_is_right_only_for_the_better_side(better_left):
    better = "left" if better_left else "right"
    worse = "right" if better_left else "left"
    assert pairwise_practice.feedback(better, better_left) == (True, better, better)
    assert pairwise_practice.feedback(worse, better_left) == (False, better, worse)
    # A practice item always has a better translation: "equal" is not right.
    assert pairwise_practice.feedback("equal", better_left) == (False, better, "equal")


def test_both_sides_come_up():
    rng = random.Random(3)
    sides = {pairwise_practice.better_left(rng) for _ in range(50)}
    assert sides == {True, False}


# The importer.

def test_practice_file_is_imported_in_order(app, folder):
    spec, campaign = import_campaign(folder)
    assert spec.practice[0] == ("Practice 1.", "Right 1.", "Wrong 1.", "Because 1.", {})
    rows = db.session.scalars(select(PracticeItem).order_by(PracticeItem.number)).all()
    assert [(r.campaign_id, r.number, r.source, r.better, r.worse, r.why) for r in rows] == [
        (campaign.id, n, f"Practice {n}.", f"Right {n}.", f"Wrong {n}.", f"Because {n}.") for n in (1, 2, 3)
    ]
    assert practice.count(campaign.id) == 3


def test_no_practice_file_means_no_practice(app, tmp_path):
    folder = write_campaign(str(tmp_path / "c"), sentences=6, controls=8)
    spec, campaign = import_campaign(folder)
    assert spec.practice == [] and practice.count(campaign.id) == 0


def test_the_manifest_may_name_the_file_and_then_it_must_exist(folder):
    os.rename(os.path.join(folder, "practice.tsv"), os.path.join(folder, "warm-up.tsv"))
    assert read_campaign(folder).practice == []  # not found under its default name: no practice
    with open(os.path.join(folder, "campaign.toml")) as f:
        manifest = f.read()
    with open(os.path.join(folder, "campaign.toml"), "w") as f:
        f.write('practice = "warm-up.tsv"\n' + manifest)
    assert len(read_campaign(folder).practice) == 3
    os.remove(os.path.join(folder, "warm-up.tsv"))
    error = _error(folder)
    assert error.path == "warm-up.tsv" and "not found" in error.message


@pytest.mark.parametrize(
    "lines, header, line, message",
    [
        (["A.\tB.\tC.\tD."], "source\tbetter\tworse", 1, "header must be: source<TAB>better<TAB>worse<TAB>why"),
        (["A.\tB.\tC.\tD.", "E.\tF.\tG."], None, 3, "expected 4 tab-separated fields, found 3"),
        (["A.\tB.\tC.\tD.\tE."], None, 2, "expected 4 tab-separated fields, found 5"),
        (["A.\t \tC.\tD."], None, 2, "empty field"),
        (["A.\tB.\tC.\tD.", "E.\tSame.\tSame.\tWhy."], None, 3, "the better and worse translations are the same"),
        (["A.\tB.\tC.\tD.", "", "E.\tF.\tG.\tH."], None, 3, "empty line"),
        (["A.\tB.\tC.\tD.", "Control 4.\tF.\tG.\tH."], None, 3, "controls.tsv:5"),
        (["A.\tGood  7.\tC.\tD."], None, 2, "give the control away"),
        (["Source sentence number 2.\tB.\tC.\tD."], None, 2, "a sentence of the campaign"),
        ([], None, None, "no practice items"),
    ],
)
def test_a_malformed_practice_file_is_rejected_whole_with_its_line(app, folder, lines, header, line, message):
    _write_practice(folder, *lines, header=header or "source\tbetter\tworse\twhy")
    error = _error(folder)
    assert error.path == "practice.tsv" and error.line == line and message in error.message
    with pytest.raises(CampaignFormatError):
        import_campaign(folder)
    assert db.session.scalar(select(PracticeItem.id)) is None


def test_the_cli_reports_practice_items(app, folder):
    result = CliRunner().invoke(app.cli, ["campaign", "import", "--dry-run", folder])
    assert result.exit_code == 0, result.output
    assert "(8 controls as their fallback), 3 practice items." in result.output


@pytest.mark.parametrize("name", ["en-eu", "en-ur"])
def test_the_demos_have_three_practice_items(name):
    spec = read_campaign(os.path.join(os.path.dirname(DEMO), name))
    assert len(spec.practice) == 3
    for source, better, worse, why, whys in spec.practice:
        assert better != worse and why and set(whys) >= {"eu", "es"}


# The page.

def _campaign(tmp_path, name="campaign", **kwargs):
    folder = write_campaign(str(tmp_path / name), **(QUIET_SIGNS | {"sentences": 20, "practice": 3} | kwargs))
    campaign = create_campaign(read_campaign(folder))
    db.session.commit()
    return campaign


def _shown(html):
    """The practice form's fields and texts: (csrf, number, better, left, right)."""
    fields = dict(re.findall(r'name="(csrf_token|number|better)" type="hidden" value="([^"]*)"', html))
    left, right = re.findall(r'class="text translation[^"]*"[^>]*>(.*?)</div>', html, re.S)
    return fields["csrf_token"], fields["number"], fields["better"], left, right


def _answer(client, html, choice):
    csrf, number, better, _left, _right = _shown(html)
    return client.post("/c/test/practice", data={"csrf_token": csrf, "number": number, "better": better, "choice": choice})


def _database():
    """Every row of every table but users, which logging in may touch."""
    return {
        table.name: sorted(map(tuple, db.session.execute(table.select()).all()), key=repr)
        for table in db.metadata.sorted_tables
        if table.name != "users"
    }


def test_practice_with_feedback_then_evaluating(client, tmp_path):
    _campaign(tmp_path)
    register(client)
    for page in ("/c/test/instructions", "/c/test/welcome"):
        html = client.get(page).get_data(as_text=True)
        assert "Try a few practice sentences first" in html and 'href="/c/test/practice"' in html
    before = _database()

    html = client.get("/c/test/practice").get_data(as_text=True)
    assert "Practice sentence 1 of 3" in html and "Practice 1." in html and "Which translation is better?" in html
    _csrf, number, better, left, right = _shown(html)
    assert number == "1" and {left, right} == {"Right 1.", "Wrong 1."}
    assert (left == "Right 1.") == (better == "left")
    right_answer = better

    done = _answer(client, html, right_answer).get_data(as_text=True)
    assert "Right!" in done and "Because 1." in done
    assert f"Translation {1 if better == 'left' else 2} is the better one." in done
    assert 'href="/c/test/practice?n=2"' in done and "Next practice sentence" in done

    html = client.get("/c/test/practice?n=2").get_data(as_text=True)
    _csrf, _n, better, _l, _r = _shown(html)
    wrong = _answer(client, html, "right" if better == "left" else "left").get_data(as_text=True)
    assert "Not quite." in wrong and "Because 2." in wrong
    equal = _answer(client, html, "equal").get_data(as_text=True)
    assert "Not quite." in equal and "truly as good as each other" in equal

    html = client.get("/c/test/practice?n=3").get_data(as_text=True)
    last = _answer(client, html, _shown(html)[2]).get_data(as_text=True)
    assert "That was the last practice sentence." in last and 'href="/c/test/evaluate"' in last
    end = client.get("/c/test/practice?n=4").get_data(as_text=True)
    assert "That is the end of the practice" in end and "Start evaluating" in end

    # Practice answers count for nothing: no item, counter, ticket or ranking change.
    assert _database() == before


def test_both_orders_are_shown(client, tmp_path):
    _campaign(tmp_path)
    register(client)
    sides = {_shown(client.get("/c/test/practice").get_data(as_text=True))[2] for _ in range(20)}
    assert sides == {"left", "right"}


def test_a_post_without_csrf_is_refused(client, tmp_path):
    _campaign(tmp_path)
    register(client)
    html = client.get("/c/test/practice").get_data(as_text=True)
    _csrf, number, better, _l, _r = _shown(html)
    before = _database()
    response = client.post("/c/test/practice", data={"number": number, "better": better, "choice": better})
    assert response.status_code == 400 and "Right!" not in response.get_data(as_text=True)
    assert _database() == before


def test_a_post_without_a_choice_asks_again(client, tmp_path):
    _campaign(tmp_path)
    register(client)
    csrf, number, better, _l, _r = _shown(client.get("/c/test/practice?n=2").get_data(as_text=True))
    html = client.post("/c/test/practice", data={"csrf_token": csrf, "number": number, "better": better}).get_data(as_text=True)
    assert "Please choose one of the three answers." in html and "Practice sentence 2 of 3" in html
    assert "Right!" not in html and "Not quite." not in html


def test_who_has_not_joined_is_sent_to_join_and_a_visitor_to_log_in(app, client, tmp_path):
    _campaign(tmp_path)
    folder = write_campaign(str(tmp_path / "other"), sentences=6, controls=8, practice=2)
    with open(os.path.join(folder, "campaign.toml")) as f:
        manifest = f.read().replace('slug = "test"', 'slug = "other"')
    with open(os.path.join(folder, "campaign.toml"), "w") as f:
        f.write(manifest)
    create_campaign(read_campaign(folder))
    db.session.commit()
    visitor = app.test_client()
    response = visitor.get("/c/test/practice")
    assert response.status_code == 302 and "/login" in response.headers["Location"]
    register(client)  # joins "test" only
    response = client.get("/c/other/practice")
    assert response.status_code == 302 and response.headers["Location"].endswith("/c/other/join")
    token = csrf_token(client, "/c/test/practice")
    response = client.post("/c/other/practice", data={"csrf_token": token, "number": "1", "better": "left", "choice": "left"})
    assert response.status_code == 302 and response.headers["Location"].endswith("/c/other/join")


def test_no_practice_no_link_and_the_page_sends_to_the_instructions(client, tmp_path):
    _campaign(tmp_path, practice=0)
    register(client)
    for page in ("/c/test/instructions", "/c/test/welcome"):
        assert "practice" not in client.get(page).get_data(as_text=True).lower()
    response = client.get("/c/test/practice")
    assert response.status_code == 302 and response.headers["Location"].endswith("/c/test/instructions")


def test_practice_texts_are_escaped(client, tmp_path):
    folder = write_campaign(str(tmp_path / "c"), **(QUIET_SIGNS | {"sentences": 20}))
    evil = '<script>alert(1)</script><img src=x onerror="y">'
    _write_practice(folder, f"{evil} source\t{evil} better\t{evil} worse\t{evil} why")
    create_campaign(read_campaign(folder))
    db.session.commit()
    register(client)
    html = client.get("/c/test/practice").get_data(as_text=True)
    answered = _answer(client, html, "left").get_data(as_text=True)
    for page in (html, answered):
        assert "<script>alert" not in page and "<img src=x" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=&#34;y&#34;&gt; why" in answered


def test_the_verdict_comes_first_in_the_title(client, tmp_path):
    _campaign(tmp_path)
    register(client)
    html = client.get("/c/test/practice").get_data(as_text=True)
    assert "<title>Practice · Bozka</title>" in html
    answered = _answer(client, html, _shown(html)[2]).get_data(as_text=True)
    assert "<title>Right! · Practice · Bozka</title>" in answered
    assert '<strong>Right!</strong>' in answered
