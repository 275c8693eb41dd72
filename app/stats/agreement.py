"""Inter- and intra-annotator agreement.

An *item* is one pairwise comparison task: (source sentence, first system,
second system).  Every judgment of an item is a *label*: first better,
tie, or second better (coded 2, 1, 0 here; 1 is the tie).

P(A), shared by both kappa definitions
    Over every item, take all unordered pairs of labels given to it
    (``comparable`` pairs, ``m*(m-1)/2`` for an item with ``m`` labels) and
    count those where both labels are the same (``agreeing``).  Pairs of
    labels by the same judge are counted too, exactly as Appraise's
    ``compute_agreement_scores.py`` does.  ``P(A) = agreeing / comparable``.

P(E), WMT definition (Appraise; the default)
    ``P(tie) = ties / labels`` over all labels of the items considered, and
    ``P(E) = P(tie)^2 + 2 * ((1 - P(tie)) / 2)^2``.

Different judges only (``inter_different_judges``)
    The findings papers' wording of inter-annotator agreement: pairs of
    labels by two different judges on one source sentence and one system
    pair, whichever system was shown first (labels turned to the pair's
    alphabetical order).  P(E) as WMT's, from the tie rate of all labels.

Intra-annotator agreement (Appraise's ``--intra``)
    Pairs of labels one judge gave to one item (stored order); P(tie) over
    every label that judge gave within the source sentences where they
    repeated an item; P(E) from it as WMT's.

P(E), Ebaluatoia definition (the paper's section 4.1)
    ``P(E) = P(A>B)^2 + P(A=B)^2 + P(A<B)^2`` with the empirical shares of
    the three labels of a system pair (A is the system whose name sorts
    first).  Overall, P(E) is the mean of the per-pair P(E) weighted by the
    pairs' comparable label pairs (see :func:`ebaluatoia_overall`).

Krippendorff's alpha (nominal) is the cross-check, computed as in the
literature (and the ``krippendorff`` package): units are items, values the
labels in the loader's orientation, from the coincidence matrix.  A second,
*symmetrised* alpha averages the "first better" and "second better" totals
before the expected disagreement, so that it does not depend on which system
of a pair is stored first; when one system of a pair is usually better it
counts that shared preference as agreement, as WMT's P(E) does.

``kappa = (P(A) - P(E)) / (1 - P(E))``; it is undefined (``None``) when
there are no comparable pairs or when ``P(E) = 1`` (for instance when every
label is a tie).

The functions at the top take plain numpy arrays; :func:`agreement` applies
them to a :class:`~app.stats.reading.Judgments`.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "agreement",
    "agreement_counts",
    "describe",
    "different_judge_counts",
    "ebaluatoia_kappa",
    "ebaluatoia_overall",
    "intra_counts",
    "kappa",
    "kappa_margin",
    "krippendorff_alpha_nominal",
    "label_counts",
    "landis_koch",
    "with_repeats",
    "wmt_kappa",
]

SECOND, TIE, FIRST = 0, 1, 2   # label codes (outcome + 1)


# --------------------------------------------------------------------------
# pure functions on counts


def kappa(p_a: float | None, p_e: float | None) -> float | None:
    """``(P(A) - P(E)) / (1 - P(E))``, or None when undefined."""
    if p_a is None or p_e is None or p_e >= 1.0:
        return None
    return (p_a - p_e) / (1.0 - p_e)


def landis_koch(k: float | None) -> str:
    """Landis and Koch (1977) label for a kappa value."""
    if k is None:
        return "not available"
    if k < 0:
        return "poor"
    for bound, label in ((0.2, "slight"), (0.4, "fair"), (0.6, "moderate"),
                         (0.8, "substantial")):
        if k <= bound:
            return label
    return "almost perfect"


# A verbal label is given only when kappa's rough 95% margin is at most the
# width of one Landis and Koch band (0.2): with a wider margin the word could
# be two bands off (one agreeing pair gives "almost perfect" at a margin of
# about +-1.5).
LABEL_MARGIN = 0.2
FEW_PAIRS = "too few pairs"  # the label then (the report says why)


def kappa_margin(comparable: int, p_e: float | None) -> float | None:
    """Rough 95% half-width of kappa from ``comparable`` label pairs:
    1.96 times the largest binomial standard error of P(A), ``sqrt(0.25 / n)``
    (so that P(A) = 1 from one pair is not "certain"), over ``1 - P(E)``,
    P(E) taken as known.  The pairs of one item share labels, so the true
    margin is, if anything, wider.  None when kappa is not available."""
    if not comparable or p_e is None or p_e >= 1.0:
        return None
    return 1.96 * math.sqrt(0.25 / comparable) / (1.0 - p_e)


def describe(k: float | None, comparable: int, p_e: float | None) -> dict:
    """``label`` (Landis and Koch's word, or a warning instead of it when the
    margin is wider than LABEL_MARGIN), ``margin`` and ``few_pairs``."""
    margin = kappa_margin(comparable, p_e)
    few = k is not None and margin > LABEL_MARGIN
    label = FEW_PAIRS if few else landis_koch(k)
    return {"label": label, "margin": margin, "few_pairs": few}


def label_counts(groups: np.ndarray, labels: np.ndarray,
                 n_labels: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Count labels per group.

    Returns ``(keys, counts)``: the distinct group keys (sorted) and an
    integer matrix ``counts[g, c]`` = number of labels ``c`` in group ``g``.
    """
    groups = np.asarray(groups)
    labels = np.asarray(labels, dtype=np.int64)
    if groups.size == 0:
        return groups[:0], np.zeros((0, n_labels), dtype=np.int64)
    keys, inverse = np.unique(groups, return_inverse=True)
    flat = np.bincount(inverse.ravel() * n_labels + labels,
                       minlength=keys.size * n_labels)
    return keys, flat.reshape(keys.size, n_labels)


