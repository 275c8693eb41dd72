"""DA significance: Holm over the system pairs, the two cluster rules, the
bootstrap interval of z, and ties made deterministic."""

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from app.stats import analyse_da
from app.stats.da.analysis import DIGITS, rank_sum_greater, segment_scores
from app.stats.da.cli import main
from app.stats.da.loader import DAScores, from_da_records
from app.stats.da.significance import holm_matrix, judge_bootstrap, wins, wmt_clusters
from app.stats.winners import holm


def test_holm_matrix_is_holm_over_two_sided_pair_tests():
    raw = {"A": {"B": 0.004, "C": 0.01}, "B": {"A": 0.996, "C": 0.3},
           "C": {"A": 0.99, "B": 0.7}}
    out = holm_matrix(raw)
    expected = holm([0.008, 0.02, 0.6])          # A-B, A-C, B-C: 2 x the smaller p
    assert out["A"]["B"] == pytest.approx(expected[0])
    assert out["A"]["C"] == pytest.approx(expected[1]) == pytest.approx(0.04)
    assert out["B"]["C"] == pytest.approx(expected[2])
    assert out["B"]["A"] == out["C"]["A"] == out["C"]["B"] == 1.0
    # two systems: Holm is the two-sided test, i.e. one-sided at alpha / 2
    assert holm_matrix({"A": {"B": 0.03}, "B": {"A": 0.97}})["A"]["B"] == pytest.approx(0.06)
    assert holm_matrix({"A": {"B": None}, "B": {"A": None}}) == {"A": {"B": None}, "B": {"A": None}}


def test_cluster_rules_differ_when_a_win_goes_against_the_z_order():
    order = ["A", "B", "C", "D"]
    # A beats C and D; B beats D only; C beats B (lower z) and D
    matrix = {"A": {"B": 0.5, "C": 0.01, "D": 0.01}, "B": {"A": 0.5, "C": 0.9, "D": 0.01},
              "C": {"A": 0.9, "B": 0.01, "D": 0.01}, "D": {"A": 1, "B": 1, "C": 1}}
    w21, w22 = wins(order, matrix, 0.05, "wmt21"), wins(order, matrix, 0.05, "wmt22")
    assert w21 == {"A": 2, "B": 1, "C": 2, "D": 0} and w22 == {"A": 2, "B": 1, "C": 1, "D": 0}
    # WMT21: C's win over B (above it) makes C's count 2, not n - 3 = 1: no cut
    # before D; WMT22 does not count that win, so D is cut off
    assert wmt_clusters(order, w21, "wmt21") == [["A", "B", "C", "D"]]
    assert wmt_clusters(order, w22, "wmt22") == [["A", "B", "C"], ["D"]]
    # a case where they differ: B beats exactly n - 2 = 2, but A beats only 1
    matrix2 = {"A": {"B": 0.5, "C": 0.01, "D": 0.5}, "B": {"A": 0.5, "C": 0.01, "D": 0.01},
               "C": {"A": 1, "B": 1, "D": 0.5}, "D": {"A": 0.5, "B": 1, "C": 0.5}}
    assert wmt_clusters(order, wins(order, matrix2, 0.05), "wmt21") == [["A", "B"], ["C", "D"]]
    assert wmt_clusters(order, wins(order, matrix2, 0.05, "wmt22"), "wmt22") == [["A", "B", "C", "D"]]
    with pytest.raises(ValueError):
        wmt_clusters(order, w21, "wmt19")


def test_equal_means_that_differ_in_the_last_bit_tie():
    # 0.1 + 0.2 + 0.3 summed in two orders: equal in exact arithmetic, not in floats
    assert (0.1 + 0.2) + 0.3 != (0.3 + 0.2) + 0.1
    records = [("j", "A", "1", "system", 0), ("j", "A", "1", "system", 0), ("j", "A", "1", "system", 0),
               ("j", "B", "1", "system", 0), ("j", "B", "1", "system", 0), ("j", "B", "1", "system", 0)]
    data = from_da_records(records)
    z = np.array([0.1, 0.2, 0.3, 0.3, 0.2, 0.1])
    a, b = segment_scores(data, np.ones(6, dtype=bool), z)
    assert np.bincount([0, 0, 0], weights=z[:3])[0] != np.bincount([0, 0, 0], weights=z[3:])[0]
    assert a["z"] == b["z"] == round(0.2, DIGITS)
    # in a test, values one bit apart rank as ties: R's p for exactly tied samples
    x = [0.6, 0.1, 0.9, 0.4, 0.7]
    y = [(0.1 + 0.2) + 0.3, 0.2, 0.5, 0.3, 0.8]
    tied = [0.6, 0.2, 0.5, 0.3, 0.8]
    assert rank_sum_greater(x, y) == rank_sum_greater(x, tied)
    assert rank_sum_greater(x, tied) == pytest.approx(
        mannwhitneyu(x, tied, alternative="greater", method="asymptotic").pvalue)
    assert rank_sum_greater(x, y) != mannwhitneyu(x, y, alternative="greater", method="exact").pvalue


