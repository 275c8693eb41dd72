"""The DA computations against independent ones, on simulated judges."""

import itertools
import math

import numpy as np
import pytest
from scipy.stats import mannwhitneyu, ttest_rel

from app.stats import analyse_da
from app.stats.da import report as da_report
from app.stats.da.analysis import rank_sum_greater, standardise, wmt_clusters
from app.stats.da.loader import from_da_records
from app.stats.da.plots import write_da_plots


def simulate(seed, quality, judges, sentences=80, share=None):
    """Scores of ``judges`` ({name: (offset, scale)}) for systems of true
    ``quality`` ({name: q}): offset + scale * (q + noise), clipped to 0-100.
    ``share`` ({judge: {system: fraction}}) lets a judge score only part of a
    system's sentences."""
    rng = np.random.default_rng(seed)
    records = []
    for s in range(sentences):
        for system, q in quality.items():
            for judge, (offset, scale) in judges.items():
                if share and rng.random() > share[judge][system]:
                    continue
                score = offset + scale * (q + rng.normal(0, 0.8))
                records.append((judge, system, f"s{s}", "system",
                                int(np.clip(round(score), 0, 100))))
    return records


# --------------------------------------------------------------------------
# the rank-sum test


def test_rank_sum_matches_scipy_mannwhitneyu():
    rng = np.random.default_rng(7)
    for _ in range(200):
        m, n = rng.integers(1, 80, size=2)
        x, y = rng.normal(0.3, 1, m), rng.normal(0, 1, n)
        if rng.random() < 0.5:                       # ties
            x, y = np.round(x, 1), np.round(y, 1)
        tied = np.unique(np.concatenate([x, y])).size < m + n
        method = "exact" if m < 50 and n < 50 and not tied else "asymptotic"
        expected = mannwhitneyu(x, y, alternative="greater", method=method,
                                use_continuity=True).pvalue
        assert rank_sum_greater(x, y) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("m,n", [(1, 1), (2, 3), (3, 3), (4, 2), (5, 4)])
def test_exact_tail_by_enumeration(m, n):
    # every split of the ranks 0..m+n-1 into x and y is equally likely
    splits = list(itertools.combinations(range(m + n), m))
    for observed in splits:
        x = np.array(observed, dtype=float)
        y = np.array([r for r in range(m + n) if r not in observed], dtype=float)
        u = sum(observed) - m * (m - 1) / 2
        share = sum(sum(c) - m * (m - 1) / 2 >= u for c in splits) / len(splits)
        assert rank_sum_greater(x, y) == pytest.approx(share, abs=1e-12)


def test_rank_sum_degenerate_samples():
    assert rank_sum_greater([], [1, 2]) is None
    assert rank_sum_greater([5] * 60, [5] * 60) == 1.0


# --------------------------------------------------------------------------
# standardisation and system scores


JUDGES = {"harsh": (30, 10), "lenient": (80, 6), "wide": (50, 25)}


def test_each_judge_standardised_by_own_mean_and_sd():
    data = from_da_records(simulate(1, {"A": 0.5, "B": 0.0, "C": -0.5}, JUDGES))
    z, mean, sd = standardise(data, np.ones(len(data), dtype=bool))
    for j, name in enumerate(data.judges):
        mine = data.score[data.judge == j]
        assert mean[j] == pytest.approx(mine.mean())
        assert sd[j] == pytest.approx(mine.std(ddof=1))
        assert z[data.judge == j] == pytest.approx((mine - mine.mean()) / mine.std(ddof=1))
        assert z[data.judge == j].mean() == pytest.approx(0, abs=1e-12)
        assert z[data.judge == j].std(ddof=1) == pytest.approx(1)


def test_z_scores_undo_judge_bias_that_raw_means_suffer():
    # A is better, but mostly scored by the harsh judge and B by the lenient one
    share = {"harsh": {"A": 0.8, "B": 0.2}, "lenient": {"A": 0.2, "B": 0.8}}
    records = simulate(2, {"A": 0.6, "B": 0.0}, {"harsh": (30, 10), "lenient": (80, 10)},
                       sentences=300, share=share)
    result = analyse_da(from_da_records(records))
    by = {s["system"]: s for s in result["systems"]}
    assert by["A"]["raw"] < by["B"]["raw"]
    assert [s["system"] for s in result["systems"]] == ["A", "B"]
    assert result["wilcoxon"]["A"]["B"] < 0.001 and result["wilcoxon"]["B"]["A"] > 0.5
    assert result["clusters"] == [["A"], ["B"]]


