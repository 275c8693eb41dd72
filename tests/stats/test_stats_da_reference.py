"""Known answers: WMT21's published Direct Assessment results for Hindi to
Bengali (reference data in ../shared/reference-data/wmt21-da-hibn/; every
test skips when that folder is absent)."""

import json
import re
import subprocess
import sys

import pytest

from app.stats import analyse_da, load_da
from da_helpers import da_reference_file
from stats_helpers import ROOT

STARS = {"": 0, "*": 1, "**": 2, "***": 3}


def level(p):
    """The published mark for a p-value: 0 none, 1 *, 2 **, 3 ***."""
    return 3 if p < 0.001 else 2 if p < 0.01 else 1 if p < 0.05 else 0


def published_ranking():
    """(raw, z, N, system) rows of hi-bn.sys-ranking-z.txt, best first."""
    rows = []
    with open(da_reference_file("hi-bn.sys-ranking-z.txt"), encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                raw, z, n, n_all, name = line.split()
                rows.append((float(raw), float(z), int(n), int(n_all), name))
    return rows


def published_wilcoxon():
    """{(A, B): (z difference, stars)} from hi-bn.wilcoxon-rs.txt."""
    with open(da_reference_file("hi-bn.wilcoxon-rs.txt"), encoding="utf-8") as fh:
        lines = [line.split() for line in fh if line.strip()]
    names = lines[0]
    cells = {}
    for row in lines[1:]:
        for other, cell in zip(names, row[1:]):
            if cell != "-":
                diff, marks = re.fullmatch(r"(-?[\d.]+)(\**)", cell).groups()
                cells[row[0], other] = (float(diff), marks)
    return cells


@pytest.fixture(scope="module")
def result():
    """WMT's published matrix and clusters are uncorrected."""
    data = load_da(da_reference_file("hi-bn.ad-good-raw.tsv"))
    return analyse_da(data, correction="none")


@pytest.fixture(scope="module")
def default():
    return analyse_da(load_da(da_reference_file("hi-bn.ad-good-raw.tsv")))


def test_reads_the_wmt_layout():
    data = load_da(da_reference_file("hi-bn.ad-good-raw.tsv"))
    assert data.source_format == "wmt-da"
    assert len(data) == 4512
    assert data.judges == ["evaluator3", "evaluator4"]
    assert "HuaweiTSC.1" in data.systems       # quotes removed


def test_published_system_scores(result):
    published = published_ranking()
    assert [s["system"] for s in result["systems"]] == [r[4] for r in published]
    for mine, (raw, z, n, n_all, name) in zip(result["systems"], published):
        assert f"{mine['raw']:.1f}" == f"{raw:.1f}", name
        assert f"{mine['z']:.3f}" == f"{z:.3f}", name
        assert mine["segments"] == n, name
        assert mine["judgments"] == n_all, name


def test_published_significance_levels(result):
    published = published_wilcoxon()
    assert len(published) == 9 * 8
    z = {s["system"]: s["z"] for s in result["systems"]}
    for (a, b), (diff, marks) in published.items():
        p = result["wilcoxon"][a][b]
        assert level(p) == STARS[marks], (a, b, p, marks)
        assert round(z[a] - z[b], 2) + 0.0 == diff, (a, b)


def test_published_judge_means(result):
    with open(da_reference_file("hi-bn.judge-mean-sd.txt"), encoding="utf-8") as fh:
        values = [line.split(maxsplit=1)[1].strip().strip('"') for line in fh
                  if line.strip()]
    published = {values[i]: (float(values[i + 1]), float(values[i + 2]))
                 for i in range(0, len(values), 3)}
    for judge in result["judges"]:
        mean, sd = published[judge["judge"]]
        assert round(judge["mean"], 5) == mean and round(judge["sd"], 5) == sd
        # filtered before release: no quality-control items, kept
        assert judge["status"] == "untested" and judge["kept"] is True


def test_published_clusters(result):
    # clusters.csv of WMT21's release (humaneval/facebook-wikipedia-2021),
    # not among the reference files: the hi-bn rows
    assert result["clusters"] == [
        ["HuaweiTSC.1", "Online-A.6", "GTCOM.0", "UEdin.4"],
        ["Online-Y.2", "TRANSSION.3", "Online-B.5", "MS-EgDC.8"],
        ["Online-G.7"]]
    assert [s["wins"] for s in result["systems"]] == [5, 5, 5, 5, 3, 2, 3, 1, 0]
    assert any("Online-B.5 significantly beat TRANSSION.3" in n
               for n in result["notes"])


def test_what_holm_changes(result, default):
    # the same tests; Holm over the 36 pairs takes 11 of the 29 published wins
    assert default["wilcoxon"] == result["wilcoxon"]
    raw, holm = result["wilcoxon"], default["wilcoxon_holm"]
    lost = sorted((a, b) for a in raw for b in raw[a]
                  if raw[a][b] < 0.05 and not holm[a][b] < 0.05)
    assert lost == [("GTCOM.0", "Online-B.5"), ("GTCOM.0", "Online-Y.2"),
                    ("HuaweiTSC.1", "Online-B.5"), ("HuaweiTSC.1", "Online-Y.2"),
                    ("Online-A.6", "Online-B.5"), ("Online-A.6", "Online-Y.2"),
                    ("Online-B.5", "TRANSSION.3"), ("Online-Y.2", "TRANSSION.3"),
                    ("TRANSSION.3", "MS-EgDC.8"), ("UEdin.4", "Online-B.5"),
                    ("UEdin.4", "Online-Y.2")]
    assert sum(p < 0.05 for row in holm.values() for p in row.values()) == 18
    # GTCOM.0 over Online-Y.2: published ** (one-sided p = 0.0040), 0.135 after Holm
    assert holm["GTCOM.0"]["Online-Y.2"] == pytest.approx(0.13525, abs=1e-5)
    assert [s["wins"] for s in default["systems"]] == [3, 3, 3, 3, 2, 1, 2, 1, 0]
    # the clusters stay WMT's, on the uncorrected tests (the published ones)
    assert default["clusters"] == result["clusters"]
    wmt22 = analyse_da(load_da(da_reference_file("hi-bn.ad-good-raw.tsv")),
                       clusters="wmt22", bootstrap=0)
    # WMT22's rule: Online-B.5's win over TRANSSION.3 (higher z) does not count,
    # so B.5's two downward wins close {Online-Y.2, TRANSSION.3, Online-B.5}
    assert wmt22["clusters"] == [["HuaweiTSC.1", "Online-A.6", "GTCOM.0", "UEdin.4"],
                                 ["Online-Y.2", "TRANSSION.3", "Online-B.5"],
                                 ["MS-EgDC.8"], ["Online-G.7"]]


def test_command_reproduces_the_published_table(tmp_path):
    out = tmp_path / "hibn.json"
    proc = subprocess.run(
        [sys.executable, "scripts/analyse.py", "--format", "wmt-da", "--no-correction",
         da_reference_file("hi-bn.ad-good-raw.tsv"), "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "HuaweiTSC.1  95.0   0.245" in proc.stdout
    assert "Online-B.5         -0.22       -0.21    -0.20    -0.19       -0.05" \
           "       -0.02*" in proc.stdout
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["protocol"] == "da"
    assert [(round(s["raw"], 1), round(s["z"], 3), s["segments"])
            for s in result["systems"]] == [r[:3] for r in published_ranking()]
    # detected without --format too
    auto = subprocess.run(
        [sys.executable, "scripts/analyse.py", da_reference_file("hi-bn.ad-good-raw.tsv"),
         "--quiet", "--json", str(tmp_path / "auto.json")],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert auto.returncode == 0 and auto.stdout == ""
    auto = json.loads((tmp_path / "auto.json").read_text())
    assert auto["wilcoxon"] == result["wilcoxon"] and auto["settings"]["correction"] == "holm"
    assert [s["z"] for s in auto["systems"]] == [s["z"] for s in result["systems"]]
