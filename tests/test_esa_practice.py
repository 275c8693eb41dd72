"""ESA practice items (issue 33): practice.tsv's inline marks, the feedback
on spans, the importer's refusals, and the page (nothing stored)."""
import json
import os
import re

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import PracticeItem
from app.protocols import practice as practice_of
from app.protocols.esa import practice
from app.services.campaign_writer import create_campaign
from app.services.importer import CampaignFormatError, read_campaign
from helpers import DEMO, QUIET_SIGNS, register, write_campaign


def _span(start, end, severity="minor"):
    return {"start": start, "end": end, "severity": severity}


OMISSION = {"major": _span(None, None, "major"), "minor": _span(None, None, "minor")}


# The markup.

def test_marks_become_spans_of_the_text_without_them():
    text, spans = practice.read_marked("Nire [[minor:anaia]] bizikleta [[major:urdin]] bat erosi zuen.[[major:]]")
    assert text == "Nire anaia bizikleta urdin bat erosi zuen."
    assert spans == [_span(5, 10), _span(21, 26, "major"), OMISSION["major"]]
    assert [text[s["start"]:s["end"]] for s in spans[:2]] == ["anaia", "urdin"]


def test_offsets_are_code_points_and_plain_text_has_no_spans():
    text, spans = practice.read_marked("Ĉu 🙂 [[minor:ĝi]]?")
    assert text == "Ĉu 🙂 ĝi?" and text[spans[0]["start"]:spans[0]["end"]] == "ĝi"
    assert practice.read_marked("Eskerrik asko [bai] ( ] [ ).") == ("Eskerrik asko [bai] ( ] [ ).", [])
    assert practice.read_marked("[[major:Dena]][[minor:gaizki]]")[1] == [_span(0, 4, "major"), _span(4, 10)]


