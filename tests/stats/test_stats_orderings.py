"""The orderings WMT used besides Bradley-Terry: Expected Wins (WMT13) and
TrueSkill (WMT14-16), with WMT's rank ranges and clusters."""

import csv
import itertools
import json
import os
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.stats import spearmanr

from app.stats import expected_wins as ew
from app.stats import trueskill_order as ts
from app.stats.cli import main
from app.stats.ordering import (range_clusters, rank_ordering, ranks_of,
                                wmt_rank_ranges)
from stats_helpers import ROOT

WMT13 = os.path.join(os.path.dirname(ROOT), "shared", "reference-data",
                     "wmt13-fr-en-trueskill", "wmt13-fr-en-train.csv")


def test_expected_wins_by_hand():
    # A beat B 3 times and lost once; A and C 1-1; B and C never decided
    wins = [[0, 3, 1], [1, 0, 0], [1, 0, 0]]
    assert ew.expected_wins(wins) == pytest.approx([(3 / 4 + 1 / 2) / 2,
                                                    (1 / 4 + 0) / 2,
                                                    (1 / 2 + 0) / 2])


def test_expected_wins_leave_ties_out():
    # ties do not enter the score; they only make a resample's draws ties
    wins = np.array([[0, 2], [1, 0]])
    assert ew.expected_wins(wins) == pytest.approx([2 / 3, 1 / 3])
    one = ew.resampled_scores(wins, np.array([[0, 50], [50, 0]]), 200, seed=3)
    again = ew.resampled_scores(wins, np.array([[0, 50], [50, 0]]), 200, seed=3)
    assert np.array_equal(one, again)
    assert np.allclose(one.sum(axis=1)[one.sum(axis=1) > 0], 1.0)


def test_wmt_rank_range_drops_the_outer_runs():
    # 40 runs: ceil((40 - 38) / 2) = 1 run dropped at each end
    ranks = np.array([[1]] * 38 + [[5], [7]])
    low, high = wmt_rank_ranges(np.sort(ranks, axis=0))
    assert (low[0], high[0]) == (1, 5)
    assert ranks_of(np.array([[0.3, 0.1, 0.3]])).tolist() == [[1, 3, 1]]


def test_clusters_cut_where_ranges_do_not_overlap():
    low = {"A": 1, "B": 2, "C": 2, "D": 4}
    high = {"A": 1, "B": 3, "C": 3, "D": 4}
    assert range_clusters(["A", "B", "C", "D"], low, high) == [["A"], ["B", "C"], ["D"]]
    # a later system whose range reaches up joins the cluster above it
    low["D"] = 3
    assert range_clusters(["A", "B", "C", "D"], low, high) == [["A"], ["B", "C", "D"]]


def random_judgments(n=300, k=4, seed=0):
    rng = np.random.default_rng(seed)
    first = rng.integers(0, k, n)
    second = (first + rng.integers(1, k, n)) % k
    outcome = rng.choice([-1, 0, 1], n, p=[0.3, 0.25, 0.45])
    return first, second, outcome


def test_closed_form_update_is_the_library_update():
    first, second, outcome = random_judgments()
    order = np.random.default_rng(1).permutation(len(outcome))
    matches = len(outcome) + 1
    env = ts.environment(matches, backend="scipy")
    margin = env.ppf((ts.SETTINGS["draw_probability"] + 1) / 2) * np.sqrt(2) * env.beta
    mu, var = np.zeros(4), np.full(4, ts.SETTINGS["sigma"] ** 2)
    for j in order:
        w, l = (first[j], second[j]) if outcome[j] >= 0 else (second[j], first[j])
        mu[w], var[w], mu[l], var[l] = ts.update_pair(
            mu[w], var[w], mu[l], var[l], outcome[j] == 0, env.beta ** 2, margin)
    lib_mu, lib_sigma = ts.library_run(first, second, outcome, order, 4, matches,
                                       backend="scipy")
    assert np.allclose(mu, lib_mu, atol=1e-12)
    assert np.allclose(np.sqrt(var), lib_sigma, atol=1e-12)
    # the library's own normal functions differ in the 7th decimal
    own_mu, _ = ts.library_run(first, second, outcome, order, 4, matches)
    assert np.allclose(own_mu, lib_mu, atol=1e-6)


def test_trueskill_runs_are_fixed_by_the_seed():
    first, second, outcome = random_judgments()
    a = ts.batch_runs(first, second, outcome, 4, runs=5, seed=7)
    b = ts.batch_runs(first, second, outcome, 4, runs=5, seed=7)
    c = ts.batch_runs(first, second, outcome, 4, runs=5, seed=8)
    assert np.array_equal(a[0], b[0]) and not np.array_equal(a[0], c[0])
    # the runs draw their matches independently
    assert not np.allclose(a[0][0], a[0][1])


