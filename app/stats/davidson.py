"""Bradley-Terry with ties as ties: the Davidson (1970) model.

Model
    With strengths ``pi_i = exp(theta_i)`` and a tie parameter ``nu >= 0``,
    for one judgment of i against j::

        P(i better) = pi_i / D      P(tie) = nu * sqrt(pi_i * pi_j) / D
        D = pi_i + pi_j + nu * sqrt(pi_i * pi_j)

    Among decided judgments ``P(i better) = 1 / (1 + exp(theta_j - theta_i))``
    as in the half-win model, so the scores are on the same scale; ties are
    likeliest between systems of equal strength.  With no ties ``nu = 0``
    and the model is Bradley-Terry.

Fitting
    Per system pair the three outcomes form a multinomial logit with linear
    predictors ``theta_i``, ``theta_j`` and ``log(nu) + (theta_i + theta_j)/2``,
    so the maximum-likelihood estimate is found by Newton's method on
    ``(theta, log nu)`` with the usual multinomial gradient and information
    matrix, steps capped at 2 in any coordinate, until no coordinate moves
    by more than 1e-10.  The same pseudo-count of wins as in the half-win fit
    keeps theta finite when a system never wins.  Many fits (bootstrap
    rounds) are solved at once as a batch.
"""

from __future__ import annotations

import numpy as np

__all__ = ["fit", "log_likelihood"]

# as in bradley_terry.fit
MAX_STEP = 2.0
TOLERANCE = 1e-10
MAX_ITER = 500

# columns (theta_i, theta_j, log nu) of the three outcomes' linear predictors
_DESIGN = np.array([[1.0, 0.0, 0.0],      # i better
                    [0.0, 1.0, 0.0],      # j better
                    [0.5, 0.5, 1.0]])     # tie


def _pair_counts(wins, ties, pseudo_count):
    """Pairs (i < j) ever compared, and per round their counts (i better,
    j better, tie), pseudo-count added to the wins of pairs compared in that
    round."""
    games = wins + np.swapaxes(wins, 1, 2) + ties
    i, j = np.nonzero(np.triu(games.sum(axis=0) > 0, 1))
    y = np.stack([wins[:, i, j], wins[:, j, i], ties[:, i, j]], axis=2)
    if pseudo_count:
        y[:, :, :2] += pseudo_count * (games[:, i, j] > 0)[:, :, None]
    return i, j, y


def _probabilities(beta, i, j):
    """Outcome probabilities (R, P, 3) for parameters beta = (theta, log nu)."""
    eta = np.stack([beta[:, i], beta[:, j],
                    beta[:, -1:] + (beta[:, i] + beta[:, j]) / 2], axis=2)
    eta -= eta.max(axis=2, keepdims=True)
    p = np.exp(eta)
    return p / p.sum(axis=2, keepdims=True)


def log_likelihood(theta, nu, wins, ties) -> float:
    """Davidson log-likelihood of one ``(k, k)`` wins / ties pair of matrices
    (``ties`` symmetric), for checking the fit."""
    beta = np.append(theta, np.log(nu))[None]
    i, j, y = _pair_counts(np.asarray(wins, float)[None],
                           np.asarray(ties, float)[None], 0)
    p = _probabilities(beta, i, j)
    return float((y * np.log(np.where(y > 0, p, 1.0))).sum())


def fit(wins, ties, pseudo_count: float = 0.01) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-likelihood ``(theta, nu)``: theta centred, nu the tie parameter.

    ``wins[i, j]`` counts judgments where i beat j, ``ties`` is symmetric;
    both ``(k, k)`` or ``(R, k, k)`` (a batch).  Returns theta of shape
    ``(k,)`` or ``(R, k)`` and nu of shape ``()`` or ``(R,)``; with no ties
    nu is 0 and theta that of Bradley-Terry.
    """
    w = np.asarray(wins, dtype=np.float64)
    t = np.asarray(ties, dtype=np.float64)
    single = w.ndim == 2
    if single:
        w, t = w[None], t[None]
    k = w.shape[-1]
    i, j, y = _pair_counts(w * (1 - np.eye(k)), t * (1 - np.eye(k)), pseudo_count)
    n = y.sum(axis=2)
    rounds = w.shape[0]
    # start from equal strengths and the nu that gives the observed tie
    # share; with no ties log nu is -inf, ties get no weight and it stays so
    share = y[:, :, 2].sum(axis=1) / n.sum(axis=1)
    beta = np.zeros((rounds, k + 1))
    with np.errstate(divide="ignore"):
        beta[:, -1] = np.log(2 * share / np.maximum(1 - share, 1e-12))
    # where each pair's 3 x 3 block of the information matrix goes
    index = np.stack([i, j, np.full_like(i, k)], axis=1)             # (P, 3)
    flat = index[:, :, None] * (k + 1) + index[:, None, :]            # (P, 3, 3)
    offsets = (np.arange(rounds) * (k + 1) ** 2)[:, None, None, None]
    active = np.ones(rounds, dtype=bool)
    for _ in range(MAX_ITER):
        b = beta[active]
        r = b.shape[0]
        p = _probabilities(b, i, j)
        nn = n[active][:, :, None]
        local_grad = (y[active] - nn * p) @ _DESIGN                   # (r, P, 3)
        grad = np.zeros((r, k + 1))
        for c in range(3):
            np.add.at(grad, (slice(None), index[:, c]), local_grad[:, :, c])
        cov = nn[..., None] * (p[..., None] * np.eye(3) - p[..., None] * p[:, :, None, :])
        block = _DESIGN.T @ cov @ _DESIGN                             # (r, P, 3, 3)
        info = np.bincount((flat[None] + offsets[:r]).ravel(), weights=block.ravel(),
                           minlength=r * (k + 1) ** 2).reshape(r, k + 1, k + 1)
        step = np.einsum("rij,rj->ri", np.linalg.pinv(info, hermitian=True), grad)
        biggest = np.abs(step).max(axis=1)
        scale = np.minimum(1.0, MAX_STEP / np.maximum(biggest, 1e-300))
        beta[active] = b + step * scale[:, None]
        still = biggest > TOLERANCE
        if not still.any():
            break
        rows = np.flatnonzero(active)
        active[rows[~still]] = False
    theta = beta[:, :k] - beta[:, :k].mean(axis=1, keepdims=True)
    nu = np.exp(beta[:, -1])
    return (theta[0], nu[0]) if single else (theta, nu)