@pytest.mark.parametrize("marked, message", [
    ("A [[critical:b]] c.", "the severity must be minor or major"),
    ("A [[b]] c.", "'[[' outside a mark"),
    ("A [[minor:b c.", "'[[' outside a mark"),
    ("A b]] c.", "']]' outside a mark"),
    ("A [[minor:b [[major:c]] d]] e.", "'[[' outside a mark"),
    ("A [[minor: b]] c.", "begins or ends with a space"),
    ("A [[minor:b ]] c.", "begins or ends with a space"),
    ("[[minor:]] [[major:]]", "the translation is empty"),
    ("A [[minor:]] b [[major:]].", "more than one omission"),
])
def test_malformed_marks_are_refused(marked, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        practice.read_marked(marked)


# The feedback rule.

def test_a_mark_overlapping_a_known_error_finds_it():
    known = [_span(5, 10), _span(21, 26, "major"), OMISSION["major"]]
    marked = [_span(8, 14, "major"), _span(30, 33), OMISSION["minor"]]
    result = practice.feedback(known, marked)
    assert result.found == ((_span(5, 10), "major"), (OMISSION["major"], "minor"))
    assert result.missed == (_span(21, 26, "major"),)
    assert result.extra == (_span(30, 33),)
    assert not result.correct


def test_touching_is_not_overlapping_and_one_mark_may_find_two():
    known = [_span(0, 4), _span(4, 8)]
    assert practice.feedback(known, [_span(8, 10)]).missed == tuple(known)
    whole = practice.feedback(known, [_span(2, 6, "major")])
    assert [severity for _span_, severity in whole.found] == ["major", "major"] and whole.correct


def test_nothing_known_and_nothing_marked_is_right():
    assert practice.feedback([], []).correct
    assert not practice.feedback([], [_span(0, 1)]).correct
    assert not practice.feedback([OMISSION["minor"]], [_span(0, 1)]).correct  # a span is no omission


def test_pieces_show_the_known_errors_in_the_text():
    assert practice.pieces("ab cd ef", [_span(3, 5), OMISSION["minor"]]) == [("ab ", None), ("cd", "minor"),
                                                                             (" ef", None)]
    assert practice.pieces("ab", [_span(0, 2, "major")]) == [("ab", "major")]


# The importer.

def _esa_folder(tmp_path, *lines, header="source\ttranslation\twhy"):
    folder = write_campaign(str(tmp_path / "esa"), **(QUIET_SIGNS | {"sentences": 6, "protocol": "esa"}))
    if lines is not None:
        with open(os.path.join(folder, "practice.tsv"), "w") as f:
            f.write("\n".join((header, *lines)) + "\n")
    return folder


GOOD = ("One.\tBat [[major:hiru]].\tWrong number.", "Two.\tBi.\tRight.", "Three.\tHiru[[minor:]].\tMissing dot.")


def test_an_esa_practice_file_is_imported(app, tmp_path):
    folder = _esa_folder(tmp_path, *GOOD, header="source\ttranslation\twhy\twhy.eu")
    spec = read_campaign(folder)
    assert spec.practice[0] == ("One.", "Bat hiru.", "", "Wrong number.", {}, [_span(4, 8, "major")])
    assert spec.practice[1][-1] == [] and spec.practice[2][-1] == [OMISSION["minor"]]
    campaign = create_campaign(spec)
    db.session.commit()
    rows = db.session.scalars(select(PracticeItem).order_by(PracticeItem.number)).all()
    assert [(r.campaign_id, r.better, r.worse, r.spans) for r in rows] == [
        (campaign.id, "Bat hiru.", "", [_span(4, 8, "major")]), (campaign.id, "Bi.", "", []),
        (campaign.id, "Hiru.", "", [OMISSION["minor"]])]


@pytest.mark.parametrize("lines, header, line, message", [
    (GOOD, "source\tbetter\tworse\twhy", 1, "header must be: source<TAB>translation<TAB>why"),
    (("One.\tBat.\tWhy.", "Two.\tBi [[grave:x]].\tWhy."), None, 3, "the severity must be minor or major"),
    (("One.\tBat.\tWhy.", "Two.\tBi.\tWhy.", "Three.\tHiru [[minor:x.\tWhy."), None, 4, "'[[' outside a mark"),
    (("One.\tBat.",), None, 2, "expected 3 tab-separated fields, found 2"),
    (("One.\tBat.\tWhy.\tMore.",), None, 2, "expected 3 tab-separated fields, found 4"),
    (("Source sentence number 3.\tBat.\tWhy.",), None, 2, "a sentence of the campaign"),
    ((), None, None, "no practice items"),
])
def test_a_malformed_esa_practice_file_is_refused_whole_with_its_line(app, tmp_path, lines, header, line, message):
    folder = _esa_folder(tmp_path, *lines, header=header or "source\ttranslation\twhy")
    with pytest.raises(CampaignFormatError) as info:
        read_campaign(folder)
    assert info.value.path == "practice.tsv" and info.value.line == line and message in info.value.message


def test_the_esa_demo_has_practice_items_with_their_errors():
    spec = read_campaign(os.path.join(os.path.dirname(DEMO), "en-eu-esa"))
    assert 2 <= len(spec.practice) <= 3
    for source, translation, worse, why, whys, spans in spec.practice:
        assert worse == "" and "[[" not in translation and why and set(whys) >= {"eu", "es"}
    assert any(spans for *_texts, spans in spec.practice)


def test_the_registry_hands_out_each_protocols_practice():
    assert practice_of("esa") is practice and practice_of("da") is None
    assert practice_of("pairwise").HEADER == ["source", "better", "worse", "why"]


# The page.

def _database():
    return {table.name: sorted(map(tuple, db.session.execute(table.select()).all()), key=repr)
            for table in db.metadata.sorted_tables if table.name != "users"}


def _post(client, html, score="70", spans=()):
    csrf = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', html).group(1)
    number = re.search(r'name="number" type="hidden" value="([^"]+)"', html).group(1)
    return client.post("/c/test/practice", data={"csrf_token": csrf, "number": number, "score": score,
                                                 "spans": json.dumps(list(spans))}).get_data(as_text=True)


def test_esa_practice_with_feedback_on_spans_writes_nothing(client, tmp_path):
    create_campaign(read_campaign(_esa_folder(tmp_path, *GOOD)))
    db.session.commit()
    register(client)
    assert "Try a few practice sentences first" in client.get("/c/test/instructions").get_data(as_text=True)
    before = _database()

    html = client.get("/c/test/practice").get_data(as_text=True)
    assert "Practice sentence 1 of 3" in html and 'id="esa"' in html and "Check my answer" in html
    assert "Bat hiru." in html and "[[" not in html and "Wrong number." not in html
    # "hiru" (4-8) found as minor, "Bat" (0-3) marked where nothing was known.
    done = _post(client, html, spans=[_span(0, 3), _span(4, 8)])
    assert "Not quite." in done and "Wrong number." in done
    found = re.search(r'<ul class="esa-list" id="found".*?</ul>', done, re.S).group()
    assert "hiru" in found and "you marked it as minor" in found
    extra = re.search(r'<ul class="esa-list" id="extra".*?</ul>', done, re.S).group()
    assert "Bat" in extra and 'id="missed"' not in done
    assert '<span class="esa-word esa-major">hiru</span>' in done and 'href="/c/test/practice?n=2"' in done

    # Without JavaScript nothing is marked: every known error shows, as missed.
    html = client.get("/c/test/practice?n=3").get_data(as_text=True)
    done = _post(client, html)
    missed = re.search(r'<ul class="esa-list" id="missed".*?</ul>', done, re.S).group()
    assert "[missing]" in missed and "That was the last practice sentence." in done

    html = client.get("/c/test/practice?n=2").get_data(as_text=True)
    assert "Right!" in _post(client, html) and "no known errors" in _post(client, html)
    assert "Not quite." in _post(client, html, spans=[_span(0, 2, "major")])
    # A mark beyond the text (an edited form) counts as none.
    assert "Right!" in _post(client, html, spans=[_span(0, 50)])
    assert _database() == before


def test_an_esa_practice_answer_without_a_score_asks_again(client, tmp_path):
    create_campaign(read_campaign(_esa_folder(tmp_path, *GOOD)))
    db.session.commit()
    register(client)
    html = _post(client, client.get("/c/test/practice").get_data(as_text=True), score="")
    assert "Please move the slider to give a score." in html and "Practice sentence 1 of 3" in html
    assert 'id="feedback"' not in html
