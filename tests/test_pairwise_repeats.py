"""Pairwise repeats (issue 29, item 4): a share of a volunteer's items show
again a test item they judged at least ``repeat_distance`` items before,
never as items 1-2 and never in a control's place; the exports mark them
and the analysis uses them only for intra-annotator agreement."""
import csv
import io
import json
import os
import subprocess
import sys
from datetime import timedelta

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Item, Participation, User, utcnow
from app.services import assignment, export
from app.protocols.pairwise import repeats
from app.services.accounts import join_campaign
from app.services.format_error import CampaignFormatError
from app.services.importer import read_campaign
from app.protocols.pairwise.protocol import is_control
from app.services.quality import volunteer_seed
from app.stats import agreement
from app.stats.pairwise import loader, report
from helpers import QUIET_SIGNS, csrf_token, register, write_campaign
from test_volunteer_flow import right_answer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- the rule -----------------------------------------------------------------

@pytest.mark.parametrize("share", [5, 20, 50])
def test_about_the_share_of_positions_is_a_repeat_never_items_1_2_nor_a_control(share):
    positions = range(1, 20001)
    chosen = [p for p in positions if repeats.is_repeat_position(p, share, "salt:7")]
    assert 1 not in chosen and 2 not in chosen
    assert abs(len(chosen) / (len(positions) - 2) - share / 100) < 0.015
    assert not any(repeats.is_repeat_position(p, share, "salt:7", control=True) for p in positions)
    # Another volunteer's places are their own.
    assert chosen != [p for p in positions if repeats.is_repeat_position(p, share, "salt:8")]


def test_share_0_is_off():
    assert not any(repeats.is_repeat_position(p, 0, "s") for p in range(1, 1000))


def test_an_original_lies_at_least_the_distance_back_in_a_bounded_window():
    earliest, latest = repeats.original_range(100, 10, 4, 200)
    assert (earliest, latest) == (-114, 86)
    for drawn in range(11):
        earliest, latest = repeats.original_range(500, 10, drawn, 200)
        assert 500 - latest >= 10 and latest - earliest == 200


# --- serving ------------------------------------------------------------------

def _campaign(tmp_path, **settings):
    from app.services.campaign_writer import create_campaign

    folder = write_campaign(str(tmp_path / "campaign"), sentences=120, systems=("A", "B", "C"),
                            **(QUIET_SIGNS | settings))
    campaign = create_campaign(read_campaign(folder))
    db.session.commit()
    return campaign


def _serve_and_answer(campaign, count, choose=lambda item: "left", name="v"):
    """A volunteer served and answering ``count`` items in-process; their items."""
    now = utcnow() - timedelta(hours=1)
    user = User(email=f"{name}@example.org", username=name, password_hash="-")
    db.session.add(user)
    db.session.flush()
    participation = join_campaign(user, campaign, "C1-C2", "C1-C2", now)
    db.session.commit()
    import random

    rng = random.Random(3)
    for n in range(count):
        item = assignment.serve_next(campaign, participation, now + timedelta(seconds=n), rng)
        assert item is not None
        stored = db.session.get(Item, item.id)
        stored.answered_at, stored.choice, stored.seconds = now + timedelta(seconds=n), choose(stored), 5.0
        db.session.commit()
    return participation, db.session.scalars(
        select(Item).where(Item.participation_id == participation.id).order_by(Item.position)).all()


