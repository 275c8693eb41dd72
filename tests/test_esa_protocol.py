"""Error Span Annotation (issue 33): the spans' rules, serving in document
order with documents kept whole, answers with spans, and the exports read
back by the analysis (app/stats/esa)."""
import json
import random
from datetime import timedelta

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Item, Sentence, Slot, System, utcnow
from app.protocols.esa import spans
from app.services import evaluation, export
from app.services.campaign_writer import create_campaign
from app.services.importer import read_campaign
from app.stats.esa.analysis import analyse_esa
from app.stats.esa.reader import load_esa
from helpers import QUIET_SIGNS, add_documents, join_directly, write_campaign

DOCUMENTS = ["news\td1"] * 3 + ["social\td2"] * 2 + ["news\td3"] * 4 + ["speech\td4"]


# --- the spans' rules ---------------------------------------------------------

def test_spans_are_sorted_and_checked():
    marked = [{"start": 6, "end": 9, "severity": "major"}, {"start": 0, "end": 3, "severity": "minor"},
              {"start": None, "end": None, "severity": "minor"}]
    assert spans.parse(marked) == [marked[1], marked[0], marked[2]]
    assert spans.parse([]) == []
    assert spans.counts(spans.parse(marked)) == (2, 1, 1) and spans.span_score(marked) == -7


@pytest.mark.parametrize("bad", [
    None, "[]", [{"start": 0, "end": 3}], [{"start": 0, "end": 3, "severity": "fatal"}],
    [{"start": 3, "end": 3, "severity": "minor"}], [{"start": -1, "end": 3, "severity": "minor"}],
    [{"start": 0, "end": True, "severity": "minor"}], [{"start": 0, "end": None, "severity": "minor"}],
    [{"start": 0, "end": 5, "severity": "minor"}, {"start": 4, "end": 6, "severity": "major"}],
    [{"start": 0, "end": 3, "severity": "minor", "extra": 1}],
    [{"start": 0, "end": 1, "severity": "minor"}] * (spans.MAX_SPANS + 1),
])
def test_malformed_spans_are_refused(bad):
    assert spans.parse(bad) is None


def test_a_span_beyond_the_text_is_refused():
    assert spans.parse([{"start": 2, "end": 5, "severity": "minor"}], length=5) is not None
    assert spans.parse([{"start": 2, "end": 6, "severity": "minor"}], length=5) is None


# --- serving ------------------------------------------------------------------

def _campaign(tmp_path, per_output=1, **settings):
    folder = write_campaign(str(tmp_path / "esa"), sentences=len(DOCUMENTS), systems=("A", "B"), protocol="esa",
                            **(QUIET_SIGNS | {"judgments_per_pair": per_output} | settings))
    campaign = create_campaign(read_campaign(add_documents(folder, DOCUMENTS)))
    db.session.commit()
    return campaign


def _volunteer(campaign, name):
    return join_directly(campaign, name, "password-123", confirmed=True)


def _walk(campaign, participation_id, answer, limit=100):
    """Answer every item served; the (sentence number, system, texts) of each."""
    rng, seen = random.Random(3), []
    step = evaluation.show(campaign, participation_id, utcnow(), rng)
    while step.item is not None and len(seen) < limit:
        item = db.session.get(Item, step.item.id)
        seen.append((db.session.get(Sentence, item.sentence_id).number, item.left_system_id, step.texts))
        step = evaluation.answer(campaign, participation_id, step.item.token, answer(step.texts), utcnow(), rng)
    return seen


