"""The organisers' pages of a Direct Assessment campaign (issue 20): the
dashboard's system scores are the analysis's, its quality-control summary
counts what happened, nothing pairwise-only is shown, it follows new scores
live, and the review pages show a DA volunteer's scores."""
import math
import random

from sqlalchemy import func, select

from app import realtime
from app.extensions import db, socketio
from app.models import Item, Output, Participation, utcnow
from app.services import dashboard, evaluation, export
from app.services import score_quality
from app.protocols.da import export as da_export
from app.stats.da.analysis import analyse_da
from app.stats.da.loader import REPEAT, SYSTEM, load_da
from da_simulation import honest, join, judge, make_da_campaign, optimiser, run, user_id
from helpers import staff_client

PAIRWISE_ONLY = ("Completion per system pair", "Control pass rate", "have seen every control", "“equal”",
                 "First translation", "Control sentences")


def test_the_system_table_is_the_analysis_of_the_export(app, tmp_path):
    """The panel's figures are the analysis's judges (same test, same means
    and deviations) with means over scores instead of segments: the same
    ranking, and raw and z means recomputed from the export."""
    campaign = make_da_campaign(str(tmp_path / "da"))
    judge(campaign)
    data = dashboard.summary(campaign, utcnow())["protocol"]
    path = tmp_path / "scores.csv"
    assert app.test_cli_runner().invoke(args=["export", "da-judgments", "test", "-o", str(path)]).exit_code == 0
    scores = load_da(str(path))
    analysed = analyse_da(scores)
    assert [row["system"] for row in data["systems"]] == [row["system"] for row in analysed["systems"]]
    assert data["scores"] == len(scores)
    judges = analysed["judges"]
    for mine, theirs in zip(data["systems"], analysed["systems"]):
        system = scores.systems.index(mine["system"])
        rows = [i for i in range(len(scores)) if scores.system[i] == system and scores.kind[i] in (SYSTEM, REPEAT)
                and judges[scores.judge[i]]["kept"]]
        z = [(scores.score[i] - judges[scores.judge[i]]["mean"]) / judges[scores.judge[i]]["sd"] for i in rows]
        assert mine["scores"] == theirs["judgments"] == len(rows)
        assert mine["judges"] == len({scores.judge[i] for i in rows})
        assert math.isclose(mine["raw"], sum(scores.score[i] for i in rows) / len(rows))
        assert math.isclose(mine["z"], sum(z) / len(z))
        assert abs(mine["z"] - theirs["z"]) < 0.2  # the analysis averages per segment first
        assert mine["target"] == 30 * 6  # sentences x judgments wanted
    assert sum(row["collected"] for row in data["systems"]) == campaign.collected_judgments
    assert data["judges"]["reliable"] == 4 and data["judges"]["judges"] == 4  # the optimiser's scores are discarded
    # Quality items per kind, as stored; the optimiser's are discarded.
    for entry in data["quality"]:
        # Paired ones: a bad reference served first counts once its original is scored.
        stored = select(func.count()).where(Item.qc_kind == entry["kind"], Item.answered_at.is_not(None),
                                            Item.original_item_id.is_not(None))
        assert entry["valid"] == db.session.scalar(stored.where(Item.discarded_at.is_(None)))
        assert entry["discarded"] == db.session.scalar(stored.where(Item.discarded_at.is_not(None)))
    bad = next(entry for entry in data["quality"] if entry["kind"] == score_quality.BAD_REFERENCE)
    assert bad["discarded"] >= 3 and bad["mean"] < bad["original_mean"] - 30  # honest judges see the damage
    assert data["dismissed_by_rule"] == [{"reason": score_quality.NOT_LOWER, "count": 1},
                                         {"reason": score_quality.LOW_VARIATION, "count": 0}]


def test_the_dashboard_page_shows_da_figures_and_nothing_pairwise(app, tmp_path):
    campaign = make_da_campaign(str(tmp_path / "da"))
    for who in ("organiser", "researcher"):
        page = staff_client(app, who).get("/organiser/c/test/").get_data(as_text=True)
        assert "Scores per system" in page and "No answers yet." in page  # before any score: no crash
    judge(campaign)
    organiser = staff_client(app, "organiser", "organiser2")
    page = organiser.get("/organiser/c/test/").get_data(as_text=True)
    panel = organiser.get("/organiser/c/test/panel").get_data(as_text=True)
    for text in (page, panel):
        assert "Scores per system" in text and 'data-system="A"' in text and "Mean z score" in text
        assert "Quality control" in text and "bad reference" in text and "reference as translation" in text
        assert "bad references scored no lower than their originals: <span" in text  # a label, not the code
        assert "bad_references_not_lower:" not in text
        for pairwise in PAIRWISE_ONLY:
            assert pairwise not in text, pairwise
    assert "<bdi>bad references scored no lower than their originals</bdi>: 1" in panel  # the totals' list


