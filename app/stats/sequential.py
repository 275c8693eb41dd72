"""Anytime-valid decisions per system pair, and the final analysis after them.

A pair's evidence is its per-sentence wins and losses (ties dropped).  The
test is a mixture likelihood ratio (an e-value) against "each decisive
sentence goes either way with probability 1/2": the likelihood under a
Beta(a, a) mixture over the win probability divided by that under 1/2.
Under the null it is a nonnegative martingale starting at 1, so by Ville's
inequality P(E ever reaches 1/alpha) <= alpha: p = min(1, 1/E) stays valid
however often it is looked at, and it needs only the two counters.

Holm over the pairs' anytime p-values is valid at every look too: the first
true null Holm rejects has p <= alpha / (number of true nulls), and the
chance that any of them ever gets there is at most alpha (union bound, each
by Ville).  So the site may re-plan after every judgment.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import betaln

from app.stats.winners import holm, sign_test

__all__ = [
    "FAMILY_ALPHA", "GOALS", "PRIOR_A", "SEQUENTIAL_ALPHA", "anytime_p",
    "certified_top", "contenders", "decide_pairs", "e_value", "final_analysis",
    "log_e_value", "more_needed", "open_pairs", "projected_counts",
]

#: Beta(10, 10) has a standard deviation of 0.11 around 1/2: most of its
#: weight is on the win rates MT pairs show (WMT13 fr-en: half of the 78 pairs
#: between 0.55 and 0.66); at rates 0.55-0.65 it decides 7-20 % sooner than
#: Jeffreys' a=1/2 and costs a few outcomes on lopsided pairs (41 not 35 at 0.8).
PRIOR_A = 10.0
SEQUENTIAL_ALPHA = 0.01
FAMILY_ALPHA = 0.05
#: pseudo-outcomes added to each side before projecting the observed rate
SHRINK = 1.0
MORE_CAP = 100_000
ORDERING, TOP = "ordering", "top"
GOALS = (ORDERING, TOP)


def log_e_value(wins_a, wins_b, prior: float = PRIOR_A):
    """log E of the Beta(prior, prior) mixture against p = 1/2 (arrays too)."""
    w = np.asarray(wins_a, dtype=np.float64)
    b = np.asarray(wins_b, dtype=np.float64)
    # in log space: past about 1,000 outcomes 2^n and the Beta function overflow
    out = betaln(prior + w, prior + b) - betaln(prior, prior) + (w + b) * math.log(2.0)
    return out if out.ndim else float(out)


def e_value(wins_a: int, wins_b: int, prior: float = PRIOR_A) -> float:
    """The mixture likelihood ratio E (1 with no data, inf past float range)."""
    log_e = log_e_value(wins_a, wins_b, prior)
    return math.exp(log_e) if log_e < 709.0 else math.inf


def anytime_p(wins_a: int, wins_b: int, prior: float = PRIOR_A) -> float:
    """min(1, 1/E): a p-value valid at any number of looks."""
    return math.exp(-max(log_e_value(wins_a, wins_b, prior), 0.0))


def _pct(level):
    return f"{level * 100:.3g}%"


def _pairs(n):
    return f"{n} pair was" if n == 1 else f"{n} pairs were"


def _better(a, b, wins_a, wins_b):
    return a if wins_a > wins_b else b if wins_b > wins_a else None


def decide_pairs(pairs, alpha: float = SEQUENTIAL_ALPHA,
                 prior: float = PRIOR_A) -> list[dict]:
    """Holm over the anytime p-values of ``pairs`` at ``alpha``.

    ``pairs``: (system_a, system_b, wins_a, wins_b) tuples, from the current
    counters.  Per pair: ``decided``, ``better`` (a system or None), ``p``,
    ``p_holm`` and ``target``: the E an undecided pair needs for Holm to
    decide it, the others unchanged ((m - decided) / alpha), None if decided.
    A pair is decided only while its current counts keep it so: after
    discarded judgments it may come back undecided, and the site re-opens it.
    """
    p = [anytime_p(wa, wb, prior) for _, _, wa, wb in pairs]
    adjusted = holm(p)
    decided = [q <= alpha and wa != wb
               for q, (_, _, wa, wb) in zip(adjusted, pairs)]
    target = (len(pairs) - sum(decided)) / alpha
    return [{"decided": d,
             "better": _better(a, b, wa, wb) if d else None,
             "p": pi, "p_holm": q, "target": None if d else target}
            for (a, b, wa, wb), pi, q, d in zip(pairs, p, adjusted, decided)]


def contenders(pairs, decisions) -> set:
    """Systems that no decided pair puts below another: those that may be top."""
    systems = {s for a, b, _, _ in pairs for s in (a, b)}
    beaten = {b if d["better"] == a else a
              for (a, b, _, _), d in zip(pairs, decisions) if d["decided"]}
    return systems - beaten


def open_pairs(pairs, decisions, goal: str = ORDERING) -> list[bool]:
    """Which pairs still get judgments: undecided ones, and for the goal
    "top" only those with at least one contender.

    Top-system rule: a system decided worse than any other cannot be top, so
    a pair of two such systems cannot change which system is on top and is
    retired; a pair with a contender may, since the top must beat everyone.
    """
    if goal not in GOALS:
        raise ValueError(f"unknown goal {goal!r}")
    alive = contenders(pairs, decisions) if goal == TOP else None
    return [not d["decided"] and (alive is None or a in alive or b in alive)
            for (a, b, _, _), d in zip(pairs, decisions)]


def certified_top(pairs, decisions):
    """The system decided better than every other it is paired with, or None."""
    alive = contenders(pairs, decisions)
    if len(alive) != 1:
        return None
    top = next(iter(alive))
    mine = [d for (a, b, _, _), d in zip(pairs, decisions) if top in (a, b)]
    return top if mine and all(d["better"] == top for d in mine) else None


def projected_counts(wins_a, wins_b, more, shrink: float = SHRINK):
    """The counts after ``more`` outcomes at the observed rate, shrunk
    towards 1/2 by ``shrink`` pseudo-outcomes a side (arrays of ``more`` too)."""
    rate = (wins_a + shrink) / (wins_a + wins_b + 2.0 * shrink)
    more = np.asarray(more, dtype=np.int64)
    extra = np.floor(rate * more + 0.5).astype(np.int64)
    return wins_a + extra, wins_b + more - extra


def more_needed(wins_a: int, wins_b: int, target: float, *, shrink: float = SHRINK,
                cap: int = MORE_CAP, prior: float = PRIOR_A):
    """About how many more decisive outcomes until E reaches ``target``.

    The smallest n such that the projected counts (:func:`projected_counts`)
    reach it; 0 if already there, None at an even record (no direction to
    project) or when not reached within ``cap``.
    """
    # a hair above the target, so that float rounding in Holm cannot undo it
    goal = math.log(target) + 1e-9
    if log_e_value(wins_a, wins_b, prior) >= goal:
        return 0
    if wins_a == wins_b:
        return None
    start, size = 1, 64
    while start <= cap:             # blocks of doubling size: cost ~ the answer
        more = np.arange(start, min(start + size, cap + 1))
        future = projected_counts(wins_a, wins_b, more, shrink)
        hit = np.flatnonzero(log_e_value(*future, prior) >= goal)
        if hit.size:
            return int(more[hit[0]])
        start, size = start + size, size * 2
    return None


def final_analysis(pairs, sequential, alpha: float = FAMILY_ALPHA,
                   sequential_alpha: float = SEQUENTIAL_ALPHA) -> dict:
    """Decisions of a campaign that stopped adaptively, FWER <= ``alpha``.

    ``sequential[i]`` is the system pair i was decided better by
    :func:`decide_pairs` at ``sequential_alpha`` while the campaign ran, or
    None.  The undecided pairs get one fixed look at the end: the exact sign
    test on their final counts, Holm over those pairs at ``alpha -
    sequential_alpha``.  Returns ``pairs`` (per pair ``decided``, ``better``,
    ``stage``: "sequential", "final" or None, ``p``: the anytime p at the
    final counts for stage one, the Holm-adjusted sign p for stage two) and
    ``text``, a paragraph for the report.

    Why FWER <= alpha: a false decision is made either in stage one, which
    has probability <= sequential_alpha at any number of looks (Ville and
    Holm, see the module), or in stage two with no stage-one error.  Then
    every true null is among the undecided pairs, so Holm's first false
    rejection needs a true null's sign p <= (alpha - sequential_alpha) / m0,
    probability <= alpha - sequential_alpha.  The union bound adds the two.
    The sign test is exact because an undecided pair's final count is set by
    the plan and the other pairs, not by its own outcomes (the site shows
    only the anytime test, so nobody stops on a pair's fixed-sample p).
    """
    if not 0 < sequential_alpha < alpha:
        raise ValueError("the sequential level must lie between 0 and alpha")
    if len(sequential) != len(pairs):
        raise ValueError("one sequential entry per pair")
    rest = alpha - sequential_alpha
    later = [i for i, s in enumerate(sequential) if s is None]
    signs = [sign_test(pairs[i][2], pairs[i][3]) for i in later]
    adjusted = dict(zip(later, holm(signs)))
    out = []
    for i, ((a, b, wa, wb), seq) in enumerate(zip(pairs, sequential)):
        if seq is not None:
            if seq not in (a, b):
                raise ValueError(f"{seq!r} is not in pair {a!r}-{b!r}")
            out.append({"decided": True, "better": seq, "stage": "sequential",
                        "p": anytime_p(wa, wb)})
            continue
        hit = adjusted[i] <= rest and wa != wb
        out.append({"decided": hit, "better": _better(a, b, wa, wb) if hit else None,
                    "stage": "final" if hit else None, "p": adjusted[i]})
    n_seq, n_final = len(pairs) - len(later), sum(r["stage"] == "final" for r in out)
    text = (
        f"{n_seq} of {_pairs(len(pairs))} decided while the campaign ran, by an "
        f"anytime-valid test of the per-sentence wins (a Beta({PRIOR_A:g}, "
        f"{PRIOR_A:g}) mixture likelihood ratio, Holm over all pairs at "
        f"{_pct(sequential_alpha)}), which stays valid however often it was looked "
        f"at. The other {_pairs(len(later))} tested once at the end with the exact "
        f"sign test at the remaining {_pct(rest)}, Holm over these alone; "
        f"decided at this look: {n_final}. The two stages spend "
        f"{_pct(sequential_alpha)} and {_pct(rest)}, so the chance of any false "
        f"significant pair is at most {_pct(alpha)} (a union bound over the two "
        f"stages).")
    return {"pairs": out, "text": text, "alpha": alpha,
            "sequential_alpha": sequential_alpha, "final_alpha": rest}
