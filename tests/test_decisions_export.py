"""The "decisions" export (issue 32): per system pair the sentences each
system won, the judgments collected and the live decision; what
scripts/analyse.py --decisions reads to keep the campaign's sequential
decisions in its final analysis."""
import csv
import io
import json
import os
import random
import subprocess
import sys
from datetime import timedelta

from sqlalchemy import select

from app.extensions import db
from app.models import PairTotal, utcnow
from app.protocols.pairwise import decisions
from app.stats.sequential import SEQUENTIAL_ALPHA
from helpers import staff_client
from test_dashboard_totals import _volunteer
from test_sequential_assignment import judge

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def decided_campaign(make_campaign):
    """Three volunteers who prefer A: A-B and A-C decided, B-C a coin's record."""
    campaign = make_campaign(sentences=60, systems=("A", "B", "C"), assignment="sequential",
                             judgments_per_pair=5)
    # answered in the past: a download holds the judgments answered before it began
    rng, now = random.Random(2), utcnow() - timedelta(hours=2)
    for n in range(1, 4):
        judge(campaign, _volunteer(campaign, n), now, rng, prefer="A")
    decisions.refresh(campaign.id, now)
    return campaign, now


def test_the_decisions_export_has_one_row_per_pair(app, make_campaign):
    campaign, now = decided_campaign(make_campaign)
    organiser = staff_client(app)
    response = organiser.get("/organiser/c/test/export/decisions.csv")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert 'filename="test-decisions.csv"' in response.headers["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert list(rows[0]) == decisions.EXPORT_COLUMNS
    assert [(r["system_a"], r["system_b"]) for r in rows] == [("A", "B"), ("A", "C"), ("B", "C")]
    db.session.expire_all()
    names = {s.id: s.name for s in campaign.systems}
    totals = {(names[p.system_a_id], names[p.system_b_id]): p
              for p in db.session.scalars(select(PairTotal).where(PairTotal.campaign_id == campaign.id))}
    stamp = now.isoformat(timespec="seconds") + "Z"
    for row in rows:
        total = totals[row["system_a"], row["system_b"]]
        assert (int(row["wins_a"]), int(row["wins_b"]), int(row["judgments"])) == (
            total.wins_a, total.wins_b, total.collected)
        assert total.collected > 0
        assert (row["campaign"], row["level"], row["assignment"], row["goal"]) == (
            "test", str(SEQUENTIAL_ALPHA), "sequential", "ordering")
    by_pair = {(r["system_a"], r["system_b"]): r for r in rows}
    assert (by_pair["A", "B"]["decided_better"], by_pair["A", "B"]["decided_at"]) == ("A", stamp)
    assert by_pair["A", "C"]["decided_better"] == "A"
    assert (by_pair["B", "C"]["decided_better"], by_pair["B", "C"]["decided_at"]) == ("", "")
    # JSON Lines: the same rows, numbers as numbers, an undecided pair's decision null
    lines = organiser.get("/organiser/c/test/export/decisions.jsonl").get_data(as_text=True).splitlines()
    records = [json.loads(line) for line in lines]
    assert [list(r) for r in records] == [decisions.EXPORT_COLUMNS] * 3
    assert records[0]["level"] == SEQUENTIAL_ALPHA and records[0]["wins_a"] == int(rows[0]["wins_a"])
    assert records[2]["decided_better"] is None and records[2]["decided_at"] is None
    # the dashboard offers it, under its label
    page = organiser.get("/organiser/c/test/").get_data(as_text=True)
    assert '<tr data-export="decisions"><td>Decisions per pair (for the final analysis)</td>' in page
    assert "/organiser/c/test/export/decisions.jsonl" in page


def test_the_analysis_of_the_exports_keeps_the_sequential_decisions(app, make_campaign, tmp_path):
    decided_campaign(make_campaign)
    organiser = staff_client(app)
    files = {}
    for kind in ("judgments", "decisions"):
        files[kind] = tmp_path / f"{kind}.csv"
        files[kind].write_bytes(organiser.get(f"/organiser/c/test/export/{kind}.csv").get_data())
    out = tmp_path / "result.json"
    done = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "analyse.py"), str(files["judgments"]),
                           "--decisions", str(files["decisions"]), "--bootstrap", "0", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Sequential decisions (decisions.csv; campaign test, assignment sequential, goal ordering)" in done.stdout
    assert "2 of 3 pairs were decided while the campaign ran" in done.stdout
    assert "at the remaining 4%" in done.stdout and "at most 5%" in done.stdout
    result = json.loads(out.read_text(encoding="utf-8"))
    stages = {tuple(p["systems"]): (p["stage"], p["better"]) for p in result["pairs"]}
    assert stages["A", "B"] == stages["A", "C"] == ("sequential", "A")
    assert stages["B", "C"][0] in (None, "final")
    assert result["ordering"].startswith("A > ")
    # a decisions export of another campaign's systems is refused, naming its line
    other = tmp_path / "other.csv"
    other.write_text(files["decisions"].read_text(encoding="utf-8").replace(",C,", ",Z,", 1), encoding="utf-8")
    done = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "analyse.py"), str(files["judgments"]),
                           "--decisions", str(other), "--quiet"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2 and f"{other}:3: system 'Z' is not among the judgments' systems" in done.stderr
