"""Known answers: published figures for real WMT19 judgments (Toral 2020).

The data live outside the repository in ../shared/reference-data/; every test
here skips when that folder is absent.
"""

import json
import subprocess
import sys

import pytest

from app.stats import analyse, filter_judges, load
from app.stats.winners import sign_test
from stats_helpers import ROOT, reference_file

# file, judges kept (None = all), P(A), P(E), kappa, agreeing, comparable,
# tie labels, labels -- the table of reference-data/README.md
PUBLISHED = [
    ("ende", None, 0.527, 0.347, 0.276, 1586, 3008, 360, 1507),
    ("ende", ["t1", "t2"], 0.553, 0.337, 0.326, None, None, None, None),
    ("ende", ["u1", "u2", "u3"], 0.528, 0.356, 0.266, None, None, None, None),
    ("enru", None, 0.523, 0.353, 0.262, 2297, 4396, 389, 1785),
    ("enru", ["t1", "t2", "t3", "t4"], 0.504, 0.348, 0.239, None, None, None, None),
    ("enru", ["u1", "u2"], 0.517, 0.365, 0.238, None, None, None, None),
    ("deen", None, 0.490, 0.375, 0.184, None, None, None, None),
    ("deen", ["t1", "t2"], 0.585, 0.389, 0.320, None, None, None, None),
    ("deen", ["t1", "u1"], 0.427, 0.358, 0.107, None, None, None, None),
]


def _ids(row):
    return f"{row[0]}-{'+'.join(row[1]) if row[1] else 'all'}"


@pytest.mark.parametrize("row", PUBLISHED, ids=[_ids(r) for r in PUBLISHED])
def test_published_kappa(row):
    lang, judges, p_a, p_e, kappa, agreeing, comparable, ties, labels = row
    data = load(reference_file(f"{lang}_001_020.csv"))
    assert data.source_format == "wmt"
    if judges:
        data = filter_judges(data, [f"w19_{lang}_{j}" for j in judges])
        assert sorted(data.judges) == sorted(f"w19_{lang}_{j}" for j in judges)
    inter = analyse(data, rounds=0)["agreement"]["inter"]
    assert round(inter["p_a"], 3) == p_a
    assert round(inter["p_e"], 3) == p_e
    assert round(inter["kappa"], 3) == kappa
    if agreeing is not None:
        assert (inter["agreeing"], inter["comparable"], inter["ties"],
                inter["labels"]) == (agreeing, comparable, ties, labels)


def test_published_sign_test_ende():
    data = load(reference_file("ende_001_020.csv"))
    (pair,) = analyse(data, rounds=0)["pairs"]
    assert pair["systems"] == ["mt", "ref"]
    assert pair["wins"] == {"mt": 593, "ref": 554}
    assert pair["ties"] == 360
    assert round(pair["judgment_sign_test_p"], 4) == 0.2618
    assert round(sign_test(593, 554), 4) == 0.2618
    # the sign test over judgments, reported as a descriptive p-value (one
    # pair: Holm changes nothing); the ordering uses the margins' test
    assert round(pair["p_judgments"], 4) == 0.2618
    assert pair["units"]["items"]["wins"] == {"mt": 137, "ref": 130}


def test_units_disagree_enru():
    # like Läubli et al.'s ratings and items: judgments p < 0.001, items not
    data = load(reference_file("enru_001_020.csv"))
    (pair,) = analyse(data, rounds=0)["pairs"]
    assert pair["wins"] == {"mt": 622, "ref": 774}
    assert pair["sentence_wins"] == {"mt": 126, "ref": 146}
    assert round(pair["p_judgments"], 4) == 0.0001
    assert round(pair["p_items"], 4) == 0.2493
    # judgments: descriptive, no verdict; items: none; margins (the default,
    # valid with correlated judgments and using their margins): ref better
    assert "better" not in pair["units"]["judgments"]
    assert pair["units"]["items"]["better"] is None
    assert round(pair["p_margins"], 4) == 0.0117
    assert pair["better"] == "ref" and pair["decided_by"] == "margin_p_holm"


def test_no_intra_items_in_reference_data():
    data = load(reference_file("ende_001_020.csv"))
    assert analyse(data, rounds=0)["agreement"]["intra"] is None


def test_by_pair_sums_to_overall_deen():
    data = load(reference_file("deen_001_020.csv"))
    agreement = analyse(data, rounds=0)["agreement"]
    by_pair = agreement["by_pair"]
    assert [p["systems"] for p in by_pair] == [["ht", "mt"], ["ht", "ref"], ["mt", "ref"]]
    for key in ("agreeing", "comparable", "ties", "labels"):
        assert sum(p[key] for p in by_pair) == agreement["inter"][key]


def test_command_on_reference_data(tmp_path):
    path = reference_file("enru_001_020.csv")
    out = tmp_path / "out.json"
    proc = subprocess.run(
        [sys.executable, "scripts/analyse.py", path, "--json", str(out),
         "--judges", "w19_enru_u1,w19_enru_u2", "--bootstrap", "50"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "0.238" in proc.stdout
    result = json.loads(out.read_text(encoding="utf-8"))
    inter = result["agreement"]["inter"]
    assert (round(inter["p_a"], 3), round(inter["p_e"], 3),
            round(inter["kappa"], 3)) == (0.517, 0.365, 0.238)
