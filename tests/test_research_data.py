"""Research data free of flagged answers (issue 28, item 3): on the demo
campaign, with honest volunteers, a bot held for review, a volunteer who
answers too fast, one not yet tested and one dismissed, the export, the
analysis of that export and the dashboard count the same answers as counting
and leave out the same ones for the same reasons."""
import csv
import io
import json
import os
import random
import subprocess
import sys
from collections import Counter
from datetime import timedelta

import pytest
from sqlalchemy import select

from app.choices import dismissal_kind
from app.extensions import db
from app.models import utcnow
from app.services import accounts, dashboard, evaluation, export, research, review
from app.services.campaign_writer import create_campaign
from app.services.importer import read_campaign
from app.stats import research as rule

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(ROOT, "app", "demo", "en-eu")


# The rule, as plain values.

def test_an_answer_counts_when_no_flag_is_set_and_is_counted_under_its_first_reason():
    assert rule.left_out({}) is None
    assert rule.left_out(dict.fromkeys(rule.REASONS, False)) is None
    assert rule.left_out({"too_fast": True, "held": True}) == "held"
    assert rule.left_out({"too_fast": True, "held": True}, keep=rule.FLAGGED) is None
    assert rule.left_out({"control": True, "held": True}, keep=rule.FLAGGED) == "control"
    assert rule.left_out({"discarded": True, "dismissed": True}, keep=("discarded",)) == "dismissed"
    for reason in rule.REASONS:
        assert rule.left_out({reason: True}) == reason
        assert rule.left_out({reason: True}, keep=(reason,)) is None


def test_untested_rules():
    assert research.pairwise_untested(9, check_every=10) and not research.pairwise_untested(10, check_every=10)


# On the demo campaign.

def _volunteer(campaign, name, answers, choose, seconds, start):
    """A volunteer who answers up to ``answers`` items, ``choose(item, n)``
    each, ``seconds(n)`` after it was shown (an answer serves the next item
    at once); every time in the past, so an export made now holds them."""
    user = accounts.create_user(f"{name}@example.org", name, "password-123", age_group="26-35",
                                studies_level="university", studies_field="humanities")
    participation = accounts.join_campaign(user, campaign, "B1-B2", "C1-C2")
    db.session.commit()
    rng, now = random.Random(name), start
    for n in range(1, answers + 1):
        item = evaluation.show(campaign, participation.id, now, rng).item
        if item is None:
            break
        now += timedelta(seconds=seconds(n))
        evaluation.answer(campaign, participation.id, item.token, choose(item, n, rng), now, rng)
    db.session.refresh(participation)
    return participation


def _right(item):
    return "left" if item.better_left else "right"


def honest(item, n, rng):
    return _right(item) if item.is_control else rng.choice(("left", "right", "equal"))


def left_bot(item, n, rng):
    """Knows the controls, always chooses the first translation elsewhere."""
    return _right(item) if item.is_control else "left"


def _every_fifth_fast(n):
    return 0.2 if n % 5 == 3 else 6.0  # never five in a row: not held for it


@pytest.fixture
def demo(app):
    campaign = create_campaign(read_campaign(DEMO))
    db.session.commit()
    start = utcnow() - timedelta(hours=3)
    people = {}
    for i in range(4):
        people[f"honest{i}"] = _volunteer(campaign, f"honest{i}", 40, honest, lambda n: 6.0, start)
    people["bot"] = _volunteer(campaign, "bot", 45, left_bot, lambda n: 5.0, start)
    people["quick"] = _volunteer(campaign, "quick", 30, honest, _every_fifth_fast, start)
    people["newcomer"] = _volunteer(campaign, "newcomer", 6, honest, lambda n: 6.0, start)
    people["dismissed"] = _volunteer(campaign, "dismissed", 12, honest, lambda n: 6.0, start)
    review.dismiss(campaign, people["dismissed"], "copied another volunteer's answers", utcnow())
    db.session.commit()
    assert people["bot"].held_at is not None and people["bot"].held_reason == "same_side"
    assert people["dismissed"].dismissed_at is not None
    assert all(p.held_at is None for name, p in people.items() if name != "bot")
    return campaign, people


def _export(campaign, kind, fmt="csv"):
    return "".join(export.stream(export.source(campaign), kind, fmt, db.engine))


def _analyse(path, *options, pairwise=True):
    out = path + ".json"
    quick = ["--bootstrap", "0"] if pairwise else []
    done = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "analyse.py"), path, "--json", out,
                           *quick, *options], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    with open(out, encoding="utf-8") as handle:
        return json.load(handle), done.stdout


def _by_reason(rows):
    return Counter(row["left_out"] or "counted" for row in rows)


