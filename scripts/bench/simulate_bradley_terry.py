"""Ties in Bradley-Terry: ties as half wins against ties as ties (Davidson).

    .venv/bin/python scripts/bench/simulate_bradley_terry.py [--campaigns 200] [--judgments 3000]
        [--rounds 200] [--large 1000000] [--seed 1]

Simulates campaigns with known strengths (six systems, centred log-strengths
theta +1.2, +1.0, +0.3, +0.2, -1.2, -1.5: two close pairs) and a known tie
rate, drawn in two ways:

* ``davidson``: ties as Davidson's model has them (likeliest between close
  systems), nu = 0.6, about 20 % ties;
* ``constant``: a tie with the same overall probability whoever is compared,
  otherwise a Bradley-Terry outcome (the Davidson fit is then misspecified).

Each campaign draws a system pair at random for every judgment and spreads
the judgments over 300 sentences. Both fits (app.stats.bradley_terry with
``half`` and ``davidson``) run on every campaign; the tables give, per model,
the mean estimate of the top system's theta, the mean absolute bias of theta
over systems, the root mean square error of theta and of the strengths
normalised to sum 1, Kendall's tau between estimated and true order, and the
share of 95 % bootstrap intervals (over sentences) that hold the true theta;
then the estimates on one large campaign, where only the bias is left.
"""
import argparse
import os
import sys

import numpy as np
from scipy.stats import kendalltau

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from app.stats import bradley_terry as bt  # noqa: E402

from harness import table  # noqa: E402

THETA = np.array([1.2, 1.0, 0.3, 0.2, -1.2, -1.5])   # centred; two close pairs
NU = 0.6
SENTENCES = 300
MODELS = ("half", "davidson")


def davidson_tie_rate(theta, nu):
    """Overall tie probability of the Davidson process with uniform pairs."""
    i, j = np.triu_indices(theta.size, 1)
    root = nu * np.exp((theta[i] + theta[j]) / 2)
    return float((root / (np.exp(theta[i]) + np.exp(theta[j]) + root)).mean())


def simulate(rng, n, process, tie_rate):
    """One campaign: (first, second, outcome, sentence) arrays."""
    k = THETA.size
    first = rng.integers(0, k, n)
    second = (first + rng.integers(1, k, n)) % k
    a, b = np.exp(THETA[first]), np.exp(THETA[second])
    if process == "davidson":
        root = NU * np.sqrt(a * b)
        p_first, p_tie = a / (a + b + root), root / (a + b + root)
    else:
        p_tie = np.full(n, tie_rate)
        p_first = (1 - tie_rate) * a / (a + b)
    u = rng.random(n)
    outcome = np.where(u < p_first, 1, np.where(u < p_first + p_tie, 0, -1)).astype(np.int8)
    return first, second, outcome, rng.integers(0, SENTENCES, n)


def fit_all(first, second, outcome, sentence, rounds, seed):
    """Per model: centred theta and, with ``rounds``, the 95 % intervals."""
    k = THETA.size
    wins, ties = bt.win_matrix(first, second, outcome, k)
    contrib = bt.sentence_contributions(first, second, outcome, sentence, k, SENTENCES)
    out = {}
    for model in MODELS:
        theta = bt.fit_model(wins, ties, model)[0]
        low = high = None
        if rounds:
            samples = bt.bootstrap_scores(contrib, k, rounds, seed, model=model)
            low, high = np.percentile(samples, [2.5, 97.5], axis=0)
        out[model] = (theta, low, high)
    return out


def share(theta):
    strength = np.exp(theta)
    return strength / strength.sum()


def campaigns(process, args, tie_rate):
    rng = np.random.default_rng(args.seed)
    found = {m: {"theta": [], "tau": [], "covered": []} for m in MODELS}
    for c in range(args.campaigns):
        fits = fit_all(*simulate(rng, args.judgments, process, tie_rate), args.rounds, c)
        for model, (theta, low, high) in fits.items():
            found[model]["theta"].append(theta)
            found[model]["tau"].append(kendalltau(theta, THETA)[0])
            if low is not None:
                found[model]["covered"].append((low <= THETA) & (THETA <= high))
    rows = []
    for model in MODELS:
        theta = np.array(found[model]["theta"])
        shares = np.apply_along_axis(share, 1, theta)
        covered = np.array(found[model]["covered"])
        rows.append([
            process, model, f"{theta[:, 0].mean():.3f}",
            f"{np.abs(theta.mean(axis=0) - THETA).mean():.3f}",
            f"{np.sqrt(((theta - THETA) ** 2).mean()):.3f}",
            f"{np.sqrt(((shares - share(THETA)) ** 2).mean()):.4f}",
            f"{np.mean(found[model]['tau']):.3f}",
            f"{covered.mean():.3f}" if covered.size else "n/a",
        ])
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--campaigns", type=int, default=200)
    parser.add_argument("--judgments", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=200, help="bootstrap rounds (0: none)")
    parser.add_argument("--large", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    tie_rate = davidson_tie_rate(THETA, NU)
    print(f"true theta: {', '.join(f'{t:+.2f}' for t in THETA)}; "
          f"normalised strengths: {', '.join(f'{s:.3f}' for s in share(THETA))}")
    print(f"tie rate {tie_rate:.3f} (Davidson nu = {NU}); {args.campaigns} campaigns of "
          f"{args.judgments} judgments on {SENTENCES} sentences; {args.rounds} bootstrap rounds; "
          f"seed {args.seed}\n")
    rows = campaigns("davidson", args, tie_rate) + campaigns("constant", args, tie_rate)
    table(["ties drawn", "model", f"top theta (true {THETA[0]:.3f})", "mean abs bias", "RMSE theta",
           "RMSE strength share", "Kendall tau", "95% CI coverage"], rows)

    rng = np.random.default_rng(args.seed + 1)
    rows = []
    for process in ("davidson", "constant"):
        fits = fit_all(*simulate(rng, args.large, process, tie_rate), 0, 0)
        for model, (theta, _, _) in fits.items():
            rows.append([process, model, f"{args.large:,}",
                         " ".join(f"{t:+.3f}" for t in theta),
                         f"{share(theta)[0]:.3f} (true {share(THETA)[0]:.3f})"])
    table(["ties drawn", "model", "judgments", "theta", "top strength share"], rows)


if __name__ == "__main__":
    main()
