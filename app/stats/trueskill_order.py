"""TrueSkill as WMT14-16 ran it (Sakaguchi, Post and Van Durme 2014; their
code, keisks/wmt-trueskill ``src/infer_TS.py`` with ``-n 2 -d 0``).

Setting (WMT's): mu 0, sigma 0.5, tau 0, draw probability 0.25, and beta =
sigma * matches / 40, where a run plays matches = pairwise judgments + 1
(a larger data set gets a proportionally larger beta, so each match moves
the ratings less and the final spread does not grow with the data).

One run: every match picks the system with the largest sigma (ties: the
last by name, as their sort does), an opponent among the systems compared
with it with probability proportional to exp(-|mu_a - mu_b|), and one
judgment of that pair drawn at random with replacement; the two ratings are
updated by that judgment (a tie is a draw).  Runs differ only by their
random draws, and WMT's scores and rank ranges come from many runs.

The library ``trueskill`` (0.4.5) is the reference: :func:`library_run`
plays one run with it.  Playing 100,000 matches through it takes about 16 s
(156 us a match), so the runs of an analysis use :func:`batch_runs`, the same
two-player update in closed form over all runs at once with numpy; the tests
check that both give the same ratings for the same matches.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr, ndtr

__all__ = ["SETTINGS", "batch_runs", "environment", "library_run", "pair_pools",
           "update_pair"]

#: WMT's parameters (infer_TS.py); beta follows from the number of matches.
SETTINGS = {"mu": 0.0, "sigma": 0.5, "tau": 0.0, "draw_probability": 0.25,
            "beta_per_match": 0.5 / 40.0}


def environment(matches: int, backend=None):
    """The ``trueskill.TrueSkill`` environment of a run of ``matches``."""
    import trueskill
    return trueskill.TrueSkill(
        mu=SETTINGS["mu"], sigma=SETTINGS["sigma"], tau=SETTINGS["tau"],
        beta=SETTINGS["beta_per_match"] * matches,
        draw_probability=SETTINGS["draw_probability"], backend=backend)


def library_run(first, second, outcome, order, n_systems: int, matches: int,
                backend=None) -> tuple[np.ndarray, np.ndarray]:
    """``(mu, sigma)`` after playing the judgments ``order`` (indices) in that
    order with the library's ``rate_1vs1``."""
    import trueskill
    env = environment(matches, backend)
    ratings = [env.create_rating() for _ in range(n_systems)]
    for j in order:
        a, b, o = int(first[j]), int(second[j]), int(outcome[j])
        if o < 0:
            a, b = b, a
        ratings[a], ratings[b] = trueskill.rate_1vs1(ratings[a], ratings[b],
                                                    drawn=o == 0, env=env)
    return (np.array([r.mu for r in ratings]), np.array([r.sigma for r in ratings]))


def pair_pools(first, second, n_systems: int):
    """Judgment indices grouped by unordered pair: ``(order, start, count)``;
    with ``key = min(a, b) * k + max(a, b)`` the judgments of pair (a, b) are
    ``order[start[key]:start[key] + count[key]]``."""
    first = np.asarray(first, dtype=np.int64)
    second = np.asarray(second, dtype=np.int64)
    k = n_systems
    key = np.minimum(first, second) * k + np.maximum(first, second)
    order = np.argsort(key, kind="stable")
    count = np.bincount(key, minlength=k * k)
    start = np.concatenate([[0], np.cumsum(count)[:-1]])
    return order, start, count


def update_pair(mu_w, var_w, mu_l, var_l, drawn, beta2, eps_abs):
    """Two-player TrueSkill update (tau 0) of winner w and loser l (or of
    first and second when ``drawn``); arrays, returns the four new values."""
    c2 = 2.0 * beta2 + var_w + var_l
    c = np.sqrt(c2)
    t = (mu_w - mu_l) / c
    eps = eps_abs / c
    # win: v = pdf(t - eps) / cdf(t - eps), w = v (v + t - eps)
    x = t - eps
    v_win = np.exp(-0.5 * x * x - 0.5 * math.log(2 * math.pi) - log_ndtr(x))
    w_win = v_win * (v_win + x)
    # draw, as the library writes it (on |t|, sign restored)
    at = np.abs(t)
    a, b = eps - at, -eps - at
    pdf_a = np.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)
    pdf_b = np.exp(-0.5 * b * b) / math.sqrt(2 * math.pi)
    denom = ndtr(a) - ndtr(b)
    v_abs = (pdf_b - pdf_a) / denom
    v_draw = np.where(t < 0, -v_abs, v_abs)
    w_draw = v_abs * v_abs + (a * pdf_a - b * pdf_b) / denom
    v = np.where(drawn, v_draw, v_win)
    w = np.where(drawn, w_draw, w_win)
    return (mu_w + var_w / c * v, var_w * (1.0 - var_w / c2 * w),
            mu_l - var_l / c * v, var_l * (1.0 - var_l / c2 * w))


def batch_runs(first, second, outcome, n_systems: int, runs: int, seed: int,
               chunk: int = 2048) -> tuple[np.ndarray, np.ndarray]:
    """``(mu, sigma)`` of shape ``(runs, k)`` after ``runs`` independent WMT
    runs (module docstring); generator ``numpy.random.default_rng(seed)``."""
    from scipy.stats import norm

    first = np.asarray(first, dtype=np.int64)
    second = np.asarray(second, dtype=np.int64)
    outcome = np.asarray(outcome, dtype=np.int64)
    k = n_systems
    matches = len(outcome) + 1
    beta = SETTINGS["beta_per_match"] * matches
    eps_abs = norm.ppf((SETTINGS["draw_probability"] + 1) / 2) * math.sqrt(2) * beta
    order, start, count = pair_pools(first, second, k)
    square = count.reshape(k, k)
    partners = (square + square.T) > 0
    mu = np.full((runs, k), SETTINGS["mu"])
    var = np.full((runs, k), SETTINGS["sigma"] ** 2)
    rows = np.arange(runs)
    rng = np.random.default_rng(seed)
    played = 0
    while played < matches:
        steps = min(chunk, matches - played)
        u = rng.random((steps, 2, runs))
        for s in range(steps):
            # the largest sigma; ties go to the last system by name
            a = k - 1 - np.argmax(var[:, ::-1], axis=1)
            weight = np.exp(-np.abs(mu - mu[rows, a][:, None])) * partners[a]
            cum = np.cumsum(weight, axis=1)
            b = (cum < (u[s, 0] * cum[:, -1])[:, None]).sum(axis=1)
            b = np.minimum(b, k - 1)
            key = np.minimum(a, b) * k + np.maximum(a, b)
            j = order[start[key] + (u[s, 1] * count[key]).astype(np.int64)]
            x, y, o = first[j], second[j], outcome[j]
            win, lose = np.where(o < 0, y, x), np.where(o < 0, x, y)
            new = update_pair(mu[rows, win], var[rows, win], mu[rows, lose],
                          var[rows, lose], o == 0, beta * beta, eps_abs)
            mu[rows, win], var[rows, win], mu[rows, lose], var[rows, lose] = new
        played += steps
    return mu, np.sqrt(var)
