"""Ties as ties: the Davidson model, its fit and its place in the analysis."""

import json

import numpy as np
import pytest
from scipy.optimize import minimize

from app.stats import analyse, from_records
from app.stats import bradley_terry as bt
from app.stats import davidson
from app.stats.cli import main


def simulate(theta, nu, n, seed=0):
    """Davidson judgments between random pairs: (wins, ties) matrices."""
    rng = np.random.default_rng(seed)
    k = len(theta)
    first = rng.integers(0, k, n)
    second = (first + rng.integers(1, k, n)) % k
    a, b = np.exp(theta[first]), np.exp(theta[second])
    root = nu * np.sqrt(a * b)
    u = rng.random(n) * (a + b + root)
    outcome = np.where(u < a, 1, np.where(u < a + root, 0, -1))
    return bt.win_matrix(first, second, outcome, k)


def test_recovers_known_strengths_on_a_large_sample():
    theta = np.array([1.0, 0.5, 0.1, -0.4, -1.2])
    theta -= theta.mean()
    wins, ties = simulate(theta, 0.8, 400_000)
    estimate, nu = davidson.fit(wins, ties)
    assert estimate == pytest.approx(theta, abs=0.02)
    assert nu == pytest.approx(0.8, abs=0.02)
    # the half-win model shrinks the same data towards 0
    half = bt.fit(wins + ties / 2)
    assert np.abs(half).max() < np.abs(theta).max() - 0.1


def test_is_the_maximum_of_the_likelihood():
    wins = np.array([[0, 30, 20, 9], [10, 0, 25, 7], [5, 12, 0, 4], [3, 6, 9, 0]], float)
    ties = np.array([[0, 8, 4, 2], [8, 0, 9, 3], [4, 9, 0, 6], [2, 3, 6, 0]], float)
    theta, nu = davidson.fit(wins, ties, pseudo_count=0)

    def minus_ll(x):                      # theta_4 = 0 fixes the scale
        return -davidson.log_likelihood(np.append(x[:3], 0.0), np.exp(x[3]), wins, ties)

    best = minimize(minus_ll, np.zeros(4), method="BFGS", options={"gtol": 1e-9}).x
    expected = np.append(best[:3], 0.0)
    assert theta == pytest.approx(expected - expected.mean(), abs=1e-5)
    assert nu == pytest.approx(np.exp(best[3]), abs=1e-5)
    # Davidson's (1970) likelihood equations: expected wins + ties/2 and
    # expected ties equal the observed ones
    pi = np.exp(theta)
    root = nu * np.sqrt(pi[:, None] * pi[None, :])
    games = wins + wins.T + ties
    denominator = pi[:, None] + pi[None, :] + root
    np.fill_diagonal(games, 0)
    expected_score = (games * (pi[:, None] + root / 2) / denominator).sum(axis=1)
    assert expected_score == pytest.approx(wins.sum(axis=1) + ties.sum(axis=1) / 2)
    assert (games * root / denominator).sum() / 2 == pytest.approx(ties.sum() / 2)


def test_without_ties_it_is_the_half_win_model():
    wins = np.array([[0, 7, 3], [4, 0, 6], [2, 5, 0]], float)
    none = np.zeros((3, 3))
    theta, nu = davidson.fit(wins, none)
    assert nu == 0
    assert theta == pytest.approx(bt.fit(wins), abs=1e-9)
    # and it tends to it as ties vanish
    wins = wins * 1000
    rare = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]], float)
    theta, nu = davidson.fit(wins, rare)
    assert 0 < nu < 1e-3
    assert theta == pytest.approx(bt.fit(wins + rare / 2), abs=1e-3)


def test_batch_mixes_rounds_with_and_without_ties():
    rng = np.random.default_rng(1)
    wins = rng.integers(0, 20, size=(6, 4, 4)).astype(float)
    ties = rng.integers(0, 5, size=(6, 4, 4)).astype(float)
    ties = ties + np.swapaxes(ties, 1, 2)
    ties[2] = 0
    thetas, nus = davidson.fit(wins, ties)
    for r in range(6):
        theta, nu = davidson.fit(wins[r], ties[r])
        assert thetas[r] == pytest.approx(theta, abs=1e-8)
        assert nus[r] == pytest.approx(nu, abs=1e-8)
    assert nus[2] == 0 and (nus[[0, 1, 3, 4, 5]] > 0).all()


def test_never_winning_system_stays_finite():
    theta, nu = davidson.fit([[0, 10], [0, 0]], [[0, 3], [3, 0]])
    assert np.isfinite(theta).all() and np.isfinite(nu)


def records(with_ties=True, n=300, seed=2):
    """Three systems of clearly different strengths, 20 % ties."""
    rng = np.random.default_rng(seed)
    strength = {"A": 0.8, "B": 0.0, "C": -0.8}
    out = []
    for i in range(n):
        a, b = ["A", "B", "C"][i % 3], ["B", "C", "A"][i % 3]
        p_a = 1 / (1 + np.exp(strength[b] - strength[a]))
        tie = with_ties and rng.random() < 0.2
        choice = "equal" if tie else a if rng.random() < p_a else b
        out.append((f"s{i % 50}", a, b, choice, f"j{i % 7}"))
    return out


def test_analysis_default_and_half_option():
    data = from_records(records())
    default = analyse(data, rounds=100, seed=3)
    half = analyse(data, rounds=100, seed=3, bt_ties="half")
    assert default["settings"]["bt_ties"] == "davidson"
    assert half["settings"]["bt_ties"] == "half" and half["bradley_terry_nu"] is None
    assert default["bradley_terry_nu"] > 0
    spread = [max(r["score"] for r in res["bradley_terry"]) -
              min(r["score"] for r in res["bradley_terry"]) for res in (default, half)]
    assert spread[0] > spread[1]          # ties as ties: no shrinking
    for row in default["bradley_terry"]:
        assert row["ci_low"] < row["score"] < row["ci_high"]


def test_models_agree_without_ties_in_the_analysis():
    data = from_records(records(with_ties=False))
    one = analyse(data, rounds=100, seed=3)
    two = analyse(data, rounds=100, seed=3, bt_ties="half")
    assert one["bradley_terry_nu"] == 0
    for a, b in zip(one["bradley_terry"], two["bradley_terry"]):
        assert (a["system"], a["rank"], a["rank_low"], a["rank_high"]) == \
            (b["system"], b["rank"], b["rank_low"], b["rank_high"])
        for key in ("score", "ci_low", "ci_high"):
            assert a[key] == pytest.approx(b[key], abs=1e-9)


def test_cli_option(bozka_csv, tmp_path, capsys):
    path = bozka_csv(records())
    out = tmp_path / "r.json"
    assert main([path, "--bootstrap", "20", "--json", str(out)]) == 0
    assert "ties as ties (Davidson), nu = " in capsys.readouterr().out
    assert json.loads(out.read_text())["settings"]["bt_ties"] == "davidson"
    assert main([path, "--bootstrap", "20", "--bt-ties", "half", "--json", str(out)]) == 0
    assert "tie = half a win each way" in capsys.readouterr().out
    assert json.loads(out.read_text())["settings"]["bt_ties"] == "half"
    with pytest.raises(SystemExit) as exit_:
        main([path, "--bt-ties", "thirds"])
    assert exit_.value.code == 2