def test_repeats_show_an_earlier_test_item_at_least_the_distance_later(app, tmp_path):
    campaign = _campaign(tmp_path, repeat_share=30, repeat_distance=4)
    participation, items = _serve_and_answer(campaign, 100)
    seed = volunteer_seed(campaign.pseudonym_salt, participation.id)
    by_id = {item.id: item for item in items}
    shown = [item for item in items if item.qc_kind == repeats.REPEAT]
    assert 12 <= len(shown) <= 35  # about 30 in 100 of the non-control places, once originals are due
    originals = [item.original_item_id for item in shown]
    assert len(set(originals)) == len(originals)  # each original once
    for item in shown:
        original = by_id[item.original_item_id]
        assert item.position >= 3 and not is_control(campaign, item.position, seed)
        assert item.control_id is None and item.slot_id is None
        assert original.slot_id is not None and original.control_id is None and original.qc_kind is None
        assert item.position - original.position >= campaign.repeat_distance
        assert item.sentence_id == original.sentence_id
        assert {item.left_system_id, item.right_system_id} == {original.left_system_id, original.right_system_id}
    # Sides are drawn afresh: some repeats show the pair swapped, some not.
    swapped = [by_id[i.original_item_id].left_system_id != i.left_system_id for i in shown]
    assert any(swapped) and not all(swapped)
    # A position drawn for a repeat holds one whenever an original was due
    # for any draw of the gap: a test item at least twice the distance back,
    # not repeated before that position.
    repeated_at = {i.original_item_id: i.position for i in shown}
    for item in items:
        if not repeats.is_repeat_position(item.position, 30, seed, is_control(campaign, item.position, seed)):
            continue
        due = [o for o in items if o.slot_id is not None and o.qc_kind is None
               and o.position <= item.position - 2 * campaign.repeat_distance
               and repeated_at.get(o.id, item.position) >= item.position]
        assert item.qc_kind == repeats.REPEAT or not due


def test_without_the_setting_no_repeat_is_served(app, tmp_path):
    campaign = _campaign(tmp_path)
    assert campaign.repeat_share == 0 and campaign.repeat_distance == 10
    _participation, items = _serve_and_answer(campaign, 40)
    assert not any(item.qc_kind for item in items)


def test_the_importer_checks_the_settings(tmp_path):
    folder = write_campaign(str(tmp_path / "c1"), repeat_share=51)
    with pytest.raises(CampaignFormatError, match="repeat_share"):
        read_campaign(folder)
    folder = write_campaign(str(tmp_path / "c2"), repeat_distance=0)
    with pytest.raises(CampaignFormatError, match="repeat_distance"):
        read_campaign(folder)
    assert read_campaign(write_campaign(str(tmp_path / "c3"), repeat_share=10)).settings["repeat_share"] == 10


# --- through the site: judging API, export, analysis ----------------------------

def _system(text):
    return text.rsplit(" of ", 1)[1].rstrip(".") if " of " in text else None