def test_export_analysis_and_dashboard_count_the_same_answers(demo, tmp_path):
    campaign, people = demo
    text = _export(campaign, "judgments")
    rows = list(csv.DictReader(io.StringIO(text)))
    exported = _by_reason(rows)
    # Every reason the demo was made to show is there.
    assert {"counted", "control", "discarded", "held", "untested", "too_fast"} <= set(exported)
    # The flags are the volunteers' and the answers' own.
    bot = next(r["volunteer"] for r in rows if r["left_out"] == "held")
    assert all(r["held"] == "true" and r["held_reason"] == "same_side" for r in rows if r["volunteer"] == bot)
    assert all(r["untested"] == "true" for r in rows if r["left_out"] == "untested")
    assert all(r["too_fast"] == "true" for r in rows if r["left_out"] == "too_fast")
    assert all(r["dismissed"] == "true" and r["discarded"] == "true" for r in rows if r["left_out"] == "discarded")

    research_counts = dashboard.summary(campaign, utcnow())["research"]
    assert {k: v for k, v in research_counts.items() if v} == dict(exported)

    path = str(tmp_path / "judgments.csv")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    result, report = _analyse(path)
    counts = result["input"]["counts"]
    assert result["input"]["judgments"] == exported["counted"] == research_counts["counted"]
    assert counts["rows"] == len(rows) == sum(research_counts.values())
    for reason in rule.REASONS:
        assert counts.get(rule.SKIPPED[reason], 0) == research_counts[reason] == exported.get(reason, 0), reason
    assert f"{exported['held']} held" in report and f"{exported['too_fast']} too_fast" in report
    assert "--keep-flagged" in report and result["settings"]["keep_flagged"] is False

    kept, _report = _analyse(path, "--keep-flagged")
    flagged = sum(exported.get(reason, 0) for reason in rule.FLAGGED)
    assert kept["input"]["judgments"] == exported["counted"] + flagged
    assert kept["settings"]["keep_flagged"] is True

    # WMT's layout has no column for a flag: it holds only what counts.
    wmt = _export(campaign, "wmt").splitlines()
    assert len(wmt) == 1 + exported["counted"]


def test_a_cleared_hold_makes_the_volunteers_answers_count_in_the_next_download(demo):
    campaign, people = demo
    before = _by_reason(csv.DictReader(io.StringIO(_export(campaign, "judgments"))))
    review.clear_hold(people["bot"])
    db.session.commit()
    after = _by_reason(csv.DictReader(io.StringIO(_export(campaign, "judgments"))))
    assert after["held"] == 0 and after["counted"] == before["counted"] + before["held"]
    dashboard.forget()
    assert dashboard.summary(campaign, utcnow())["research"]["counted"] == after["counted"]


def test_the_dashboards_counts_follow_holds_and_dismissals_without_being_forgotten(demo):
    """The dashboard's counts sum the volunteers' export-row counters by
    their state (``research.counts``): a change of who counts moves them at
    the next call, as the export does."""
    campaign, people = demo

    def dashboard_agrees_with_the_export():
        exported = _by_reason(csv.DictReader(io.StringIO(_export(campaign, "judgments"))))
        counts = dashboard.summary(campaign, utcnow())["research"]
        assert {k: v for k, v in counts.items() if v} == dict(exported)
        return exported

    before = dashboard_agrees_with_the_export()
    review.clear_hold(people["bot"])
    db.session.commit()
    assert dashboard_agrees_with_the_export()["held"] == 0
    review.dismiss(campaign, people["honest0"], "answered for someone else", utcnow())
    db.session.commit()
    assert dashboard_agrees_with_the_export()["discarded"] > before["discarded"]


def test_a_volunteer_reaching_the_first_check_counts_at_the_next_call(demo):
    """Their first check makes their earlier answers tested at once."""
    campaign, people = demo
    newcomer = people["newcomer"]
    assert dashboard.summary(campaign, utcnow())["research"]["untested"] > 0  # their tests (not controls)
    rng, now = random.Random(7), utcnow() - timedelta(seconds=10)
    while newcomer.items_answered < campaign.check_every:
        item = evaluation.show(campaign, newcomer.id, now, rng).item
        now += timedelta(milliseconds=200)
        evaluation.answer(campaign, newcomer.id, item.token, honest(item, 0, rng), now, rng)
        db.session.refresh(newcomer)
    assert dashboard.summary(campaign, utcnow())["research"]["untested"] == 0


