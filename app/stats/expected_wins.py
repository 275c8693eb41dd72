"""Expected Wins, the ordering of WMT12-13 (Koehn 2012; WMT13 findings).

A system's expected wins is the mean, over the other systems, of the share
of its decided judgments against that system that it won:

    EW(i) = 1/(k-1) * sum over j != i of  wins(i, j) / (wins(i, j) + wins(j, i))

Ties are left out.  A pair with no decided judgment adds nothing to the sum
but still counts in k-1, as in keisks/wmt-trueskill's ``infer_EW.py``.

Rank ranges (WMT13 clusters): the pairwise judgments are resampled with
replacement, as many as there are, ``runs`` times (each judgment on its own,
as WMT did); each resample gives a score per system.  Drawing n judgments
with replacement is a multinomial draw over the outcome cells (winner, loser
or tied pair), so a resample costs one draw of k*k counts, not n.
"""

from __future__ import annotations

import numpy as np

__all__ = ["expected_wins", "resampled_scores"]


def expected_wins(wins) -> np.ndarray:
    """Expected wins of each system from ``wins`` (``[..., i, j]`` = judgments
    where i beat j; a stack of matrices gives a stack of scores)."""
    w = np.asarray(wins, dtype=np.float64)
    k = w.shape[-1]
    decided = w + np.swapaxes(w, -1, -2)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(decided > 0, w / decided, 0.0)
    share = share * (1.0 - np.eye(k))
    return share.sum(axis=-1) / (k - 1) if k > 1 else np.zeros(w.shape[:-1])


def resampled_scores(wins, ties, runs: int, seed: int) -> np.ndarray:
    """Expected wins of ``runs`` resamples of the judgments; shape (runs, k).

    ``ties`` only sets how many judgments are drawn and how likely a draw is
    a tie (ties carry no score); the generator is
    ``numpy.random.default_rng(seed)``."""
    w = np.asarray(wins, dtype=np.int64)
    k = w.shape[0]
    tied = int(np.triu(np.asarray(ties), 1).sum())     # each tie once
    cells = np.concatenate([w.ravel(), [tied]])
    n = int(cells.sum())
    out = np.zeros((runs, k))
    if n == 0 or runs == 0:
        return out
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, cells / n, size=runs)
    return expected_wins(draws[:, :-1].reshape(runs, k, k))