def test_a_volunteer_judges_repeats_the_exports_mark_them_and_the_analysis_reports_intra_kappa(
        app, client, make_campaign, tmp_path):
    make_campaign(sentences=60, repeat_share=40, repeat_distance=3)
    register(client)
    headers = {"X-CSRFToken": csrf_token(client, "/c/test/welcome")}
    item = client.get("/c/test/api/item").get_json()["item"]
    answered = 0
    for _ in range(45):
        left, right = _system(item["left"]), _system(item["right"])
        # Tests: the system whose name sorts first (A and C: equal); controls: the right answer.
        choice = right_answer(item["left"], item["right"]) if left is None else "left" if left < right else "right"
        if {left, right} == {"A", "C"}:
            choice = "equal"
        data = client.post("/c/test/api/judgment", json={"token": item["token"], "choice": choice},
                           headers=headers).get_json()
        assert data["status"] == "accepted"
        answered += 1
        assert data["answered"] == answered  # a repeat is a judgment of the volunteer's, as any other
        item = data["item"]
    items = db.session.scalars(select(Item).where(Item.answered_at.is_not(None)).order_by(Item.position)).all()
    shown = [i for i in items if i.qc_kind == repeats.REPEAT]
    assert shown, "expected repeats"
    participation = db.session.scalar(select(Participation))
    assert participation.items_counted == 45

    campaign = participation.campaign
    rows = list(csv.DictReader(io.StringIO(
        "".join(export.stream(export.source(campaign), "judgments", "csv", db.engine)))))
    kinds = {row["judgment_id"]: row for row in rows}
    for repeat in shown:
        row = kinds[str(repeat.id)]
        original = kinds[row["original_judgment_id"]]
        assert row["kind"] == "repeat" and original["kind"] == "test" and row["is_control"] == "false"
        assert (row["sentence_id"], row["system_a"], row["system_b"]) == (
            original["sentence_id"], original["system_a"], original["system_b"])
    assert {row["kind"] for row in rows} == {"test", "control", "repeat"}
    assert all(row["original_judgment_id"] == "" for row in rows if row["kind"] != "repeat")
    # WMT's layout cannot mark a repeat: it holds none.
    wmt = export.stream(export.source(campaign), "wmt", "csv", db.engine)
    tests = [row for row in rows if row["kind"] == "test" and not row["left_out"]]
    assert len("".join(wmt).splitlines()) == 1 + len(tests)

    # The analysis: repeats are no judgment of the systems, only intra-annotator agreement.
    path = str(tmp_path / "judgments.csv")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("".join(export.stream(export.source(campaign), "judgments", "csv", db.engine)))
    data = loader.load(path, keep_flagged=True)
    assert len(data) == len([row for row in rows if row["kind"] == "test"])
    assert data.counts["repeats"] == len(shown)
    result = agreement.agreement(data)
    # The volunteer answered by the systems' names: every repeat agrees with its original.
    ties = sum(2 for i in shown if {i.left_system_id, i.right_system_id} == _ids(campaign, "A", "C"))
    assert result["intra"]["comparable"] == result["intra"]["agreeing"] == len(shown)
    assert result["intra"]["labels"] == 2 * len(shown) and result["intra"]["ties"] == ties

    out = str(tmp_path / "analysis.json")
    done = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "analyse.py"), path, "--keep-flagged",
                           "--bootstrap", "0", "--quiet", "--json", out], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    with open(out, encoding="utf-8") as handle:
        analysed = json.load(handle)
    assert analysed["agreement"]["intra"] == pytest.approx(result["intra"])
    assert analysed["input"]["judgments"] == len(data) and analysed["input"]["counts"]["repeats"] == len(shown)
    # Wins come from the test judgments alone.
    assert sum(map(sum, analysed["win_matrix"]["wins"])) + sum(map(sum, analysed["win_matrix"]["ties"])) / 2 \
        == len(data)
    intra_row = next(row for row in report.agreement_rows(analysed) if row[0].startswith("intra"))
    assert intra_row[-1] != "not available" and intra_row[4] == len(shown)


def _ids(campaign, *names):
    return {system.id for system in campaign.systems if system.name in names}


def test_intra_kappa_pairs_each_repeat_with_its_original_whatever_the_sides():
    # Known answer: judge j1 repeats two items, agreeing on one (its sides swapped, the same system
    # chosen) and not on the other; judge j2's repeat has no original (left out) and is dropped.
    records = [("1", "A", "B", "A", "j1"), ("2", "A", "C", "equal", "j1"), ("3", "B", "C", "C", "j2"),
               ("4", "A", "B", "B", "j2")]
    data = loader.from_records(records)
    data.repeats = [("j1", "1", "B", "A", -1), ("j1", "2", "C", "A", 1), ("j2", "9", "A", "B", 1)]
    intra = agreement.agreement(data)["intra"]
    # P(A) = 1/2; P(tie) = 1 tie in 4 labels, P(E) = 1/16 + 2 * (3/8)^2 = 0.34375
    assert (intra["agreeing"], intra["comparable"], intra["ties"], intra["labels"]) == (1, 2, 1, 4)
    assert intra["kappa"] == pytest.approx((0.5 - 0.34375) / (1 - 0.34375))
    # --judges keeps a judge's repeats with their judgments
    only = loader.filter_judges(data, ["j1"])
    assert only.repeats == data.repeats[:2]
    assert agreement.agreement(only)["intra"]["agreeing"] == 1
    data.repeats = []
    assert agreement.agreement(data)["intra"] is None
