"""The exports of a Direct Assessment campaign (issue 20, item 7): the
``da-judgments`` and ``wmt-da`` exports read back by the analysis give what
the campaign's own rows give; discarded scores are marked; each protocol's
exports are refused for the other."""
import csv
import io
import json
import math
import os
import random
import statistics

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import Item, Output, Participation, System, utcnow
from app.services import answers, export
from app.protocols.da import export as da_export
from app.services.pseudonyms import pseudonym
from app.stats.da.analysis import analyse_da, rank_sum_greater
from app.stats.da.loader import from_da_records, load_da
from da_simulation import database_records, judge, join, make_da_campaign, run, user_id
from helpers import staff_client

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def judged(app, tmp_path):
    campaign = make_da_campaign(str(tmp_path / "da"))
    statuses = judge(campaign)
    assert statuses["optimiser0"] == "dismissed" and "dismissed" not in [statuses[f"honest{n}"] for n in range(4)]
    return campaign


def _export(app, tmp_path, kind, fmt=None):
    path = tmp_path / f"{kind}.{fmt or 'default'}"
    args = ["export", kind, "test", "-o", str(path)] + (["--format", fmt] if fmt else [])
    result = app.test_cli_runner().invoke(args=args)
    assert result.exit_code == 0, result.output
    return path


def _figures(result):
    """What must agree: system scores, N, Wilcoxon, the judges' verdicts, clusters."""
    return {
        "systems": [(s["system"], s["raw"], s["z"], s["segments"], s["judgments"]) for s in result["systems"]],
        "wilcoxon": result["wilcoxon"],
        "judges": sorted((j["judge"], j["status"], j["p"], j["kept"]) for j in result["judges"]),
        "clusters": result["clusters"],
    }