def test_a_volunteer_gets_each_document_whole_in_order_with_what_came_before(app, tmp_path):
    campaign = _campaign(tmp_path, qc_share=0)  # no bad-reference documents (tests/test_esa_quality.py)
    seen = _walk(campaign, _volunteer(campaign, "ane"), lambda texts: (70, []))
    documents = {}
    for number, system, _texts in seen:
        documents.setdefault(DOCUMENTS[number - 1].split("\t")[1], []).append((number, system))
    # Each document once, its segments consecutive, in order, from one system.
    assert len(seen) == len(DOCUMENTS)
    for document, segments in documents.items():
        numbers = [n for n, _ in segments]
        assert numbers == sorted(numbers) and numbers == list(range(numbers[0], numbers[0] + len(numbers)))
        assert len({system for _, system in segments}) == 1
        assert len(numbers) == sum(1 for line in DOCUMENTS if line.endswith("\t" + document))
    order = [n for n, _, _ in seen]
    assert all(abs(a - b) == 1 for a, b in zip(order, order[1:]) if DOCUMENTS[a - 1] == DOCUMENTS[b - 1])
    # The earlier segments of the document are shown with the current one.
    for number, system, texts in seen:
        source, _reference, translation, previous = texts
        first = min(n for n in range(1, number + 1) if DOCUMENTS[n - 1] == DOCUMENTS[number - 1])
        assert [s for s, _r, _t in previous] == [f"Source sentence number {n}." for n in range(first, number)]
        assert translation.startswith(f"Output {number} of ")


def test_a_document_begun_is_finished_even_when_others_filled_its_slots(app, tmp_path):
    campaign = _campaign(tmp_path, qc_share=0)
    rng = random.Random(5)
    first = _volunteer(campaign, "first")
    step = evaluation.show(campaign, first, utcnow(), rng)
    item = db.session.get(Item, step.item.id)
    document = DOCUMENTS[db.session.get(Sentence, item.sentence_id).number - 1]
    # Another volunteer takes the rest of the campaign meanwhile.
    _walk(campaign, _volunteer(campaign, "second"), lambda texts: (50, []))
    step = evaluation.answer(campaign, first, step.item.token, (60, []), utcnow(), rng)
    if DOCUMENTS.count(document) > 1:
        following = db.session.get(Item, step.item.id)
        assert DOCUMENTS[db.session.get(Sentence, following.sentence_id).number - 1] == document
        assert following.left_system_id == item.left_system_id


def test_an_answer_stores_the_score_and_spans_and_a_forged_span_changes_nothing(app, tmp_path):
    campaign = _campaign(tmp_path)
    participation = _volunteer(campaign, "ane")
    rng = random.Random(2)
    step = evaluation.show(campaign, participation, utcnow(), rng)
    length = len(step.texts[2])
    forged = evaluation.answer(campaign, participation, step.item.token,
                               (40, [{"start": 0, "end": length + 1, "severity": "major"}]), utcnow(), rng)
    assert forged.item.id == step.item.id and db.session.get(Item, step.item.id).answered_at is None
    marked = [{"start": 0, "end": 6, "severity": "major"}, {"start": None, "end": None, "severity": "minor"}]
    evaluation.answer(campaign, participation, step.item.token, (40, marked), utcnow(), rng)
    stored = db.session.get(Item, step.item.id)
    assert (stored.score, stored.spans) == (40, marked)


# --- exports, read back by the analysis -----------------------------------------