def agreement_counts(counts: np.ndarray) -> dict:
    """Agreeing and comparable label pairs, tie labels and labels, from a
    per-item label-count matrix (columns: second better, tie, first better).
    """
    counts = np.asarray(counts, dtype=np.int64)
    m = counts.sum(axis=1)
    return {
        "agreeing": int((counts * (counts - 1) // 2).sum()),
        "comparable": int((m * (m - 1) // 2).sum()),
        "ties": int(counts[:, TIE].sum()) if counts.size else 0,
        "labels": int(m.sum()),
    }


def wmt_kappa(agreeing: int, comparable: int, ties: int, labels: int) -> dict:
    """Kappa as computed by Appraise for WMT (P(E) from the tie rate)."""
    p_a = agreeing / comparable if comparable else None
    p_tie = ties / labels if labels else None
    p_e = None if p_tie is None else p_tie ** 2 + 2 * ((1 - p_tie) / 2) ** 2
    k = kappa(p_a, p_e)
    return {"kappa": k, "p_a": p_a, "p_e": p_e, "agreeing": agreeing,
            "comparable": comparable, "ties": ties, "labels": labels,
            **describe(k, comparable, p_e), "definition": "wmt"}


def ebaluatoia_kappa(agreeing: int, comparable: int, n_first: int, n_tie: int,
                     n_second: int) -> dict:
    """Kappa with the paper's three-outcome chance agreement."""
    labels = n_first + n_tie + n_second
    p_a = agreeing / comparable if comparable else None
    if labels:
        shares = [n / labels for n in (n_first, n_tie, n_second)]
        p_e = sum(s * s for s in shares)
    else:
        shares, p_e = [None] * 3, None
    k = kappa(p_a, p_e)
    return {"kappa": k, "p_a": p_a, "p_e": p_e, "agreeing": agreeing,
            "comparable": comparable, "ties": n_tie, "labels": labels,
            "p_first": shares[0], "p_tie": shares[1], "p_second": shares[2],
            **describe(k, comparable, p_e), "definition": "ebaluatoia"}


def ebaluatoia_overall(per_pair: list[dict]) -> dict:
    """Overall three-outcome kappa from the per-pair results.

    P(A) is pooled over all pairs.  Which system of a pair is "A" is
    arbitrary, so the three shares cannot be pooled across pairs without
    making P(E) depend on that choice; instead P(E) is the chance agreement
    expected over all comparable label pairs: the mean of the per-pair P(E)
    weighted by each pair's comparable pairs (by its labels when there are
    no comparable pairs at all).
    """
    agreeing = sum(e["agreeing"] for e in per_pair)
    comparable = sum(e["comparable"] for e in per_pair)
    ties = sum(e["ties"] for e in per_pair)
    labels = sum(e["labels"] for e in per_pair)
    weight_key = "comparable" if comparable else "labels"
    weights = [(e[weight_key], e["p_e"]) for e in per_pair if e["p_e"] is not None]
    total = sum(w for w, _ in weights)
    p_e = sum(w * pe for w, pe in weights) / total if total else None
    p_a = agreeing / comparable if comparable else None
    k = kappa(p_a, p_e)
    return {"kappa": k, "p_a": p_a, "p_e": p_e, "agreeing": agreeing,
            "comparable": comparable, "ties": ties, "labels": labels,
            **describe(k, comparable, p_e), "definition": "ebaluatoia"}


def krippendorff_alpha_nominal(counts: np.ndarray,
                               mirrored: tuple[int, int] | None = None) -> float | None:
    """Krippendorff's alpha (nominal) from a units x categories count matrix.

    Without ``mirrored`` this is the standard coefficient from the
    coincidence matrix (Krippendorff 2011; the ``krippendorff`` package).
    Units with fewer than two values are not pairable and are ignored.
    Returns None when undefined (fewer than two pairable values, or only one
    category used, so that no disagreement is possible).

    ``mirrored=(c, d)`` gives the symmetrised variant: categories c and d
    ("first system better" / "second system better") get the mean of their
    marginal totals before the expected disagreement is computed, so that
    alpha does not depend on which system of a pair is called first (as
    WMT's P(E) treats them).
    """
    counts = np.asarray(counts, dtype=np.float64)
    if counts.size == 0:
        return None
    m = counts.sum(axis=1)
    counts, m = counts[m >= 2], m[m >= 2]
    n = m.sum()
    if n < 2:
        return None
    # observed disagreement: sum over c != k of o_ck
    observed = ((m * m - (counts * counts).sum(axis=1)) / (m - 1)).sum()
    n_c = counts.sum(axis=0)
    if mirrored is not None:
        c, d = mirrored
        n_c[c] = n_c[d] = (n_c[c] + n_c[d]) / 2.0
    expected = n * n - (n_c * n_c).sum()          # sum over c != k of n_c n_k
    if expected <= 0:
        return None
    return float(1.0 - (n - 1) * observed / expected)


def intra_counts(judge: np.ndarray, item: np.ndarray, sentence: np.ndarray,
                 labels: np.ndarray) -> dict | None:
    """Counts behind intra-annotator kappa, or None if no judge labelled an
    item twice.

    P(A) uses the pairs of labels a judge gave to the same item.  As in
    Appraise's ``--intra`` mode, P(tie) is taken over all labels that judge
    gave within the source sentences where they repeated an item.
    """
    judge = np.asarray(judge, dtype=np.int64)
    item = np.asarray(item, dtype=np.int64)
    sentence = np.asarray(sentence, dtype=np.int64)
    labels = np.asarray(labels, dtype=np.int64)
    if judge.size == 0:
        return None
    n_items = int(item.max()) + 1
    ji = judge * n_items + item
    keys, inverse = np.unique(ji, return_inverse=True)
    per_group = np.bincount(inverse.ravel())
    repeated = per_group >= 2
    if not repeated.any():
        return None
    _, counts = label_counts(ji[repeated[inverse]], labels[repeated[inverse]])
    pairs = agreement_counts(counts)
    n_sent = int(sentence.max()) + 1
    js = judge * n_sent + sentence
    marked = np.unique(js[repeated[inverse]])
    scope = np.isin(js, marked)
    pairs["ties"] = int((labels[scope] == TIE).sum())
    pairs["labels"] = int(scope.sum())
    return pairs


def different_judge_counts(judge: np.ndarray, item: np.ndarray,
                           labels: np.ndarray) -> dict:
    """Counts behind the inter-annotator kappa of different judges only.

    P(A) uses the pairs of labels given to one item by two different judges
    (Appraise's script also pairs a judge's own repeated labels); P(tie) is
    taken over all labels, as for :func:`wmt_kappa`.  ``item`` codes should
    be small integers (``np.unique``'s inverse).
    """
    judge = np.asarray(judge, dtype=np.int64)
    item = np.asarray(item, dtype=np.int64)
    _, per_item = label_counts(item, labels)
    every = agreement_counts(per_item)
    if item.size == 0:
        return every
    _, per_judge_item = label_counts(judge * (int(item.max()) + 1) + item, labels)
    own = agreement_counts(per_judge_item)
    every["agreeing"] -= own["agreeing"]
    every["comparable"] -= own["comparable"]
    return every


# --------------------------------------------------------------------------
# applied to loaded judgments


def _item_codes(data) -> tuple[np.ndarray, np.ndarray]:
    """Per-row item code (sentence, first, second) and canonical pair code."""
    k = len(data.systems)
    first = data.first.astype(np.int64)
    second = data.second.astype(np.int64)
    item = (data.sentence.astype(np.int64) * k + first) * k + second
    pair = np.minimum(first, second) * k + np.maximum(first, second)
    return item, pair


def with_repeats(data, item: np.ndarray, labels: np.ndarray):
    """(judge, item, sentence, label) arrays of ``data``'s rows followed by
    its repeats (``data.repeats``: a Bozka export's repeat rows, which are
    no judgment of the systems), for :func:`intra_counts`.  Items are coded
    as :func:`_item_codes` codes them; a repeat whose original is not in
    ``data`` (left out) has nothing to agree with and is dropped."""
    repeats = data.repeats
    systems = {name: n for n, name in enumerate(data.systems)}
    sentences = {name: n for n, name in enumerate(data.sentences)}
    judges = {name: n for n, name in enumerate(data.judges)}
    k = len(data.systems)
    extra = []
    for judge, sentence, sys_a, sys_b, outcome in repeats:
        codes = (judges.get(judge), sentences.get(sentence), systems.get(sys_a), systems.get(sys_b))
        if None in codes:
            continue
        j, s, a, b = codes
        if a > b:       # the canonical order of a Bozka export's pairs
            a, b, outcome = b, a, -outcome
        extra.append((j, (s * k + a) * k + b, s, outcome + 1))
    if not extra:
        return data.judge, item, data.sentence, labels
    j, i, s, lab = (np.asarray(column, dtype=np.int64) for column in zip(*extra))
    return (np.concatenate([data.judge, j]), np.concatenate([item, i]),
            np.concatenate([data.sentence, s]), np.concatenate([labels, lab]))


def agreement(data) -> dict:
    """All agreement figures for ``data`` (a reading.Judgments).

    Returns a dict with ``inter`` (WMT definition), ``inter_ebaluatoia``,
    ``intra`` (None when no judge repeated an item; a Bozka export's repeats
    count here only), ``krippendorff_alpha``
    (the standard nominal alpha), ``krippendorff_alpha_symmetrised`` and
    ``by_pair`` (a list, one entry per observed system pair, canonical order).
    """
    k = len(data.systems)
    labels = data.outcome.astype(np.int64) + 1
    # orientation to the canonical pair, for the three-outcome P(E)
    oriented = np.where(data.first > data.second, 2 - labels, labels)
    item, pair = _item_codes(data)

    item_keys, counts = label_counts(item, labels)
    _, oriented_counts = label_counts(item, oriented)
    # canonical pair of every item, recovered from its key
    item_first = (item_keys // k) % k
    item_second = item_keys % k
    item_pair = np.minimum(item_first, item_second) * k + \
        np.maximum(item_first, item_second)

    overall = agreement_counts(counts)
    inter = wmt_kappa(**overall)

    # per system pair, from per-item figures
    m = counts.sum(axis=1)
    item_agree = (counts * (counts - 1) // 2).sum(axis=1)
    item_comp = m * (m - 1) // 2
    pair_keys, pair_inv = np.unique(item_pair, return_inverse=True)
    pair_inv = pair_inv.ravel()

    def per_pair(values):
        return np.bincount(pair_inv, weights=values,
                           minlength=pair_keys.size).round().astype(np.int64)

    p_agree, p_comp = per_pair(item_agree), per_pair(item_comp)
    p_ties, p_labels = per_pair(counts[:, TIE]), per_pair(m)
    p_first = per_pair(oriented_counts[:, FIRST])
    p_second = per_pair(oriented_counts[:, SECOND])
    by_pair = []
    for n, key in enumerate(pair_keys):
        a, b = divmod(int(key), k)
        entry = {"systems": [data.systems[a], data.systems[b]]}
        entry.update(wmt_kappa(int(p_agree[n]), int(p_comp[n]),
                               int(p_ties[n]), int(p_labels[n])))
        entry["ebaluatoia"] = ebaluatoia_kappa(
            int(p_agree[n]), int(p_comp[n]), int(p_first[n]), int(p_ties[n]),
            int(p_second[n]))
        by_pair.append(entry)

    inter_e = ebaluatoia_overall([e["ebaluatoia"] for e in by_pair])
    # the findings papers' wording: two judges, one sentence, one system
    # pair, whichever system was shown first (labels turned to match)
    _, pair_item = np.unique(data.sentence.astype(np.int64) * k * k + pair,
                             return_inverse=True)
    different = wmt_kappa(**different_judge_counts(data.judge, pair_item.ravel(),
                                                   oriented))
    different["definition"] = "wmt, different judges, either order"
    judge, intra_item, sentence, intra_labels = with_repeats(data, item, labels)
    _, item_index = np.unique(intra_item, return_inverse=True)
    intra = intra_counts(judge, item_index.ravel(), sentence, intra_labels)
    return {
        "inter": inter,
        "inter_ebaluatoia": inter_e,
        "inter_different_judges": different,
        "intra": None if intra is None else wmt_kappa(**intra),
        "krippendorff_alpha": krippendorff_alpha_nominal(counts),
        "krippendorff_alpha_symmetrised": krippendorff_alpha_nominal(
            counts, mirrored=(FIRST, SECOND)),
        "by_pair": by_pair,
    }