def test_the_dashboards_volunteer_figures_are_those_of_the_volunteers_rows(demo):
    """``volunteer_figures`` reads aggregates; the figures are those of every row."""
    import statistics

    from app.models import Participation, User
    from app.services import counting

    campaign, _people = demo
    rows = db.session.execute(select(Participation, User).join(User).where(
        Participation.campaign_id == campaign.id)).all()
    took_part = [p.items_answered for p, _user in rows if not p.dismissed_reason and p.items_answered]
    summary = dashboard.summary(campaign, utcnow())
    totals = summary["totals"]
    assert totals["registered"] == len(rows) and totals["took_part"] == len(took_part)
    assert totals["median_took_part"] == statistics.median(took_part)
    assert totals["mean_took_part"] == round(statistics.fmean(took_part), 2)
    assert totals["with_no_judgment"] == sum(1 for p, _user in rows if not p.items_answered)
    assert {r["reason"]: r["count"] for r in totals["dismissed_reasons"]} == Counter(  # by kind: an organiser's words are one
        dismissal_kind(p.dismissed_reason) for p, _user in rows if p.dismissed_reason)
    reasons = Counter(reason or "counted" for reason in counting.reasons(campaign, ids=[
        p.id for p, _user in rows if p.items_answered]).values())
    assert {k: n for k, n in summary["who_counts"].items() if n} == reasons
    ages = Counter(user.age_group for _p, user in rows)
    assert {r["key"]: r["count"] for r in summary["profile"]["age_group"] if r["count"]} == ages
    panel = summary["protocol"]
    assert panel["controls_answered"] == sum(p.controls_answered for p, _user in rows)
    assert panel["control_pool_exhausted"] == sum(1 for p, _user in rows if p.controls_seen_all)


def test_the_counters_moved_by_each_answer_equal_a_recount_from_the_answers(demo):
    from app.models import Participation

    campaign, _people = demo
    columns = (Participation.id, Participation.research_controls, Participation.research_tests,
               Participation.research_tests_too_fast)
    live = db.session.execute(select(*columns).order_by(Participation.id)).all()
    assert sum(row.research_tests_too_fast for row in live) > 0 and sum(row.research_controls for row in live) > 0
    research.recount(campaign.id)
    assert db.session.execute(select(*columns).order_by(Participation.id)).all() == live


def test_the_jsonl_export_carries_the_same_flags(demo):
    campaign, _people = demo
    as_csv = list(csv.DictReader(io.StringIO(_export(campaign, "judgments"))))
    as_jsonl = [json.loads(line) for line in _export(campaign, "judgments", "jsonl").splitlines()]
    assert [r["left_out"] or None for r in as_csv] == [r["left_out"] for r in as_jsonl]
    assert all(isinstance(r[c], bool) for r in as_jsonl for c in ("too_fast", "dismissed", "held", "untested"))


# The same on a Direct Assessment campaign.

def _da_volunteer(campaign, name, answers, score_of, seconds, start):
    from da_simulation import join

    participation_id, rng, now = join(campaign, name), random.Random(name), start
    step = evaluation.show(campaign, participation_id, now, rng)
    for n in range(1, answers + 1):
        if step.item is None:
            break
        now += timedelta(seconds=seconds(n))
        step = evaluation.answer(campaign, participation_id, step.item.token,
                                 score_of(step.texts, step.item.qc_kind), now, rng)
    return participation_id


def test_da_export_analysis_and_dashboard_count_the_same_scores(app, tmp_path):
    from app.models import Participation
    from da_simulation import honest, make_da_campaign, optimiser

    campaign = make_da_campaign(str(tmp_path / "da"), fast_seconds_per_word=0.0375)
    start, rng = utcnow() - timedelta(hours=3), random.Random(5)
    for n in range(3):
        _da_volunteer(campaign, f"honest{n}", 200, honest(rng), lambda n: 8.0, start)
    _da_volunteer(campaign, "quick", 200, honest(rng), _every_fifth_fast, start)
    _da_volunteer(campaign, "newcomer", 4, honest(rng), lambda n: 8.0, start)
    held = _da_volunteer(campaign, "held", 40, honest(rng), lambda n: 8.0, start)
    dismissed = _da_volunteer(campaign, "optimiser", 200, optimiser, lambda n: 8.0, start)
    participation = db.session.get(Participation, held)
    participation.held_at, participation.held_reason = utcnow(), "fast"
    db.session.commit()
    assert db.session.get(Participation, dismissed).dismissed_at is not None

    text = _export(campaign, "da-judgments")
    rows = list(csv.DictReader(io.StringIO(text)))
    exported = _by_reason(rows)
    assert {"counted", "discarded", "held", "too_fast"} <= set(exported), exported
    # A DA judge too new to be tested counts (issue 29): the analysis keeps and labels them.
    assert "untested" not in exported
    summary = dashboard.summary(campaign, utcnow())
    assert {k: v for k, v in summary["research"].items() if v} == dict(exported)
    assert summary["protocol"]["scores"] == exported["counted"]  # the DA panel's system scores use them

    path = str(tmp_path / "da-judgments.csv")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    result, report = _analyse(path, pairwise=False)
    counts = result["input"]["counts"]
    assert result["input"]["scores"] == exported["counted"]
    for reason in rule.REASONS:
        assert counts.get(rule.SKIPPED[reason], 0) == summary["research"][reason], reason
    kept, _report = _analyse(path, "--keep-flagged", pairwise=False)
    assert kept["input"]["scores"] == exported["counted"] + sum(exported.get(r, 0) for r in rule.FLAGGED)
    wmt = _export(campaign, "wmt-da", "tsv").splitlines()
    assert len(wmt) == 1 + exported["counted"]