def test_trueskill_finds_a_clear_order():
    # system 0 beats 1 beats 2 in 80 % of their judgments
    rng = np.random.default_rng(2)
    first = rng.integers(0, 3, 3000)
    second = (first + rng.integers(1, 3, 3000)) % 3
    better = np.where(rng.random(3000) < 0.8, 1, -1)
    outcome = np.where(first < second, better, -better)
    data = SimpleNamespace(systems=["a", "b", "c"], first=first, second=second,
                           outcome=outcome)
    result = rank_ordering(data, "trueskill", runs=20, seed=1)
    assert [r["system"] for r in result["systems"]] == ["a", "b", "c"]
    assert result["clusters"] == [["a"], ["b"], ["c"]]


def expand_five_way(path):
    """WMT13's five-way rankings as pairwise judgments (the 10 pairs of each)."""
    with open(path, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    names = sorted({r[f"system{i}Id"] for r in rows for i in range(1, 6)})
    code = {n: i for i, n in enumerate(names)}
    first, second, outcome = [], [], []
    for r in rows:
        ids = [r[f"system{i}Id"] for i in range(1, 6)]
        ranks = [int(r[f"system{i}rank"]) for i in range(1, 6)]
        for x, y in itertools.combinations(range(5), 2):
            if -1 in (ranks[x], ranks[y]):
                continue
            first.append(code[ids[x]])
            second.append(code[ids[y]])
            outcome.append(int(np.sign(ranks[y] - ranks[x])))
    return SimpleNamespace(systems=names, first=np.array(first),
                           second=np.array(second), outcome=np.array(outcome))


#: This code's Expected Wins on the WMT13 fr-en sample (the train file), to
#: three decimals: a regression check. The WMT13 findings' own table (over all
#: of WMT13's fr-en judgments, not this sample) could not be read to compare
#: (docs/analysis.md, section 4b).
WMT13_FR_EN = [("uedin-heafield-unconstrained", 0.638), ("uedin-wmt13", 0.603),
               ("online-B", 0.591), ("LIMSI-Ncode-SOUL", 0.573), ("KIT", 0.561),
               ("online-A", 0.540), ("MES-SimplifiedFrench", 0.512),
               ("DCU", 0.485), ("RWTH", 0.438), ("CMU_Tree-to-Tree", 0.428),
               ("cu-zeman", 0.420), ("JHU", 0.389), ("Shef-wproa", 0.322)]


@pytest.fixture(scope="module")
def wmt13():
    if not os.path.exists(WMT13):
        pytest.skip(f"reference data not available ({WMT13})")
    return expand_five_way(WMT13)


def test_wmt13_expected_wins(wmt13):
    result = rank_ordering(wmt13, "expected-wins", runs=200, seed=1)
    rows = result["systems"]
    assert len(rows) == len(WMT13_FR_EN)
    for row, (name, score) in zip(rows, WMT13_FR_EN):
        assert name in row["system"]
        assert row["score"] == pytest.approx(score, abs=0.0005)


def test_wmt13_trueskill_agrees_with_expected_wins(wmt13):
    # 20,000 judgments and 10 runs keep the test short; top and bottom and
    # the rank correlation are what WMT's two orderings shared
    part = SimpleNamespace(systems=wmt13.systems, first=wmt13.first[:20000],
                           second=wmt13.second[:20000], outcome=wmt13.outcome[:20000])
    trueskill = rank_ordering(part, "trueskill", runs=10, seed=1)["systems"]
    wins = rank_ordering(part, "expected-wins", runs=10, seed=1)["systems"]
    assert trueskill[0]["system"] == wins[0]["system"]
    assert trueskill[-1]["system"] == wins[-1]["system"]
    by_name = {r["system"]: r["rank"] for r in wins}
    rho = spearmanr([r["rank"] for r in trueskill],
                    [by_name[r["system"]] for r in trueskill]).statistic
    assert rho > 0.95


def test_command_prints_and_writes_the_ordering(tmp_path, capsys):
    path = tmp_path / "wmt.csv"
    with open(path, "w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["srcIndex", "judgeID", "system1Id", "system1rank",
                      "system2Id", "system2rank"])
        for s in range(30):
            out.writerow([s, "j1", "good", 1, "bad", 2])
            out.writerow([s, "j2", "bad", 2, "good", 1 if s % 5 else 2])
    target = tmp_path / "out.json"
    assert main([str(path), "--ordering", "expected-wins", "--bootstrap", "0",
                 "--quiet", "--json", str(target)]) == 0
    result = json.loads(target.read_text())
    assert result["settings"]["ordering"] == "expected-wins"
    assert [r["system"] for r in result["rank_ordering"]["systems"]] == ["good", "bad"]
    assert result["rank_ordering"]["runs"] == 1000
    assert main([str(path), "--bootstrap", "0", "--quiet", "--json", str(target)]) == 0
    assert "rank_ordering" not in json.loads(target.read_text())
