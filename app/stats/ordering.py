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
"""

from __future__ import annotations

__all__ = ["beats_from_pairs", "order_systems"]

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