def test_the_exports_are_read_back_by_the_analysis(app, tmp_path):
    campaign = _campaign(tmp_path, per_output=2, qc_share=0)  # BAD rows: tests/test_esa_quality.py
    quality = {"A": 85, "B": 55}
    names = {s.id: s.name for s in db.session.scalars(select(System).where(System.campaign_id == campaign.id))}

    def annotator(rng):
        def answer(texts):
            system = texts[2].rsplit(" ", 1)[1].rstrip(".")
            marks = [] if system == "A" else [{"start": 0, "end": 6, "severity": "major"}]
            return max(0, min(100, quality[system] + rng.randint(-5, 5))), marks
        return answer

    for n in range(4):
        _walk(campaign, _volunteer(campaign, f"v{n}"), annotator(random.Random(n)))
    source = export.source(campaign)
    jsonl = tmp_path / "esa.jsonl"
    jsonl.write_text("".join(export.stream(source, "esa-judgments", "jsonl", db.engine)), encoding="utf-8")
    wmt = tmp_path / "esa.csv"
    wmt.write_text("".join(export.stream(source, "wmt24-esa", "csv", db.engine)), encoding="utf-8")
    records = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    answered = db.session.scalars(select(Item).where(Item.campaign_id == campaign.id,
                                                     Item.answered_at.is_not(None))).all()
    assert len(records) == len(answered) == 4 * len(DOCUMENTS)
    by_id = {item.id: item for item in answered}
    for record in records:
        item = by_id[record["judgment_id"]]
        assert record["system"] == names[item.left_system_id] and record["score"] == item.score
        # Inclusive ends in the exports, as WMT writes them.
        assert record["spans"] == [{"start": 0, "end": 5, "severity": "major"}] * (record["system"] == "B")
        assert record["domain"] == DOCUMENTS[record["segment"] - 1].split("\t")[0]
    assert not wmt.read_text(encoding="utf-8").startswith("annotator")  # WMT24's files have no header
    for path, fmt in ((jsonl, "bozka-esa"), (wmt, "wmt24-esa")):
        result = analyse_esa(load_esa(str(path), fmt))
        scores = {s["system"]: s for s in result["systems"]}
        assert scores["A"]["segments"] == scores["B"]["segments"] == len(DOCUMENTS)
        assert scores["A"]["score"] > scores["B"]["score"]


def test_a_document_left_in_its_middle_is_taken_up_there_and_every_segment_is_judged(app, tmp_path):
    campaign = _campaign(tmp_path, qc_share=0)  # one judgment per segment and system
    rng = random.Random(7)

    def number(item_id):
        return db.session.get(Sentence, db.session.get(Item, item_id).sentence_id).number

    first = _volunteer(campaign, "first")
    step = evaluation.show(campaign, first, utcnow(), rng)
    while number(step.item.id) != 1:  # on to the first document (three segments)
        step = evaluation.answer(campaign, first, step.item.token, (60, []), utcnow(), rng)
    step = evaluation.answer(campaign, first, step.item.token, (60, []), utcnow(), rng)
    left = db.session.get(Item, step.item.id)  # segment 2, served, never answered: its hold runs out
    assert number(left.id) == 2
    # Meanwhile nobody is sent into the middle of the document someone is reading.
    meanwhile = db.session.get(Item, evaluation.show(campaign, _volunteer(campaign, "meanwhile"), utcnow(), rng).item.id)
    assert not (number(meanwhile.id) in (2, 3) and meanwhile.left_system_id == left.left_system_id)
    later = utcnow() + timedelta(seconds=campaign.reservation_timeout + 1)
    walks = []
    for name in ("second", "third", "fourth"):
        participation = _volunteer(campaign, name)
        step, seen = evaluation.show(campaign, participation, later, rng), []
        while step.item is not None:
            item = db.session.get(Item, step.item.id)
            seen.append((number(item.id), item.left_system_id, step.texts))
            step = evaluation.answer(campaign, participation, step.item.token, (50, []), later, rng)
        walks.append(seen)
    # Someone took it up at segment 2, with segment 1 shown, to the document's end.
    taken_up = [seen[i:i + 2] for seen in walks for i, (n, system, _t) in enumerate(seen)
                if (n, system) == (2, left.left_system_id)]
    assert taken_up and [(n, system) for n, system, _t in taken_up[0]] == [(2, left.left_system_id),
                                                                            (3, left.left_system_id)]
    assert [source for source, _r, _t in taken_up[0][0][2][3]] == ["Source sentence number 1."]
    # Every segment of every system got its judgment.
    judged = db.session.scalars(select(Slot.collected).join(Sentence, Sentence.id == Slot.sentence_id)
                                .where(Sentence.campaign_id == campaign.id)).all()
    assert judged and min(judged) >= 1