def test_the_panel_follows_new_scores_and_the_organiser_room_hears_them(app, tmp_path):
    campaign = make_da_campaign(str(tmp_path / "da"), qc_min_pairs=1)
    organiser = staff_client(app, "organiser")
    watcher = socketio.test_client(app, flask_test_client=organiser)
    assert watcher.emit("watch", {"campaign": "test"}, callback=True) == {"ok": True}
    ane = join(campaign, "ane")
    rng = random.Random(4)

    def counted():  # the scores that count for research, as the export marks them (issue 28)
        return sum(row["left_out"] is None for row in da_export.da_judgment_rows(export.source(campaign), db.engine))

    run(campaign, ane, honest(rng), limit=5)
    assert dashboard.summary(campaign, utcnow())["protocol"]["scores"] == counted()
    run(campaign, ane, honest(rng), limit=7)
    second = dashboard.summary(campaign, utcnow())["protocol"]  # not the cached figures
    assert second["scores"] == counted() == 12  # ane scored a bad reference: tested
    system_and_repeats = db.session.scalar(select(func.count()).where(
        Item.answered_at.is_not(None), (Item.qc_kind.is_(None)) | (Item.qc_kind == score_quality.REPEAT)))
    kept = second["judges"]["judges"] - second["judges"]["left_out"]
    assert sum(row["scores"] for row in second["systems"]) == system_and_repeats * kept
    realtime.touch(campaign.id)
    realtime.flush()
    assert any(event["name"] == "dashboard" for event in watcher.get_received())
    assert 'data-system="A"' in organiser.get("/organiser/c/test/panel").get_data(as_text=True)


def test_the_review_page_of_a_da_volunteer(app, tmp_path):
    campaign = make_da_campaign(str(tmp_path / "da"))
    db.session.execute(Output.__table__.update().values(text='<script>alert("x")</script>, "MT" & more'))
    db.session.commit()
    participation_id = join(campaign, "opti")
    assert run(campaign, participation_id, optimiser) == "dismissed"
    organiser = staff_client(app, "organiser")
    page = organiser.get(f"/organiser/c/test/volunteer/{participation_id}").get_data(as_text=True)
    assert "<script>alert" not in page and "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page
    assert "bad references scored no lower than their originals" in page and "bad_references_not_lower" not in page
    assert 'id="quality-items"' in page and 'id="sign-fast"' in page
    assert 'id="sign-same_side"' not in page and 'id="sign-equal"' not in page
    for pairwise in ("First translation", "Second translation", "Better translation shown", "Control sentences"):
        assert pairwise not in page
    items = db.session.scalars(select(Item).where(Item.participation_id == participation_id,
                                                  Item.answered_at.is_not(None))).all()
    quality = [item for item in items if item.qc_kind]
    assert quality and page.count(' data-cell="kind">') == len(quality)
    assert page.count(' data-cell="original-score">70</td>') == len(quality)  # the original's score beside it
    assert page.count("(original: 70)") == len(quality)
    assert page.count(' data-cell="score">') == len(quality) + len(items)
    report = organiser.get("/organiser/c/test/suspicious")
    assert report.status_code == 200 and "Only the quality-control rule ends participation" in report.get_data(as_text=True)
    # The dismissed volunteer's state reads as the label.
    assert db.session.get(Participation, participation_id).dismissed_reason == score_quality.NOT_LOWER
    assert user_id("opti") is not None


def test_a_da_volunteer_never_seen_by_the_pairwise_review(app, tmp_path):
    """A volunteer with no answer yet: the page and the report still work."""
    campaign = make_da_campaign(str(tmp_path / "da"))
    participation_id = join(campaign, "new")
    evaluation.show(campaign, participation_id, utcnow(), random.Random(1))
    organiser = staff_client(app, "organiser")
    page = organiser.get(f"/organiser/c/test/volunteer/{participation_id}")
    assert page.status_code == 200 and "No quality-control item answered yet." in page.get_data(as_text=True)
    assert organiser.get("/organiser/c/test/suspicious").status_code == 200
