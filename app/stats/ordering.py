"""The system ordering (``A ≈ B > C``) and significance clusters.

Input: the systems, the set of significant pairwise results ``(winner,
loser)`` and a score per system for breaking ties (Bradley-Terry).

1. Sequence.  Systems are sorted by their Copeland score (significant wins
   minus significant losses), then by Bradley-Terry score, then by name.
2. Relations between neighbours.  Between neighbours X (left) and Y the sign
   is ``>`` when X significantly beat Y *and* no system at or right of Y
   significantly beat a system at or left of X (no significant result
   contradicts the cut); otherwise ``≈``.  A ``>`` therefore never rests on
   a non-transitive chain: in a cycle A > B > C > A all signs become ``≈``.
   Neighbours that were never compared get ``≈`` and a note.
3. Clusters.  The sequence is cut between positions i and i+1 when every
   system left of the cut significantly beat every system right of it.
   Clusters are the runs between cuts: every member of a cluster is
   significantly better than every member of every later cluster.
4. Notes.  Every significant result that goes against the sequence (the
   winner placed right of the loser) is listed as non-transitive evidence,
   and so is every significant result between non-neighbours that a chain
   of ``≈`` hides (A ≈ B ≈ C with A significantly better than C).

The orderings WMT used in 2013-16 (``--ordering trueskill`` or
``expected-wins``) are ranked by score instead and clustered by rank ranges
over many runs (:func:`rank_ordering`; the scores are in expected_wins.py and
trueskill_order.py).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["ORDERINGS", "beats_from_pairs", "order_systems", "range_clusters",
           "rank_ordering", "ranks_of", "wmt_rank_ranges"]

APPROX = "≈"
BETTER = ">"


def beats_from_pairs(pairs) -> list[tuple[str, str]]:
    """``(winner, loser)`` of every pair entry (winners.significance) whose
    ``better`` is set."""
    beats = []
    for entry in pairs:
        if entry["better"] is not None:
            a, b = entry["systems"]
            beats.append((entry["better"], b if entry["better"] == a else a))
    return beats


def order_systems(systems, beats, scores=None, compared=None) -> dict:
    """Derive the ordering.

    ``systems``: names; ``beats``: iterable of ``(winner, loser)`` pairs that
    are significant; ``scores``: optional dict name -> tie-break score
    (higher is better); ``compared``: optional iterable of frozensets of the
    pairs that were tested at all (for notes on unseen neighbours).

    Returns ``{"ordering", "sequence", "relations", "clusters", "notes",
    "copeland"}``.
    """
    systems = list(systems)
    beats = {(w, l) for w, l in beats}
    scores = scores or {}
    copeland = {s: 0 for s in systems}
    for w, l in beats:
        copeland[w] += 1
        copeland[l] -= 1
    sequence = sorted(systems, key=lambda s: (-copeland[s], -scores.get(s, 0.0), s))
    position = {s: i for i, s in enumerate(sequence)}
    upsets = sorted(((w, l) for w, l in beats if position[w] > position[l]),
                    key=lambda wl: (position[wl[1]], position[wl[0]]))

    relations = []
    notes = []
    for i in range(len(sequence) - 1):
        x, y = sequence[i], sequence[i + 1]
        contradicted = any(position[l] <= i < position[w] for w, l in upsets)
        relations.append(BETTER if (x, y) in beats and not contradicted else APPROX)
        if compared is not None and frozenset((x, y)) not in compared:
            notes.append(f"{x} and {y} were never compared")

    clusters = [[sequence[0]]] if sequence else []
    for i in range(len(sequence) - 1):
        left, right = sequence[:i + 1], sequence[i + 1:]
        if all((x, y) in beats for x in left for y in right):
            clusters.append([sequence[i + 1]])
        else:
            clusters[-1].append(sequence[i + 1])

    for w, l in upsets:
        notes.append(f"non-transitive: {w} significantly beat {l}, "
                     f"which is placed above it")
    for w, l in sorted(beats, key=lambda wl: (position[wl[0]], position[wl[1]])):
        if position[l] > position[w] + 1 and \
                all(r == APPROX for r in relations[position[w]:position[l]]):
            notes.append(f"{w} significantly beat {l}, which the chain of "
                         f"'{APPROX}' between them does not show")

    text = sequence[0] if sequence else ""
    for rel, s in zip(relations, sequence[1:]):
        text += f" {rel} {s}"
    return {"ordering": text, "sequence": sequence, "relations": relations,
            "clusters": clusters, "notes": notes, "copeland": copeland}


# --------------------------------------------------------------------------
# Orderings by rank ranges (WMT13-16): Expected Wins and TrueSkill

#: ``--ordering`` choices; the first (Bradley-Terry with significance) is the default.
ORDERINGS = ("bt", "trueskill", "expected-wins")


def wmt_rank_ranges(ranks, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Each system's range of ranks over the runs (``ranks``: shape
    (runs, k)), as keisks/wmt-trueskill's ``eval/cluster.py`` takes it: sort
    a system's ranks, drop ``ceil((n - n * level) / 2)`` from each end, and
    keep the smallest and largest left."""
    r = np.sort(np.asarray(ranks), axis=0)
    n = r.shape[0]
    cut = int(math.ceil((n - n * level) / 2.0))
    if n - 2 * cut < 1:
        cut = 0
    return r[cut], r[n - 1 - cut]


