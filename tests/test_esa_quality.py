"""ESA's quality control as WMT24 did it (issue 33, item 4): bad-reference
documents served whole and in order after their originals, the live rule
that dismisses, the first checks that hold, the running sums the dashboard
reads, the exports' BAD rows and the review page's evidence."""
import json
import random
import re

from sqlalchemy import select

from app.extensions import db
from app.models import Item, Output, Participation, Sentence, System, Ticket, utcnow
from app.protocols import esa
from app.protocols.esa import dashboard as esa_dashboard, spans
from app.services import evaluation, export, score_quality
from app.services.campaign_writer import create_campaign
from app.services.importer import read_campaign
from app.services import volunteer_figures
from app.stats.esa.reader import load_esa
from helpers import QUIET_SIGNS, add_documents, join_directly, write_campaign

# Twelve documents of three to five segments, with outputs long enough to degrade.
DOCUMENTS = [f"news\td{n}" for n in range(1, 13) for _ in range(3 + n % 3)]
QUALITY = {"A": 85, "B": 55}


def _campaign(tmp_path, **settings):
    folder = write_campaign(str(tmp_path / "esa"), sentences=len(DOCUMENTS), systems=tuple(QUALITY), protocol="esa",
                            **(QUIET_SIGNS | {"judgments_per_pair": 3, "raffle_every": 10} | settings))
    folder = add_documents(folder, DOCUMENTS)
    for name in QUALITY:  # outputs of ten words: a bad reference changes two or three
        path = f"{folder}/systems/{name}.txt"
        lines = open(path, encoding="utf-8").read().splitlines()
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("".join(f"{line} with seven more words to read here\n" for line in lines))
    campaign = create_campaign(read_campaign(folder))
    campaign.pseudonym_salt = "esa-tests"  # the secret schedule, the same in every run
    db.session.commit()
    return campaign


def _walk(campaign, participation_id, score_of, limit=200):
    """Answer every item served; the items answered, in order, and the last status."""
    rng, answered = random.Random(4), []
    step = evaluation.show(campaign, participation_id, utcnow(), rng)
    while step.item is not None and len(answered) < limit:
        item = db.session.get(Item, step.item.id)
        answered.append((item, step.texts))
        step = evaluation.answer(campaign, participation_id, step.item.token, score_of(item, step.texts),
                                 utcnow(), rng)
    return answered, step.status


def _system(texts):
    return re.fullmatch(r"Output \d+ of (\w+)\. with seven more words to read here", texts[2])


def honest(rng):
    """Scores by the system's quality, with an error marked on B; a bad
    reference (no longer an output as written) much lower."""
    def score_of(item, texts):
        match = _system(texts)
        if item.qc_kind is not None or match is None:
            return rng.randint(0, 30), [{"start": 0, "end": 6, "severity": "major"}]
        marks = [] if match.group(1) == "A" else [{"start": 0, "end": 6, "severity": "minor"}]
        return max(0, min(100, QUALITY[match.group(1)] + rng.randint(-10, 10))), marks
    return score_of


def _number(item):
    return db.session.get(Sentence, item.sentence_id).number


def test_bad_reference_documents_come_whole_in_order_after_their_originals(app, tmp_path):
    campaign = _campaign(tmp_path, qc_share=100, qc_distance=4)
    answered, _status = _walk(campaign, join_directly(campaign, "ane", "password-123", confirmed=True),
                              honest(random.Random(1)))
    position = {item.id: item.position for item, _texts in answered}
    checks = [(item, texts) for item, texts in answered if item.qc_kind is not None]
    assert checks and all(item.qc_kind == score_quality.BAD_REFERENCE for item, _ in checks)
    originals = {item.id: (item, texts) for item, texts in answered if item.qc_kind is None}
    for item, texts in checks:
        original, original_texts = originals[item.original_item_id]
        # The same segment and system, degraded, at least the distance later (2 before the first ticket).
        assert (original.sentence_id, original.left_system_id) == (item.sentence_id, item.left_system_id)
        assert texts[2] != original_texts[2] and texts[0] == original_texts[0]
        assert item.position - original.position >= (2 if item.position <= campaign.raffle_every else 4)
    # Each original is checked once; a bad-reference document runs in order, its
    # segments consecutive, and is never the document just annotated.
    assert len({item.original_item_id for item, _ in checks}) == len(checks)
    runs = []
    for item, _texts in checks:
        if runs and runs[-1][-1].position == item.position - 1:
            runs[-1].append(item)
        else:
            runs.append([item])
    for run in runs:
        numbers = [_number(item) for item in run]
        assert numbers == sorted(numbers) and len({DOCUMENTS[n - 1] for n in numbers}) == 1
        before = answered[position[run[0].id] - 2][0]
        assert before.qc_kind is not None or DOCUMENTS[_number(before) - 1] != DOCUMENTS[numbers[0] - 1]
    # The earlier segments shown in a bad-reference document are degraded too.
    for item, texts in checks:
        sentence = db.session.get(Sentence, item.sentence_id)
        earlier = db.session.execute(
            select(Output.text, Output.degraded).join(Sentence, Sentence.id == Output.sentence_id)
            .where(Sentence.campaign_id == campaign.id, Sentence.document == sentence.document,
                   Sentence.number < sentence.number, Output.system_id == item.left_system_id)
            .order_by(Sentence.number)).all()
        assert [translation for _source, _reference, translation in texts[3]] == [d or t for t, d in earlier]
    # Test documents stay whole and in order, bad-reference documents only between them.
    tests = [item for item, _ in answered if item.qc_kind is None]
    for a, b in zip(tests, tests[1:]):
        if DOCUMENTS[_number(a) - 1] == DOCUMENTS[_number(b) - 1]:
            assert _number(b) == _number(a) + 1 and b.position == a.position + 1


