"""A DA campaign's organiser pages as a newcomer read them: the review page
shows the quality-control evidence beside the reason a volunteer was held or
dismissed, and what counts while held or dismissed; the totals group an
organiser's own dismissal reasons; the two judgment counts are explained;
the volunteers export carries DA's quality columns; the analysis says
plainly that a volunteers file is not judgments; the docs say what the
"Scores per system" figures are."""
import csv
import json
import os
import random
import subprocess
import sys

from app.extensions import db
from app.models import Participation, utcnow
from app.services import dashboard, review
from app.services import score_quality
from app.protocols.pairwise.export import CONTROL_COLUMNS
from app.services.export import volunteer_columns
from app.stats.pairwise.loader import detect_format
from da_simulation import honest, join, make_da_campaign, optimiser, run
from helpers import staff_client

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def page_of(app, participation_id):
    return staff_client(app, "organiser").get(f"/organiser/c/test/volunteer/{participation_id}").get_data(as_text=True)


def row(page, row_id):
    start = page.index(f'id="{row_id}"')
    return page[start:page.index("</tr>", start)]


def test_a_held_da_volunteer_shows_the_quality_evidence_and_counts_nothing(app, tmp_path):
    # Pairs enough for the early check, too few for the live rule to dismiss.
    campaign = make_da_campaign(str(tmp_path / "da"), qc_min_pairs=50)
    participation_id = join(campaign, "opti")
    run(campaign, participation_id, optimiser, limit=40)
    participation = db.session.get(Participation, participation_id)
    assert participation.is_held and not participation.is_dismissed
    assert participation.held_reason in (score_quality.NOT_LOWER, score_quality.LOW_VARIATION)
    page = page_of(app, participation_id)
    sign = row(page, "sign-da_quality")
    assert "Held for it" in sign and "yes: " in sign
    assert row(page, "sign-fast").endswith(">no</td>")
    evidence = page[page.index('id="volunteer-evidence"'):]
    evidence = evidence[:evidence.index("</p>")]
    judgments = review.volunteer_record(campaign, participation).quality
    assert judgments.pairs >= 2 and f"Bad-reference pairs scored: {judgments.pairs} " in evidence
    assert "mean score of the originals 70.0, of their bad references 70.0" in evidence  # the optimiser's 70s
    assert "Spread of the scores" in evidence and "judge test" in evidence
    counted = page[page.index('data-figure="counted"'):]
    assert counted.startswith(f'data-figure="counted">none while held ({participation.items_counted} if the hold')


def test_a_dismissed_da_volunteer_shows_why_and_that_nothing_counts(app, tmp_path):
    campaign = make_da_campaign(str(tmp_path / "da"))
    participation_id = join(campaign, "opti")
    assert run(campaign, participation_id, optimiser) == "dismissed"
    page = page_of(app, participation_id)
    assert 'id="volunteer-evidence"' in page and 'id="sign-da_quality"' in page
    participation = db.session.get(Participation, participation_id)
    sign = row(page, "sign-da_quality")
    assert ("yes: " in sign) if participation.held_reason else ("dismissed for it" in sign)
    assert 'data-figure="counted">none: discarded with the dismissal</dd>' in page


def test_an_untroubled_da_volunteer_has_the_sign_row_but_no_evidence_line(app, tmp_path):
    campaign = make_da_campaign(str(tmp_path / "da"))
    participation_id = join(campaign, "ane")
    run(campaign, participation_id, honest(random.Random(3)), limit=30)
    page = page_of(app, participation_id)
    assert 'id="volunteer-evidence"' not in page and row(page, "sign-da_quality").endswith(">no</td>")
    participation = db.session.get(Participation, participation_id)
    assert f'data-figure="counted">{participation.items_counted}</dd>' in page