def ranks_of(scores) -> np.ndarray:
    """Rank of each system in each run (rank 1 = highest score; equal scores
    share the better rank)."""
    s = np.asarray(scores)
    return 1 + (s[:, None, :] > s[:, :, None]).sum(axis=2)


def range_clusters(sequence, low: dict, high: dict) -> list[list[str]]:
    """Cut ``sequence`` (best first) after a system whose worst rank is better
    than the best rank of every system after it (cluster.py's boundary)."""
    clusters = [[sequence[0]]] if sequence else []
    for i in range(1, len(sequence)):
        if high[sequence[i - 1]] < min(low[s] for s in sequence[i:]):
            clusters.append([sequence[i]])
        else:
            clusters[-1].append(sequence[i])
    return clusters


def rank_ordering(data, method: str, runs: int, seed: int) -> dict:
    """Expected Wins or TrueSkill with WMT's rank ranges and clusters for
    ``data`` (a reading.Judgments); see docs/analysis.md, section 4b."""
    from . import expected_wins as ew
    from . import trueskill_order as ts
    from .bradley_terry import win_matrix

    k = len(data.systems)
    if runs < 1:
        raise ValueError("rank ranges need at least one run")
    if method == "expected-wins":
        wins, ties = win_matrix(data.first, data.second, data.outcome, k)
        score = ew.expected_wins(wins)
        samples = ew.resampled_scores(wins, ties, runs, seed)
        sigma = None
    elif method == "trueskill":
        samples, sigmas = ts.batch_runs(data.first, data.second, data.outcome,
                                        k, runs, seed)
        score = samples.mean(axis=0)         # WMT reports the mean mu of the runs
        sigma = sigmas.mean(axis=0)
    else:
        raise ValueError(f"unknown ordering {method!r}")
    low, high = wmt_rank_ranges(ranks_of(samples))
    names = list(data.systems)
    order = sorted(range(k), key=lambda i: (-score[i], names[i]))
    sequence = [names[i] for i in order]
    lows = {names[i]: int(low[i]) for i in range(k)}
    highs = {names[i]: int(high[i]) for i in range(k)}
    clusters = range_clusters(sequence, lows, highs)
    cluster_of = {s: c for c, members in enumerate(clusters, start=1) for s in members}
    rows = [{"system": names[i], "rank": position, "score": float(score[i]),
             "sigma": None if sigma is None else float(sigma[i]),
             "rank_low": lows[names[i]], "rank_high": highs[names[i]],
             "cluster": cluster_of[names[i]]}
            for position, i in enumerate(order, start=1)]
    return {"method": method, "runs": runs, "seed": seed, "level": 0.95,
            "systems": rows, "clusters": clusters,
            "settings": ts.SETTINGS if method == "trueskill" else
            {"resampling": "judgments, with replacement", "ties": "left out"}}
