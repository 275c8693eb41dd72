"""Bradley-Terry fitting, bootstrap and win matrix."""

import numpy as np
import pytest

from app.stats import analyse, from_records
from app.stats.bradley_terry import (bootstrap_scores, fit, rank_ranges,
                                     sentence_contributions, win_matrix,
                                     win_rates)


def mm_reference(w, iterations=20000):
    """Textbook MM algorithm (Hunter 2004), for comparison."""
    w = np.asarray(w, dtype=float)
    n = w + w.T
    p = np.ones(w.shape[0])
    for _ in range(iterations):
        denom = (n / (p[:, None] + p[None, :])).sum(axis=1)
        p = w.sum(axis=1) / denom
        p /= np.exp(np.log(p).mean())
    theta = np.log(p)
    return theta - theta.mean()


def test_two_systems_log_odds():
    theta = fit([[0, 3], [1, 0]], pseudo_count=0)
    assert theta[0] - theta[1] == pytest.approx(np.log(3))
    assert theta.sum() == pytest.approx(0)


def test_tie_counts_half_each_way():
    records = [("s1", "A", "B", "A", "j"), ("s2", "A", "B", "A", "j"),
               ("s3", "A", "B", "equal", "j"), ("s4", "A", "B", "equal", "j")]
    data = from_records(records)
    wins, ties = win_matrix(data.first, data.second, data.outcome, 2)
    assert wins.tolist() == [[0, 2], [0, 0]]
    assert ties.tolist() == [[0, 2], [2, 0]]
    theta = fit(wins + ties / 2, pseudo_count=0)
    assert theta[0] - theta[1] == pytest.approx(np.log(3))


def test_matches_mm_on_three_systems():
    w = np.array([[0, 7, 3], [4, 0, 6], [2, 5, 0]], dtype=float)
    assert fit(w, pseudo_count=0) == pytest.approx(mm_reference(w), abs=1e-7)


def test_batch_equals_single_fits():
    rng = np.random.default_rng(0)
    batch = rng.integers(0, 20, size=(5, 4, 4)).astype(float)
    thetas = fit(batch)
    for b in range(5):
        assert thetas[b] == pytest.approx(fit(batch[b]), abs=1e-8)


def test_never_winning_system_stays_finite():
    theta = fit([[0, 10], [0, 0]], pseudo_count=0.01)
    assert np.isfinite(theta).all()
    assert theta[0] - theta[1] == pytest.approx(np.log(10.01 / 0.01))


def test_disconnected_comparisons_warn():
    records = [("s1", "A", "B", "A", "j"), ("s1", "C", "D", "C", "j")]
    result = analyse(from_records(records), rounds=10)
    assert any("never compared with each other" in n for n in result["notes"])


def test_win_rates():
    wins = np.array([[0, 3], [1, 0]])
    ties = np.array([[0, 2], [2, 0]])
    a, b = win_rates(wins, ties)
    assert a == {"judgments": 6, "wins": 3, "ties": 2, "losses": 1,
                 "win_rate": 0.5, "score_rate": pytest.approx(4 / 6)}
    assert b["win_rate"] == pytest.approx(1 / 6)


def test_sentence_contributions_sum_to_win_matrix():
    records = [("s1", "A", "B", "A", "j"), ("s1", "B", "C", "equal", "j"),
               ("s2", "C", "A", "C", "j")]
    data = from_records(records)
    contrib = sentence_contributions(data.first, data.second, data.outcome,
                                     data.sentence, 3, 2)
    wins, ties = win_matrix(data.first, data.second, data.outcome, 3)
    total = np.asarray(contrib.sum(axis=0)).reshape(2, 3, 3)
    assert total[0] == pytest.approx(wins)
    assert total[1] == pytest.approx(ties)


def test_bootstrap_is_seeded():
    rng = np.random.default_rng(3)
    records = [(f"s{rng.integers(40)}", "A", "B", ["A", "B", "equal"][rng.integers(3)],
                "j") for _ in range(300)]
    data = from_records(records)
    contrib = sentence_contributions(data.first, data.second, data.outcome,
                                     data.sentence, 2, len(data.sentences))
    one = bootstrap_scores(contrib, 2, 64, seed=7, chunk=10)
    two = bootstrap_scores(contrib, 2, 64, seed=7, chunk=64)
    other = bootstrap_scores(contrib, 2, 64, seed=8)
    assert np.array_equal(one, two)
    assert not np.array_equal(one, other)
    assert np.allclose(one.sum(axis=1), 0)


def test_rank_ranges():
    samples = np.array([[3.0, 2.0, 1.0]] * 95 + [[1.0, 2.0, 3.0]] * 5)
    low, high = rank_ranges(samples)
    assert low.tolist() == [1, 2, 1]
    assert high.tolist() == [3, 2, 3]
    low, high = rank_ranges(samples[:90])
    assert low.tolist() == [1, 2, 3] and high.tolist() == [1, 2, 3]


def test_analysis_bt_fields():
    records = [(f"s{i}", "A", "B", "A" if i % 3 else "B", f"j{i % 4}")
               for i in range(60)]
    result = analyse(from_records(records), rounds=200, seed=5)
    top, bottom = result["bradley_terry"]
    assert top["system"] == "A" and top["rank"] == 1
    assert top["ci_low"] < top["score"] < top["ci_high"]
    assert (top["rank_low"], top["rank_high"]) == (1, 1)
    again = analyse(from_records(records), rounds=200, seed=5)
    assert again["bradley_terry"] == result["bradley_terry"]
    none = analyse(from_records(records), rounds=0)["bradley_terry"][0]
    assert none["ci_low"] is None and none["rank_low"] is None


def test_rank_ranges_with_ties():
    samples = np.array([[0.0, 0.0, -1.0]] * 10)
    low, high = rank_ranges(samples)
    assert low.tolist() == [1, 1, 3] and high.tolist() == [2, 2, 3]