def _close(a, b):
    """Equal, floats to 1e-9 (a different order of summation may round differently)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    return a == b


def test_both_exports_read_back_give_the_campaigns_own_results(app, tmp_path, judged):
    direct = analyse_da(from_da_records(database_records(judged)))
    assert len(direct["systems"]) == 3 and direct["judges"]
    assert [j["status"] for j in direct["judges"]].count("reliable") == 4  # the honest judges; the optimiser is out
    for kind, fmt in (("da-judgments", "csv"), ("da-judgments", "jsonl"), ("wmt-da", None)):
        data = load_da(str(_export(app, tmp_path, kind, fmt)))
        assert data.source_format == ("wmt-da" if kind == "wmt-da" else "bozka-da")
        assert _close(_figures(analyse_da(data)), _figures(direct)), (kind, fmt)
    # The system order is the analysis's: best z first, here as the judges' quality.
    assert [s["system"] for s in direct["systems"]] == ["A", "B", "C"]


def test_system_scores_n_and_wilcoxon_by_hand_from_the_database(app, tmp_path, judged):
    """An independent computation from the rows, every judge kept: per-judge
    z over all their scores, segments of system and repeat scores, micro
    averages, one-sided rank-sum tests."""
    rows = database_records(judged)
    by_judge = {}
    for judge_name, _system, _sentence, _kind, score in rows:
        by_judge.setdefault(judge_name, []).append(score)
    stats = {j: (statistics.fmean(s), statistics.stdev(s)) for j, s in by_judge.items()}
    segments = {}
    for judge_name, system, sentence, kind, score in rows:
        if kind in ("system", "repeat"):
            mean, sd = stats[judge_name]
            segments.setdefault((system, sentence), []).append((score, (score - mean) / sd))
    expected, seg_z = {}, {}
    for (system, _sentence), values in sorted(segments.items()):
        raw = statistics.fmean(v[0] for v in values)
        z = statistics.fmean(v[1] for v in values)
        entry = expected.setdefault(system, {"raw": [], "z": []})
        entry["raw"].append(raw)
        entry["z"].append(z)
        seg_z.setdefault(system, []).append(z)
    result = analyse_da(load_da(str(_export(app, tmp_path, "da-judgments"))), keep_unreliable=True)
    assert len(result["judges"]) == len(by_judge) == 4
    for row in result["systems"]:
        mine = expected[row["system"]]
        assert row["segments"] == len(mine["raw"])
        assert math.isclose(row["raw"], statistics.fmean(mine["raw"]), rel_tol=1e-9)
        assert math.isclose(row["z"], statistics.fmean(mine["z"]), rel_tol=1e-9)
    for a in seg_z:
        for b in seg_z:
            if a != b:
                assert math.isclose(result["wilcoxon"][a][b], rank_sum_greater(seg_z[a], seg_z[b]), rel_tol=1e-9)


def test_the_export_rows_match_the_database_and_discarded_scores_are_marked(app, tmp_path, judged):
    # A bad reference served before its original is exported once that is scored (issue 28).
    answered = Item.answered_at.is_not(None) & (Item.qc_kind.is_(None) | Item.original_item_id.is_not(None))
    count = db.session.scalar(select(func.count()).where(answered))
    discarded = db.session.scalar(select(func.count()).where(answered, Item.discarded_at.is_not(None)))
    assert discarded > 0
    rows = list(csv.DictReader(open(_export(app, tmp_path, "da-judgments"), encoding="utf-8")))
    assert len(rows) == count and list(rows[0]) == da_export.DA_JUDGMENT_COLUMNS
    optimiser = pseudonym(judged, user_id("optimiser0"))
    marked = [r for r in rows if r["discarded"] == "true"]
    assert len(marked) == discarded and {r["volunteer"] for r in marked} == {optimiser}
    assert {r["discard_reason"] for r in marked} == {"bad_references_not_lower"}
    by_id = {r["judgment_id"]: r for r in rows}
    for row in rows:
        assert row["kind"] in ("system", "bad_reference", "repeat", "reference")
        assert 0 <= int(row["score"]) <= 100
        if row["kind"] == "system":
            assert row["original_judgment_id"] == ""
        else:  # paired with the same volunteer's score of the same translation
            original = by_id[row["original_judgment_id"]]
            assert original["kind"] == "system" and original["volunteer"] == row["volunteer"]
            assert (original["system"], original["sentence_id"]) == (row["system"], row["sentence_id"])
    # JSON Lines: the same rows, typed.
    records = [json.loads(line) for line in open(_export(app, tmp_path, "da-judgments", "jsonl"), encoding="utf-8")]
    assert len(records) == count and isinstance(records[0]["score"], int) and isinstance(records[0]["discarded"], bool)
    # Discarded scores are left out of the analysis unless asked for.
    path = str(_export(app, tmp_path, "da-judgments"))
    assert len(load_da(path)) == count - discarded == len(load_da(path, keep_flagged=True))
    assert len(load_da(path, include_discarded=True, keep_flagged=True)) == count  # the optimiser was held too
    # WMT's layout holds the valid scores only, quality-control items under WMT's names.
    wmt = open(_export(app, tmp_path, "wmt-da"), encoding="utf-8").read().splitlines()
    assert wmt[0].split("\t") == da_export.WMT_DA_COLUMNS and len(wmt) == 1 + count - discarded
    types = {line.split("\t")[8] for line in wmt[1:]}
    assert types == {"SYSTEM", "BAD_REF", "REPEAT", "REF"} and optimiser not in "".join(wmt)
    # The same pseudonyms as in the volunteers export.
    volunteers = {r["volunteer"] for r in export.volunteer_rows(export.source(judged), db.engine)}
    assert {r["volunteer"] for r in rows} == volunteers
    assert "@example.org" not in "".join(wmt) + json.dumps(records) and "Real " not in json.dumps(records)


def test_awkward_text_round_trips_and_system_names_with_spaces_survive_wmts_layout(app, tmp_path):
    # One bad reference tests a volunteer: their scores count, and are in WMT's layout (issue 28).
    campaign = make_da_campaign(str(tmp_path / "da"), systems=("Neural MT", "B"), sentences=12, qc_min_pairs=1)
    # MT output with commas, quotes and newlines changes nothing in the exports (they hold no text) ...
    db.session.execute(Output.__table__.update().values(text='Output, "quoted"\nand =SUM(1) more'))
    db.session.commit()
    volunteers = [join(campaign, name) for name in ("ane", "bea")]
    rng = random.Random(2)
    for participation_id in volunteers:
        # Bad references scored lower: held volunteers' scores would leave WMT's layout (issue 28).
        run(campaign, participation_id, lambda texts, kind=None: rng.randint(0, 30) if kind == "bad_reference"
            else rng.randint(50, 100), rng=rng)
    # ... and an organiser's reason with all of them comes back exactly.
    reason = 'Said "no", twice,\nthen left; 100% sure'
    answers.dismiss(campaign, db.session.get(Participation, volunteers[1]), reason, utcnow())
    db.session.commit()
    for fmt in ("csv", "jsonl"):
        text = open(_export(app, tmp_path, "da-judgments", fmt), encoding="utf-8").read()
        rows = list(csv.DictReader(io.StringIO(text))) if fmt == "csv" else [json.loads(x) for x in text.splitlines()]
        assert {r["discard_reason"] for r in rows if str(r["discarded"]).lower() == "true"} == {reason}
        assert {r["system"] for r in rows} == {"Neural MT", "B"}
    data = load_da(str(_export(app, tmp_path, "wmt-da")))
    assert data.systems == ["B", "Neural MT"]
    assert '"Neural MT"' in open(_export(app, tmp_path, "wmt-da"), encoding="utf-8").read()
    direct = analyse_da(from_da_records(database_records(campaign)))
    assert _close(_figures(analyse_da(data)), _figures(direct))


def test_each_protocol_refuses_the_others_exports(app, tmp_path, make_campaign):
    da = make_da_campaign(str(tmp_path / "da"), sentences=6)
    da.slug = "da"
    db.session.commit()
    make_campaign(sentences=6)  # pairwise, slug "test"
    runner = app.test_cli_runner()
    for kind, slug in (("da-judgments", "test"), ("wmt-da", "test"), ("judgments", "da"), ("wmt", "da"),
                       ("controls", "da")):
        result = runner.invoke(args=["export", kind, slug])
        assert result.exit_code != 0, (kind, slug)
        assert f"does not offer the export {kind}" in result.output
    wrong_format = runner.invoke(args=["export", "wmt-da", "da", "--format", "csv"])
    assert wrong_format.exit_code != 0 and "comes as tsv, not csv" in wrong_format.output
    assert runner.invoke(args=["export", "volunteers", "da"]).exit_code == 0
    organiser = staff_client(app, "organiser")
    refused = organiser.get("/organiser/c/da/export/judgments.csv")
    assert refused.status_code == 404 and "does not offer the export judgments" in refused.get_data(as_text=True)
    assert organiser.get("/organiser/c/test/export/da-judgments.csv").status_code == 404
    assert organiser.get("/organiser/c/da/export/wmt-da.jsonl").status_code == 404
    assert organiser.get("/organiser/c/da/export/wmt-da.tsv").status_code == 200
    # The dashboard links the campaign's own exports, in every format they come in.
    page = organiser.get("/organiser/c/da/").get_data(as_text=True)
    for name in ("da-da-judgments.csv", "da-da-judgments.jsonl", "da-wmt-da.tsv", "da-volunteers.csv"):
        assert name in page
    assert "/export/judgments." not in page and "/export/wmt." not in page and "/export/controls." not in page
    pairwise = organiser.get("/organiser/c/test/").get_data(as_text=True)
    assert "test-wmt.csv" in pairwise and "wmt-da" not in pairwise and "da-judgments" not in pairwise


def test_the_web_download_is_the_cli_export(app, tmp_path, judged):
    researcher = staff_client(app, "researcher")
    for kind, fmt in (("da-judgments", "csv"), ("da-judgments", "jsonl"), ("wmt-da", "tsv")):
        response = researcher.get(f"/organiser/c/test/export/{kind}.{fmt}")
        assert response.status_code == 200 and response.is_streamed
        assert f'filename="test-{kind}.{fmt}"' in response.headers["Content-Disposition"]
        assert response.get_data(as_text=True) == open(_export(app, tmp_path, kind, fmt), encoding="utf-8").read()


def test_every_da_export_column_is_documented():
    with open(os.path.join(ROOT, "docs", "export-format.md"), encoding="utf-8") as handle:
        doc = handle.read()
    for columns in (da_export.DA_JUDGMENT_COLUMNS, da_export.WMT_DA_COLUMNS):
        assert [c for c in columns if f"`{c}`" not in doc] == []
    for kind in export.KINDS:
        assert f"`{kind}`" in doc


def test_system_names_in_wmt_rows_are_the_systems(app, tmp_path, judged):
    names = set(db.session.scalars(select(System.name)))
    rows = list(da_export.wmt_da_rows(export.source(judged), db.engine))
    assert {r["sys_id"] for r in rows} == names and {r["Input.item"] for r in rows} == {"ad"}
    assert {(r["Input.src"], r["Input.trg"]) for r in rows} == {("en", "eu")}