def test_system_order_and_wilcoxon_against_independent_computation():
    quality = {"A": 0.8, "B": 0.3, "C": -0.1, "D": -0.6}
    records = simulate(3, quality, JUDGES, sentences=120)
    result = analyse_da(from_da_records(records))
    assert [s["system"] for s in result["systems"]] == ["A", "B", "C", "D"]

    # z scores, segment means and the test computed here from the records
    by_judge = {}
    for judge, _system, _sentence, _kind, score in records:
        by_judge.setdefault(judge, []).append(score)
    stats = {j: (np.mean(v), np.std(v, ddof=1)) for j, v in by_judge.items()}
    segments = {}
    for judge, system, sentence, _kind, score in records:
        mean, sd = stats[judge]
        segments.setdefault((system, sentence), []).append((score, (score - mean) / sd))
    seg_z = {name: [] for name in quality}
    seg_raw = {name: [] for name in quality}
    for (system, _sentence), values in segments.items():
        seg_raw[system].append(np.mean([v[0] for v in values]))
        seg_z[system].append(np.mean([v[1] for v in values]))
    for row in result["systems"]:
        name = row["system"]
        assert row["raw"] == pytest.approx(np.mean(seg_raw[name]))
        assert row["z"] == pytest.approx(np.mean(seg_z[name]))
        assert row["segments"] == 120 and row["judgments"] == 360
    for a, b in itertools.permutations(quality, 2):
        expected = mannwhitneyu(seg_z[a], seg_z[b], alternative="greater",
                                method="asymptotic").pvalue
        assert result["wilcoxon"][a][b] == pytest.approx(expected, rel=1e-9)


def test_micro_average_counts_each_segment_once():
    records = [("j1", "A", "s1", "system", 80), ("j1", "A", "s2", "system", 60),
               ("j1", "B", "s1", "system", 40), ("j2", "A", "s1", "system", 20),
               ("j2", "B", "s1", "system", 50), ("j2", "B", "s2", "system", 70)]
    by = {s["system"]: s for s in analyse_da(from_da_records(records))["systems"]}
    assert by["A"]["raw"] == 55 and by["A"]["segments"] == 2      # (50 + 60) / 2
    assert by["A"]["judgments"] == 3
    assert by["B"]["raw"] == 57.5                                 # (45 + 70) / 2


def test_repeats_count_in_segments_quality_control_items_in_judge_means():
    records = [("j1", "A", "s1", "system", 80), ("j1", "A", "s1", "repeat", 70),
               ("j1", "A", "s1", "bad_reference", 10), ("j1", "A", "s1", "reference", 100),
               ("j1", "B", "s1", "system", 40), ("j1", "B", "s2", "system", 60)]
    data = from_da_records(records)
    result = analyse_da(data, keep_unreliable=True)   # one pair: untested
    by = {s["system"]: s for s in result["systems"]}
    assert by["A"]["raw"] == 75 and by["A"]["judgments"] == 2
    assert result["judges"][0]["mean"] == pytest.approx(np.mean([80, 70, 10, 100, 40, 60]))
    only_system = analyse_da(data, keep_unreliable=True, z_over="system")
    assert only_system["judges"][0]["mean"] == pytest.approx(60)
    assert only_system["settings"]["z_over"] == "system"
    with pytest.raises(ValueError):
        analyse_da(data, z_over="reference")


def test_judge_without_spread_counts_in_raw_only():
    records = [("flat", "A", "s1", "system", 70), ("flat", "B", "s1", "system", 70),
               ("j2", "A", "s2", "system", 90), ("j2", "B", "s2", "system", 30)]
    result = analyse_da(from_da_records(records))
    by = {s["system"]: s for s in result["systems"]}
    assert by["A"]["raw"] == 80 and by["A"]["segments"] == 2
    assert by["A"]["z_segments"] == 1
    flat = next(j for j in result["judges"] if j["judge"] == "flat")
    assert flat["sd"] is None
    assert any("no z scores for flat" in n for n in result["notes"])


# --------------------------------------------------------------------------
# quality control


def campaign_with_quality_control(seed):
    """Three careful judges and a random clicker, each with ten bad-reference
    and ten repeat pairs, plus a judge without quality-control items."""
    rng = np.random.default_rng(seed)
    quality = {"A": 75, "B": 60}
    records = []
    for judge in ("careful1", "careful2", "careful3", "clicker", "untested"):
        for s in range(40):
            for system, q in quality.items():
                def score(shift=0):
                    if judge == "clicker":
                        return int(rng.integers(0, 101))
                    return int(np.clip(q + shift + rng.normal(0, 8), 0, 100))
                records.append((judge, system, f"s{s}", "system", score()))
                if judge != "untested" and s < 10:
                    kind = "bad_reference" if system == "A" else "repeat"
                    records.append((judge, system, f"s{s}", kind,
                                    score(-30 if kind == "bad_reference" else 0)))
    return records


