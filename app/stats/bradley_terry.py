"""Bradley-Terry scores, the judgment-level win matrix and win rates.

Model
    P(i beats j) = 1 / (1 + exp(theta_j - theta_i)).  Ties are either ties
    (``model="davidson"``, the default: Davidson's 1970 model, fitted in
    :mod:`app.stats.davidson`) or half a win each way (``model="half"``: the
    data are ``W[i, j]`` = judgments where i beat j plus half of the ties
    between i and j).  Counting ties as half wins pulls the scores towards
    0 (scripts/bench/simulate_bradley_terry.py).  A pseudo-count (default
    0.01 of a win each way for every pair that was compared at least once)
    keeps the maximum-likelihood estimate finite when a system never wins;
    it is negligible with real amounts of data and can be set to 0.

Fitting
    Maximum likelihood by Newton's method on theta (the negative Hessian is
    the weighted graph Laplacian of the comparisons), steps capped at 2 in
    any coordinate, until no coordinate moves by more than 1e-10.  Scores
    are reported centred (mean theta = 0), in natural-log units: a
    difference of 1 means odds of e:1 of one system being preferred.
    Many fits (bootstrap rounds) are solved at once as a stacked batch.

Bootstrap
    The resampling unit is the source sentence: each round draws as many
    sentences as there are, with replacement, and takes all judgments of the
    drawn sentences (judgments of one sentence are not independent).  The
    generator is ``numpy.random.default_rng(seed)``, so a seed gives the same
    intervals every time.  Score intervals are the 2.5 and 97.5 percentiles
    of the bootstrap scores; rank ranges drop the lowest and highest 2.5 %
    of each system's bootstrap ranks (rank 1 = best; systems with equal
    scores share the whole range of ranks they cover).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from . import davidson

__all__ = [
    "TIE_MODELS",
    "bootstrap_scores",
    "bradley_terry",
    "fit",
    "fit_model",
    "rank_ranges",
    "sentence_contributions",
    "win_matrix",
    "win_rates",
]

MAX_STEP = 2.0
TOLERANCE = 1e-10
MAX_ITER = 500
TIE_MODELS = ("davidson", "half")     # the first is the default


def win_matrix(first, second, outcome, n_systems: int) -> tuple[np.ndarray, np.ndarray]:
    """Judgment-level ``(wins, ties)``: ``wins[i, j]`` = judgments in which
    i beat j; ``ties`` is symmetric."""
    first = np.asarray(first, dtype=np.int64)
    second = np.asarray(second, dtype=np.int64)
    outcome = np.asarray(outcome)
    k = n_systems
    winner = np.where(outcome > 0, first, second)
    loser = np.where(outcome > 0, second, first)
    decided = outcome != 0
    wins = np.bincount(winner[decided] * k + loser[decided],
                       minlength=k * k).reshape(k, k)
    tied = ~decided
    ties = np.bincount(first[tied] * k + second[tied], minlength=k * k).reshape(k, k)
    return wins, ties + ties.T


def win_rates(wins: np.ndarray, ties: np.ndarray) -> list[dict]:
    """Per-system judgments, wins, ties, losses and win rates."""
    won = wins.sum(axis=1)
    lost = wins.sum(axis=0)
    tied = ties.sum(axis=1)
    total = won + lost + tied
    out = []
    for i in range(wins.shape[0]):
        n = int(total[i])
        out.append({
            "judgments": n, "wins": int(won[i]), "ties": int(tied[i]),
            "losses": int(lost[i]),
            "win_rate": won[i] / n if n else None,
            "score_rate": (won[i] + tied[i] / 2) / n if n else None,
        })
    return out


def fit(wins, pseudo_count: float = 0.01) -> np.ndarray:
    """Maximum-likelihood Bradley-Terry log-strengths, centred.

    ``wins`` has shape ``(k, k)`` or ``(R, k, k)`` (a batch); entry
    ``[i, j]`` is the (possibly fractional) number of wins of i over j.
    Returns theta of shape ``(k,)`` or ``(R, k)``.
    """
    w = np.asarray(wins, dtype=np.float64)
    single = w.ndim == 2
    if single:
        w = w[None]
    k = w.shape[-1]
    w = w * (1.0 - np.eye(k))
    games = w + np.swapaxes(w, 1, 2)
    if pseudo_count:
        w = w + pseudo_count * (games > 0)
        games = w + np.swapaxes(w, 1, 2)
    won = w.sum(axis=2)
    theta = np.zeros(w.shape[:2])
    active = np.ones(w.shape[0], dtype=bool)
    for _ in range(MAX_ITER):
        t = theta[active]
        g = games[active]
        p = 1.0 / (1.0 + np.exp(t[:, None, :] - t[:, :, None]))   # P(i beats j)
        grad = won[active] - (g * p).sum(axis=2)
        weight = g * p * (1.0 - p)
        laplacian = -weight
        idx = np.arange(k)
        laplacian[:, idx, idx] = weight.sum(axis=2)
        step = np.einsum("rij,rj->ri", np.linalg.pinv(laplacian, hermitian=True), grad)
        biggest = np.abs(step).max(axis=1)
        scale = np.minimum(1.0, MAX_STEP / np.maximum(biggest, 1e-300))
        theta[active] = t + step * scale[:, None]
        still = biggest > TOLERANCE
        if not still.any():
            break
        rows = np.flatnonzero(active)
        active[rows[~still]] = False
    theta -= theta.mean(axis=1, keepdims=True)
    return theta[0] if single else theta


def fit_model(wins, ties, model: str = "davidson",
              pseudo_count: float = 0.01) -> tuple[np.ndarray, np.ndarray | None]:
    """``(theta, nu)`` with ties as ties (``"davidson"``) or as half wins
    (``"half"``, nu is then None); shapes as in :func:`fit`."""
    if model == "half":
        return fit(np.asarray(wins) + np.asarray(ties) / 2.0, pseudo_count), None
    if model == "davidson":
        return davidson.fit(wins, ties, pseudo_count)
    raise ValueError(f"unknown tie model {model!r}")


def components(games: np.ndarray) -> int:
    """Number of connected groups of systems in the comparison graph."""
    n, _ = connected_components(sparse.csr_matrix(np.asarray(games) > 0),
                                directed=False)
    return int(n)


def sentence_contributions(first, second, outcome, sentence, n_systems: int,
                           n_sentences: int) -> sparse.csr_matrix:
    """Sparse ``(n_sentences, 2*k*k)`` matrix: row s holds the win matrix
    and then the (symmetric) tie matrix of the judgments of sentence s,
    each flattened."""
    k = n_systems
    first = np.asarray(first, dtype=np.int64)
    second = np.asarray(second, dtype=np.int64)
    outcome = np.asarray(outcome)
    sentence = np.asarray(sentence, dtype=np.int64)
    decided = outcome != 0
    winner = np.where(outcome > 0, first, second)
    loser = np.where(outcome > 0, second, first)
    tied = ~decided
    rows = np.concatenate([sentence[decided], sentence[tied], sentence[tied]])
    cols = np.concatenate([winner[decided] * k + loser[decided],
                           k * k + first[tied] * k + second[tied],
                           k * k + second[tied] * k + first[tied]])
    vals = np.ones(rows.size)
    return sparse.csr_matrix((vals, (rows, cols)), shape=(n_sentences, 2 * k * k))


def bootstrap_scores(contributions: sparse.csr_matrix, n_systems: int,
                     rounds: int, seed: int, pseudo_count: float = 0.01,
                     chunk: int = 100, model: str = "davidson") -> np.ndarray:
    """Scores of ``model`` for ``rounds`` resamples of the sentences
    (``contributions`` from :func:`sentence_contributions`); returns an
    array of shape ``(rounds, k)``."""
    k = n_systems
    n_sent = contributions.shape[0]
    by_column = contributions.T.tocsr()            # (2*k*k, n_sentences)
    rng = np.random.default_rng(seed)
    out = np.empty((rounds, k))
    done = 0
    while done < rounds:
        r = min(chunk, rounds - done)
        draws = rng.integers(0, n_sent, size=(r, n_sent))
        offsets = (np.arange(r) * n_sent)[:, None]
        counts = np.bincount((draws + offsets).ravel(),
                             minlength=r * n_sent).reshape(r, n_sent)
        both = (by_column @ counts.T.astype(np.float64)).T.reshape(r, 2, k, k)
        out[done:done + r] = fit_model(both[:, 0], both[:, 1], model, pseudo_count)[0]
        done += r
    return out


def rank_ranges(samples: np.ndarray, trim: float = 0.025,
                tolerance: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    """Central ``1 - 2*trim`` range of each system's rank over the samples
    (rank 1 = highest score).

    Scores within ``tolerance`` of each other are tied: in a round, a system's
    best possible rank is 1 + the number of systems strictly above it, its
    worst the number of systems not below it.  The range runs from the
    ``trim`` quantile of the best ranks to the ``1 - trim`` quantile of the
    worst ranks.
    """
    rounds, k = samples.shape
    above = samples[:, None, :] > samples[:, :, None] + tolerance   # [r, i, j]: j above i
    below = samples[:, None, :] < samples[:, :, None] - tolerance
    best = 1 + above.sum(axis=2)
    worst = k - below.sum(axis=2)
    best.sort(axis=0)
    worst.sort(axis=0)
    low_index = int(np.floor(trim * rounds))
    high_index = max(low_index, int(np.ceil((1 - trim) * rounds)) - 1)
    return best[low_index], worst[high_index]


def bradley_terry(data, *, rounds: int = 1000, seed: int = 1,
                  pseudo_count: float = 0.01, model: str = "davidson") -> dict:
    """Scores, intervals and rank ranges for ``data`` (a reading.Judgments),
    ties counted by ``model`` (one of :data:`TIE_MODELS`).

    Returns ``{"scores": [...], "warnings": [...], "nu": ...}``; ``scores``
    is sorted by score, best first; interval and rank-range fields are None
    when ``rounds`` is 0; ``nu`` is the Davidson tie parameter (None for the
    half-win model).
    """
    k = len(data.systems)
    wins, ties = win_matrix(data.first, data.second, data.outcome, k)
    theta, nu = fit_model(wins, ties, model, pseudo_count)
    warnings = []
    if components(wins + wins.T + ties) > 1:
        warnings.append("the systems fall into groups that were never compared "
                        "with each other; Bradley-Terry scores are only "
                        "comparable within a group")
    low = high = rank_low = rank_high = [None] * k
    if rounds > 0:
        contrib = sentence_contributions(data.first, data.second, data.outcome,
                                         data.sentence, k, len(data.sentences))
        samples = bootstrap_scores(contrib, k, rounds, seed, pseudo_count,
                                   model=model)
        low, high = np.percentile(samples, [2.5, 97.5], axis=0)
        rank_low, rank_high = rank_ranges(samples)
    order = np.argsort(-theta, kind="stable")
    scores = []
    for position, i in enumerate(order, start=1):
        scores.append({
            "system": data.systems[i],
            "score": float(theta[i]),
            "rank": position,
            "ci_low": None if low[i] is None else float(low[i]),
            "ci_high": None if high[i] is None else float(high[i]),
            "rank_low": None if rank_low[i] is None else int(rank_low[i]),
            "rank_high": None if rank_high[i] is None else int(rank_high[i]),
        })
    return {"scores": scores, "warnings": warnings, "rounds": rounds,
            "seed": seed, "pseudo_count": pseudo_count, "model": model,
            "nu": None if nu is None else float(nu),
            "wins": wins, "ties": ties}
