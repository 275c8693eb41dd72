"""WMT24's significance, rank ranges and clusters for ESA scores: per domain a
two-sided Wilcoxon signed-rank test of two systems' scores on the segments
both have, the domains' p-values combined by Stouffer's method."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm, wilcoxon

__all__ = ["clusters", "pair_p", "rank_ranges", "significant", "stouffer"]


def stouffer(p_values) -> float:
    """``1 - Phi(sum(Phi^-1(1 - p_d)) / sqrt(k))``: one-sided p of k p-values."""
    p = np.asarray(p_values, dtype=float)
    if p.size == 0:
        return 1.0
    # norm.isf(p) is Phi^-1(1 - p) without losing small p to rounding
    return float(norm.sf(np.sum(norm.isf(p)) / math.sqrt(p.size)))


def pair_p(first: dict, second: dict) -> tuple[float, dict]:
    """Stouffer's p of ``first`` against ``second`` (each {domain: {segment:
    score}}) and each domain's Wilcoxon p.  A domain where the two share no
    segment, or differ on none, is not tested (scipy cannot test it)."""
    by_domain = {}
    for domain in sorted(set(first) & set(second)):
        a, b = first[domain], second[domain]
        common = sorted(set(a) & set(b))
        diff = np.array([a[s] - b[s] for s in common], dtype=float)
        if not np.any(diff):
            continue
        by_domain[domain] = float(wilcoxon(diff).pvalue)
    return stouffer(list(by_domain.values())), by_domain


def significant(p: dict, scores: dict, alpha: float) -> set:
    """(A, B) pairs where A scores higher than B and p(A, B) < alpha."""
    return {(a, b) for (a, b), value in p.items() if scores[a] > scores[b] and value < alpha}


def rank_ranges(order: list, wins: set) -> dict:
    """{system: (best, worst)}: 1 + the systems significantly better than
    it, to the number of systems less those it is significantly better than."""
    n = len(order)
    return {s: (1 + sum(1 for a, b in wins if b == s), n - sum(1 for a, b in wins if a == s))
            for s in order}


def clusters(order: list, p: dict, alpha: float) -> list[list]:
    """Systems in score order, cut before position i when no system from i
    on is within p > alpha of one before it."""
    groups = []
    for i, system in enumerate(order):
        if i and all(p[(before, later)] <= alpha for before in order[:i] for later in order[i:]):
            groups.append([])
        if not groups:
            groups.append([])
        groups[-1].append(system)
    return groups