def test_judge_reliability_test_and_filter():
    records = campaign_with_quality_control(4)
    result = analyse_da(from_da_records(records))
    status = {j["judge"]: (j["status"], j["kept"]) for j in result["judges"]}
    assert status == {"careful1": ("reliable", True), "careful2": ("reliable", True),
                      "careful3": ("reliable", True), "clicker": ("unreliable", False),
                      "untested": ("untested", True)}
    assert "1 of 4 tested judge(s) left out" in result["notes"][0]
    assert result["input"]["counts"]["left_out_unreliable"] == 100

    # the paired t-test (WMT's), computed here from the records
    original = {(j, sy, se): sc for j, sy, se, kind, sc in records if kind == "system"}
    for entry in result["judges"]:
        pairs = [(sc, original[j, sy, se]) for j, sy, se, kind, sc in records
                 if j == entry["judge"] and kind == "bad_reference"]
        assert entry["bad_reference_pairs"] == len(pairs)
        if entry["status"] == "untested":
            assert entry["p"] is None and not pairs
            continue
        expected = ttest_rel(*zip(*pairs), alternative="less")
        assert entry["p"] == pytest.approx(expected.pvalue, abs=1e-12)
        assert entry["statistic"] == pytest.approx(expected.statistic, abs=1e-9)

    systems = {s["system"]: s for s in result["systems"]}
    assert systems["A"]["judgments"] == 4 * 40       # the clicker's 40 left out
    kept = analyse_da(from_da_records(records), keep_unreliable=True)
    assert {s["system"]: s["judgments"] for s in kept["systems"]} == \
        {"A": 5 * 40, "B": 5 * 40 + 4 * 10}
    assert all(j["kept"] for j in kept["judges"])
    assert "1 of 4 tested judge(s) kept on request" in kept["notes"][0]


def test_every_judge_left_out_gives_an_empty_table(tmp_path):
    records = [(j, s, f"s{n}", "system", 50) for j in ("a", "b")
               for s in ("A", "B") for n in range(12)]
    records += [(j, "A", f"s{n}", kind, 50) for j in ("a", "b") for n in range(8)
                for kind in ("bad_reference", "repeat")]    # no drop: not computable
    result = analyse_da(from_da_records(records))
    assert result["systems"] == [] and result["clusters"] == []
    assert "2 of 2 tested judge(s) left out" in result["notes"][0]
    assert "No system scores" in da_report.text_report(result)
    assert write_da_plots(result, str(tmp_path)) == []
    assert len(da_report.write_csv(result, str(tmp_path))) == 5


# --------------------------------------------------------------------------
# clusters


@pytest.mark.parametrize("wins,expected", [
    ({"A": 3, "B": 2, "C": 1, "D": 0}, [["A"], ["B"], ["C"], ["D"]]),
    ({"A": 1, "B": 1, "C": 1, "D": 0}, [["A", "B", "C"], ["D"]]),
    ({"A": 0, "B": 0, "C": 0, "D": 0}, [["A", "B", "C", "D"]]),
    # C also beats B, above it: no cut after C (WMT: wins must equal n - i)
    ({"A": 3, "B": 1, "C": 2, "D": 0}, [["A"], ["B", "C", "D"]]),
    # the last system beat one above it: the cluster still closes at the end
    ({"A": 2, "B": 1, "C": 0, "D": 1}, [["A", "B", "C", "D"]]),
])
def test_wmt_cluster_rule(wins, expected):
    assert wmt_clusters(["A", "B", "C", "D"], wins) == expected


@pytest.mark.parametrize("published", [
    # clusters.csv of WMT21's release: (system, wins, last of its cluster), z order
    [("Facebook-AI.8", 9, True), ("Manifold.0", 8, True), ("NiuTrans.7", 3, False),
     ("Online-B.4", 2, False), ("HuaweiTSC.9", 3, False), ("Mideind.1", 3, False),
     ("Online-A.5", 1, False), ("Allegro.eu.2", 1, False), ("Online-Y.3", 1, True),
     ("Online-G.6", 0, True)],                                            # is-en
    [("TRANSSION.2", 4, True), ("HuaweiTSC.0", 2, False), ("MS-EgDC.4", 1, False),
     ("GTCOM.3", 1, True), ("Online-G.1", 0, True)],                       # zu-xh
])
def test_wmt_cluster_rule_reproduces_published_clusters(published):
    expected, current = [], []
    for name, _wins, last in published:
        current.append(name)
        if last:
            expected.append(current)
            current = []
    wins = {name: w for name, w, _last in published}
    assert wmt_clusters([name for name, _w, _l in published], wins) == expected


def test_result_schema():
    result = analyse_da(from_da_records(simulate(5, {"A": 0.3, "B": 0}, JUDGES, 20)))
    assert {"protocol", "input", "settings", "systems", "wilcoxon", "judges",
            "clusters", "segments", "notes"} <= set(result)
    assert result["protocol"] == "da"
    assert set(result["systems"][0]) >= {"system", "raw", "z", "segments", "judgments"}
    assert set(result["judges"][0]) >= {"judge", "p", "status", "kept"}
    assert set(result["wilcoxon"]) == {"A", "B"} and set(result["wilcoxon"]["A"]) == {"B"}
    assert all(not math.isnan(g["z"]) for g in result["segments"])


def test_one_system(tmp_path):
    records = [("a", "A", "s1", "system", 50), ("a", "A", "s2", "system", 70)]
    result = analyse_da(from_da_records(records))
    assert result["wilcoxon"] == {"A": {}} and result["clusters"] == [["A"]]
    assert result["systems"][0]["z"] == 0
    assert "Clusters: {A}" in da_report.text_report(result)
    assert [p.rsplit("/", 1)[1] for p in write_da_plots(result, str(tmp_path))] == \
        ["da_z_scores.png", "da_z_scores.svg"]