def test_totals_group_an_organisers_own_reasons_as_one_kind(app, tmp_path):
    campaign = make_da_campaign(str(tmp_path / "da"))
    opti, ane, jon = (join(campaign, name) for name in ("opti", "ane", "jon"))
    assert run(campaign, opti, optimiser) == "dismissed"
    now = utcnow()
    for pid, words in ((ane, "Scores run opposite to quality; probably reversed the slider."), (jon, "A bot.")):
        review.dismiss(campaign, review.locked_volunteer(campaign, pid), words, now)
    db.session.commit()
    reasons = dashboard.summary(campaign, utcnow())["totals"]["dismissed_reasons"]
    assert {(r["reason"], r["count"]) for r in reasons} == {(score_quality.NOT_LOWER, 1), ("by_organiser", 2)}
    panel = staff_client(app, "organiser").get("/organiser/c/test/panel").get_data(as_text=True)
    listed = panel[panel.index('id="dismissed-reasons"'):panel.index("</ul>", panel.index('id="dismissed-reasons"'))]
    assert "probably reversed the slider" not in listed and "A bot." not in listed
    assert '<li data-reason="by_organiser"><bdi>dismissed by an organiser, with a reason of their own</bdi>: 2' in listed


def test_the_two_judgment_counts_say_what_they_count(app, tmp_path):
    make_da_campaign(str(tmp_path / "da"))
    panel = staff_client(app, "organiser").get("/organiser/c/test/panel").get_data(as_text=True)
    assert 'id="judgments-hint"' in panel and "towards the target" in panel
    assert 'id="research-counted-hint"' in panel and "quality-control items count too" in panel


def export(app, path, fmt):
    result = app.test_cli_runner().invoke(args=["export", "volunteers", "test", "--format", fmt, "-o", str(path)])
    assert result.exit_code == 0, result.output


def test_the_da_volunteers_export_has_das_quality_columns(app, tmp_path):
    campaign = make_da_campaign(str(tmp_path / "da"))
    opti = join(campaign, "opti")
    assert run(campaign, opti, optimiser) == "dismissed"
    join(campaign, "new")  # no score yet: no sums
    path = tmp_path / "volunteers.csv"
    export(app, path, "csv")
    with open(path, encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == volunteer_columns(campaign)
        assert reader.fieldnames[-9:-4] == ["qc_items", "qc_pairs", "qc_mean_drop", "judge_pairs", "judge_status"]
        rows = list(reader)
    assert not set(CONTROL_COLUMNS) & set(rows[0])
    dismissed = next(r for r in rows if r["dismissed"] == "true")
    assert dismissed["dismissed_reason"] == score_quality.NOT_LOWER
    assert int(dismissed["qc_pairs"]) >= campaign.qc_min_pairs and float(dismissed["qc_mean_drop"]) <= 0
    assert int(dismissed["qc_items"]) > 0
    fresh = next(r for r in rows if r["items_answered"] == "0")
    assert fresh["qc_pairs"] == "0" and fresh["qc_mean_drop"] == "" and fresh["judge_status"] == "untested"


def test_the_analysis_says_a_volunteers_file_is_not_judgments(app, tmp_path):
    campaign = make_da_campaign(str(tmp_path / "da"))
    run(campaign, join(campaign, "opti"), optimiser, limit=10)
    for fmt in ("csv", "jsonl"):
        path = tmp_path / f"volunteers.{fmt}"
        export(app, path, fmt)
        done = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "analyse.py"), str(path)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode != 0
        assert "volunteers export (one row per volunteer), not a judgments file" in done.stderr, done.stderr
        assert "unknown key" not in done.stderr


def test_the_volunteers_file_check_leaves_judgments_alone():
    assert detect_format("x", json.dumps({"volunteer": "v-1", "choice": "left"})) == "bozka-jsonl"
    assert detect_format("x", "campaign,volunteer,choice,system_a,system_b") == "bozka"


def test_the_dashboard_docs_say_the_system_figures_are_means_over_scores():
    with open(os.path.join(ROOT, "docs", "dashboard.md"), encoding="utf-8") as handle:
        text = " ".join(handle.read().split())
    assert "These are the analysis's own figures" not in text
    assert "so they equal what the analysis" not in text
    assert "means over its scores" in text and "averages per segment" in text
    assert "Unlike the rest of the dashboard this reads every valid score" not in text
