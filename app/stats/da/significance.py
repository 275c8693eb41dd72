"""Direct Assessment significance: Holm over the system pairs, WMT's two
cluster rules, and a judge-level bootstrap interval of each system's z.

The rank-sum test itself is :func:`app.stats.da.analysis.rank_sum_greater`; this
module works on its matrix of one-sided p-values.  See docs/analysis.md,
"Direct Assessment campaigns".
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ..winners import holm

__all__ = ["CLUSTER_RULES", "CORRECTIONS", "holm_matrix", "judge_bootstrap", "wins",
           "wmt_clusters"]

CORRECTIONS = ("holm", "none")
CLUSTER_RULES = ("wmt21", "wmt22")


def holm_matrix(raw: dict) -> dict:
    """Holm-adjusted p of "A better than B" for every ordered pair of ``raw``
    ({A: {B: one-sided p}}).

    The family is the system pairs, one two-sided test each (p = 2 x the
    smaller one-sided p, R's two-sided p of the same test), as the pairwise
    analysis does; a pair's adjusted p goes to the direction its data
    favour, the other direction gets 1.  None stays None (no test)."""
    pairs = [(a, b) for i, a in enumerate(raw) for b in list(raw)[i + 1:]
             if raw[a].get(b) is not None and raw[b].get(a) is not None]
    two_sided = [min(1.0, 2.0 * min(raw[a][b], raw[b][a])) for a, b in pairs]
    out = {a: {b: None for b in row} for a, row in raw.items()}
    for (a, b), adjusted in zip(pairs, holm(two_sided)):
        better, worse = (a, b) if raw[a][b] <= raw[b][a] else (b, a)
        out[better][worse], out[worse][better] = adjusted, 1.0
    return out


def wins(order: list, matrix: dict, alpha: float, rule: str = "wmt21") -> dict:
    """{system: how many systems it significantly beats (p < alpha)}; under
    "wmt22" only systems below it in ``order`` (z order) count."""
    position = {name: i for i, name in enumerate(order)}
    return {a: sum(p is not None and p < alpha and
                   (rule == "wmt21" or position.get(b, -1) > position.get(a, len(order)))
                   for b, p in matrix[a].items())
            for a in matrix}


def wmt_clusters(order, wins, rule: str = "wmt21") -> list[list[str]]:
    """Clusters of the systems in z order (``wins`` from :func:`wins`).

    "wmt21" (WMT21's published clusters): the cluster ends at the system in
    position i of n when it beats exactly n - i systems.  "wmt22" (the
    script of WMT22's findings, wins counted downward only): it ends there
    when every system in positions 1..i beats at least n - i systems."""
    if rule not in CLUSTER_RULES:
        raise ValueError(f"rule must be one of {CLUSTER_RULES}, not {rule!r}")
    clusters, current, fewest = [], [], len(order)
    for i, name in enumerate(order, start=1):
        current.append(name)
        fewest = min(fewest, wins[name])
        if (wins[name] if rule == "wmt21" else fewest) == len(order) - i:
            clusters.append(current)
            current = []
    if current:
        clusters.append(current)
    return clusters


def judge_bootstrap(judge, sentence, system, z, n_systems: int, rounds: int = 1000,
                    seed: int = 1, level: float = 0.95,
                    sentences: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of each system's z (mean of its segment means)
    when the judges are resampled with replacement and, with ``sentences``,
    the source sentences too, independently (Owen's pigeonhole bootstrap of
    a crossed design); one row per z score: its ``judge``, ``sentence`` and
    ``system`` codes.  Returns (low, high); a resample in which no drawn
    judge scored a system is left out of that system's interval (NaN when
    none is left).

    A judge drawn k times counts k times in every segment they scored, a
    sentence drawn k times counts k times in each system's mean; the
    resamples are done in batches of sparse products (segment x judge)."""
    judge, sentence, system = (np.asarray(a, dtype=np.int64) for a in (judge, sentence, system))
    segment = system * (sentence.max(initial=0) + 1) + sentence
    z = np.asarray(z, dtype=float)
    if z.size == 0 or rounds < 1:
        nan = np.full(n_systems, np.nan)
        return nan, nan.copy()
    judges, judge = np.unique(judge, return_inverse=True)
    segments, seg = np.unique(segment, return_inverse=True)
    seg_system = np.zeros(segments.size, dtype=np.int64)
    seg_system[seg] = system
    sentence_codes, seg_sentence = np.unique(segments % (sentence.max() + 1), return_inverse=True)
    shape = (segments.size, judges.size)
    total = sparse.csr_matrix((z, (seg, judge)), shape=shape)         # duplicates summed
    count = sparse.csr_matrix((np.ones_like(z), (seg, judge)), shape=shape)
    member = sparse.csr_matrix((np.ones(segments.size), (seg_system, np.arange(segments.size))),
                               shape=(n_systems, segments.size))
    rng = np.random.default_rng(seed)
    samples = np.empty((n_systems, rounds))
    batch = max(1, min(rounds, 4_000_000 // segments.size))
    for start in range(0, rounds, batch):
        b = min(batch, rounds - start)
        drawn = draw(rng, judges.size, b)
        n = count @ drawn                                   # segments x b
        weight = (n > 0).astype(float)
        if sentences:
            weight *= draw(rng, sentence_codes.size, b)[seg_sentence]
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(n > 0, (total @ drawn) / n, 0.0)
            samples[:, start:start + b] = (member @ (weight * mean)) / (member @ weight)
    tail = 100 * (1 - level) / 2
    low, high = np.full(n_systems, np.nan), np.full(n_systems, np.nan)
    for k, row in enumerate(samples):
        row = row[np.isfinite(row)]
        if row.size:
            low[k], high[k] = np.percentile(row, [tail, 100 - tail])
    return low, high


def draw(rng, n: int, rounds: int) -> np.ndarray:
    """(n x rounds) counts: how often each of n units is drawn in each of
    ``rounds`` resamples of n with replacement."""
    picks = rng.integers(0, n, size=(n, rounds)) * rounds + np.arange(rounds)
    return np.bincount(picks.ravel(), minlength=n * rounds).reshape(n, rounds).astype(float)