def test_an_honest_annotator_is_kept_and_an_optimiser_is_held_then_dismissed(app, tmp_path):
    campaign = _campaign(tmp_path, qc_share=50, qc_distance=4, qc_min_pairs=3)
    honest_id = join_directly(campaign, "honest", "password-123", confirmed=True)
    answered, status = _walk(campaign, honest_id, honest(random.Random(2)))
    participation = db.session.get(Participation, honest_id)
    assert (status, participation.dismissed_reason, participation.held_reason) == ("finished", None, None)
    # Bad references count toward the raffle and the ranking as any item does.
    assert any(item.qc_kind for item, _texts in answered)
    assert participation.items_counted == len(answered)
    tickets = db.session.scalars(select(Ticket.number).where(Ticket.participation_id == honest_id)).all()
    assert len(tickets) == len(answered) // campaign.raffle_every
    # The same score whatever is shown: the first checks hold before the first ticket.
    lazy = join_directly(campaign, "lazy", "password-123", confirmed=True)
    _walk(campaign, lazy, lambda item, texts: (70, []))
    participation = db.session.get(Participation, lazy)
    assert participation.held_reason == score_quality.LOW_VARIATION
    # Held at the fifth score already, before the first ticket (item 10).
    fifth = db.session.scalar(select(Item.answered_at).where(Item.participation_id == lazy,
                                                             Item.position == score_quality.EARLY_SCORES))
    assert participation.held_at is not None and participation.held_at <= fifth
    # Bad references scored above their originals: the live rule dismisses.
    reversed_ = join_directly(campaign, "reversed", "password-123", confirmed=True)
    rng = random.Random(3)
    _answered, status = _walk(campaign, reversed_, lambda item, texts: (
        (90 if item.qc_kind else rng.randint(20, 60)), []))
    participation = db.session.get(Participation, reversed_)
    assert participation.dismissed_at is not None or participation.held_at is not None
    assert (participation.dismissed_reason or participation.held_reason) == score_quality.NOT_LOWER


def test_the_dashboard_sums_match_the_stored_answers_and_the_exports_mark_bad_rows(app, tmp_path):
    campaign = _campaign(tmp_path, qc_share=50, qc_distance=4)
    for n in range(3):
        _walk(campaign, join_directly(campaign, f"v{n}", "password-123", confirmed=True), honest(random.Random(n)))
    names = {s.id: s.name for s in db.session.scalars(select(System).where(System.campaign_id == campaign.id))}
    items = db.session.scalars(select(Item).where(Item.campaign_id == campaign.id, Item.answered_at.is_not(None))).all()
    tests = [item for item in items if item.qc_kind is None and not item.too_fast]
    checks = [item for item in items if item.qc_kind is not None]
    assert checks
    # The panel, from the running sums, against a recount of the stored answers.
    panel = esa_dashboard.summary(campaign, volunteer_figures.read(campaign.id))
    for row in panel["systems"]:
        mine = [item for item in tests if names[item.left_system_id] == row["system"]]
        assert row["segments"] == len(mine)
        assert abs(row["mean"] - sum(i.score for i in mine) / len(mine)) < 1e-9
        minor, major, omissions = (sum(c) for c in zip(*(spans.counts(i.spans or []) for i in mine)))
        assert abs(row["minor"] - minor / len(mine)) < 1e-9 and abs(row["major"] - major / len(mine)) < 1e-9
        assert row["omissions"] == omissions
    by_id = {item.id: item for item in items}
    assert panel["quality"]["valid"] == len(checks)
    assert abs(panel["quality"]["mean"] - sum(i.score for i in checks) / len(checks)) < 1e-9
    assert abs(panel["quality"]["original_mean"]
               - sum(by_id[i.original_item_id].score for i in checks) / len(checks)) < 1e-9
    # The exports carry the bad references as BAD rows, which the analysis leaves out.
    source = export.source(campaign)
    jsonl = tmp_path / "esa.jsonl"
    jsonl.write_text("".join(export.stream(source, "esa-judgments", "jsonl", db.engine)), encoding="utf-8")
    records = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["judgment_id"] for r in records if r["type"] == "BAD") == sorted(i.id for i in checks)
    wmt = tmp_path / "esa.csv"
    wmt.write_text("".join(export.stream(source, "wmt24-esa", "csv", db.engine)), encoding="utf-8")
    assert sum(1 for line in wmt.read_text(encoding="utf-8").splitlines() if ",BAD," in line) == len(checks)
    for path in (jsonl, wmt):
        assert len(load_esa(str(path))) == len(tests)


def test_the_review_page_shows_the_rules_evidence(app, tmp_path):
    campaign = _campaign(tmp_path, qc_share=100, qc_distance=4)
    participation_id = join_directly(campaign, "ane", "password-123", confirmed=True)
    answered, _status = _walk(campaign, participation_id, honest(random.Random(5)))
    judgments = esa.review_judgments(db.session.get(Participation, participation_id))
    checks = [j for j in judgments if j.kind == score_quality.BAD_REFERENCE]
    assert len(judgments) == len(answered) and checks
    assert all(j.original_score is not None for j in checks)
    evidence = judgments.quality
    assert evidence.pairs == len(checks) and evidence.verdict is None
    assert evidence.bad_mean < evidence.original_mean