def crossed(rng, judges, taste, n=4000, systems=2):
    """Scores of equal systems by judges who each like some systems better."""
    judge = rng.integers(0, judges, n)
    system = rng.integers(0, systems, n)
    sentence = rng.integers(0, 500, n)
    score = (50 + rng.normal(0, taste, (judges, systems))[judge, system] + rng.normal(0, 15, n))
    return DAScores(systems=[f"S{i}" for i in range(systems)], sentences=[str(s) for s in range(500)],
                    judges=[f"j{j}" for j in range(judges)], system=system.astype(np.int32),
                    sentence=sentence.astype(np.int32), judge=judge.astype(np.int32),
                    kind=np.zeros(n, dtype=np.int8), score=np.clip(np.round(score), 0, 100),
                    original=np.full(n, -1, dtype=np.int64))


def test_bootstrap_interval_widens_when_judges_are_correlated():
    rng = np.random.default_rng(3)
    width = {}
    for taste in (0, 10):
        data = crossed(rng, 20, taste)
        boot = analyse_da(data)["systems"]
        normal = analyse_da(data, bootstrap=0)["systems"]
        width[taste] = np.mean([(b["z_ci_high"] - b["z_ci_low"]) / (n["z_ci_high"] - n["z_ci_low"])
                                for b, n in zip(boot, normal)])
        for row in boot:
            assert row["z_ci_low"] < row["z"] < row["z_ci_high"]
    # independent scores: judges and sentences both resampled count the noise
    # twice, about sqrt(2) wider than the normal interval (conservative)
    assert 1.2 < width[0] < 1.7
    assert width[10] > width[0] + 0.5     # a judge's taste shared by their scores: wider still


def test_bootstrap_is_seeded_and_degenerate_cases():
    data = crossed(np.random.default_rng(4), 5, 5, n=300)
    one = analyse_da(data, seed=7)["systems"]
    assert one == analyse_da(data, seed=7)["systems"]
    assert one != analyse_da(data, seed=8)["systems"]
    # one judge, sentences held fixed: every resample is the data itself
    z = np.array([0.5, -0.5, 1.0, -1.0])
    low, high = judge_bootstrap([0, 0, 0, 0], [0, 1, 0, 1], [0, 0, 1, 1], z, 2, 50, sentences=False)
    assert low == pytest.approx([0.0, 0.0]) and high == pytest.approx([0.0, 0.0])
    low, high = judge_bootstrap([], [], [], [], 3, 50)
    assert np.isnan(low).all() and np.isnan(high).all()


def test_analysis_result_keys_and_settings():
    data = crossed(np.random.default_rng(5), 10, 0, n=600, systems=3)
    result = analyse_da(data)
    s = result["settings"]
    assert (s["correction"], s["clusters"], s["bootstrap"], s["seed"], s["segment_digits"]) == \
        ("holm", "wmt21", 1000, 1, 9)
    assert set(result["wilcoxon_holm"]) == set(result["wilcoxon"]) == {"S0", "S1", "S2"}
    for a, row in result["wilcoxon"].items():
        for b, p in row.items():
            assert result["wilcoxon_holm"][a][b] >= min(p, 1.0)
    with pytest.raises(ValueError):
        analyse_da(data, correction="bonferroni")
    with pytest.raises(ValueError):
        analyse_da(data, clusters="wmt19")


def test_cli_options(tmp_path, capsys):
    import json

    rows = ["judgment_id,sentence_id,system,kind,original_judgment_id,score,volunteer"]
    rng = np.random.default_rng(6)
    for i in range(240):
        system = "AB"[i % 2]
        rows.append(f"{i + 1},{i // 2},{system},system,,{int(rng.integers(40, 90)) + 8 * (system == 'A')},"
                    f"v{i % 6}")
    path = tmp_path / "da.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = tmp_path / "r.json"
    assert main([str(path), "--no-correction", "--clusters", "wmt22", "--bootstrap", "0",
                 "--seed", "3", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "uncorrected, as WMT publishes it" in text and "WMT22's rule" in text
    settings = json.loads(out.read_text())["settings"]
    assert (settings["correction"], settings["clusters"], settings["bootstrap"]) == ("none", "wmt22", 0)
    assert settings["interval"] == "normal, over segments"
    assert main([str(path), "--quiet", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["settings"]["correction"] == "holm"
