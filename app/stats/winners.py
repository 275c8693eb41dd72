"""Per-sentence winners and significance tests for each system pair.

Per-sentence winner (the paper's section 4.2)
    For a pair (A, B) and a source sentence, count the judgments preferring
    A and those preferring B ("equal" judgments are no vote).  With
    ``d = votes(A) - votes(B)``: ``A++`` if ``d > 2``, ``A+`` if ``d`` is 1
    or 2, ``equal`` if ``d = 0``, ``B+`` if ``d`` is -1 or -2, ``B++`` if
    ``d < -2``.

Significance, per pair, in three units
    ``margins`` (the default): each sentence's judgment margin
    ``d = votes(A) - votes(B)`` (ties count for neither), tested by the exact
    sentence-level sign-flip test (:func:`flip_test`): under H0 each
    sentence's margin is as likely to be ``-d`` as ``d``, so the judgments of
    one sentence may be correlated; it uses margins and ties, and with one
    decisive judgment per sentence it is the exact sign test.
    ``items``: the sentences won by each system (ties excluded), i.e. the
    per-sentence winners; ``judgments``: the judgments preferring each
    system (ties excluded), descriptive only: it treats the judgments of one
    sentence as independent, so it gets no verdict.  With ``a`` and ``b`` the
    counts of A and B in these two units and ``n = a + b``:

    * the exact two-sided binomial (sign) test of ``a`` successes in ``n``
      trials with probability 1/2: ``p = min(1, 2 P(X <= min(a, b)))``,
      what ``scipy.stats.binomtest`` gives, since for probability 1/2 the
      two tails are mirror images;
    * z-test (default form ``binomial``): the normal approximation to the
      binomial under H0 "each decisive unit goes to A with probability
      1/2": ``z = (a - b) / sqrt(n)``, two-sided ``p = 2 * (1 - Phi(|z|))``,
      no continuity correction (as in the paper);
    * form ``two-proportion``: the pooled two-sample test of a/n against
      b/n, ``z = (a - b) * sqrt(2 / n)``.  It treats the two complementary
      shares as independent samples, which inflates z by sqrt(2); it is
      offered only to compare with analyses done that way.
    * ``continuity=True`` moves |a - b| one step towards 0 before either
      form (the binomial's continuity correction).

    With ``n = 0`` there is no evidence either way: z = 0 and p = 1.

Holm correction
    Step-down Holm-Bonferroni over all m tested pairs, within each unit
    and test:
    with p-values sorted increasingly, ``p_(i)`` becomes
    ``max_{j <= i} min(1, (m - j + 1) p_(j))``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

__all__ = [
    "CATEGORIES",
    "CORRECTIONS",
    "TESTS",
    "UNITS",
    "VERDICT_UNITS",
    "flip_test",
    "holm",
    "pair_tables",
    "sentence_categories",
    "sign_test",
    "significance",
    "z_test",
]

#: category codes, in display order (A is the pair's first system)
CATEGORIES = ("A++", "A+", "equal", "B+", "B++")
#: tests of the items and judgments units (the margins unit has its own)
TESTS = ("sign", "z")
CORRECTIONS = ("holm", "none")
#: what a test counts: per-sentence judgment margins, per-sentence winners
#: or single judgments
UNITS = ("margins", "items", "judgments")
#: units whose test stays valid when judgments of one sentence are
#: correlated: the only ones that may decide significance and the ordering
VERDICT_UNITS = ("margins", "items")


def sentence_categories(votes_a, votes_b) -> np.ndarray:
    """Category index (into CATEGORIES) of each sentence from its votes."""
    d = np.asarray(votes_a, dtype=np.int64) - np.asarray(votes_b, dtype=np.int64)
    out = np.full(d.shape, 2, dtype=np.int64)
    out[d > 2] = 0
    out[(d >= 1) & (d <= 2)] = 1
    out[(d <= -1) & (d >= -2)] = 3
    out[d < -2] = 4
    return out


def z_test(wins_a: int, wins_b: int, form: str = "binomial",
           continuity: bool = False) -> tuple[float, float]:
    """Two-sided z-test on decisive units; returns ``(z, p)``.

    ``z > 0`` means A won more.  See the module docstring.
    """
    n = wins_a + wins_b
    if n == 0:
        return 0.0, 1.0
    diff = wins_a - wins_b
    if continuity:
        diff = math.copysign(max(abs(diff) - 1, 0), diff)
    if form == "binomial":
        z = diff / math.sqrt(n)
    elif form == "two-proportion":
        z = diff * math.sqrt(2.0 / n)
    else:
        raise ValueError(f"unknown z-test form {form!r}")
    # erfc(|z| / sqrt 2) is 2 * (1 - Phi(|z|)), without scipy's per-call cost
    return z, math.erfc(abs(z) / math.sqrt(2.0))


def sign_test(wins_a: int, wins_b: int) -> float:
    """Exact two-sided binomial (sign) test p-value, ties already dropped."""
    n = wins_a + wins_b
    if n == 0:
        return 1.0
    # binomtest searches for the other tail (ms per call); here it mirrors
    return min(1.0, 2.0 * float(special.bdtr(min(wins_a, wins_b), n, 0.5)))


def flip_test(sizes, margin: int) -> float:
    """Exact two-sided p of the sentence-level sign-flip test.

    ``sizes`` maps each nonzero |margin| of a sentence to how many sentences
    have it; ``margin`` is the sum of the signed margins (votes(A) -
    votes(B) over all sentences).  p is the share of the 2^n sign patterns
    whose sum is at least as far from 0, from the exact distribution of the
    sum (no sampling): the binomial of the commonest size, then one
    two-point convolution per other sentence.
    """
    groups = sorted(((int(d), int(k)) for d, k in dict(sizes).items() if k),
                    key=lambda g: -g[1])
    if not groups:
        return 1.0
    # the largest group at once: d * (2 X - k), X ~ Bin(k, 1/2), on every 2d-th point
    size, count = groups[0]
    pmf = np.zeros(2 * size * count + 1)
    pmf[::2 * size] = stats.binom.pmf(np.arange(count + 1), count, 0.5)
    for size, count in groups[1:]:
        for _ in range(count):      # one sentence: half its mass moves each way
            wider = np.zeros(pmf.size + 2 * size)
            wider[:pmf.size] += pmf
            wider[2 * size:] += pmf
            pmf = wider * 0.5
    reach = (pmf.size - 1) // 2
    sums = np.abs(np.arange(-reach, reach + 1))
    return min(1.0, float(pmf[sums >= abs(margin)].sum()))


def holm(pvalues) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the input order."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.maximum.accumulate(scaled)
    out = np.empty(m)
    out[order] = adjusted
    return out.tolist()


def pair_tables(data) -> list[dict]:
    """Judgment and per-sentence counts for every observed system pair.

    ``data`` is a reading.Judgments.  Pairs are in canonical order (the
    system whose name sorts first is A).  Each entry: ``systems``,
    ``judgments``, ``wins`` (judgment level), ``ties``, ``sentences``
    (counts per category code, ``A++`` .. ``B++``, A the pair's first system),
    ``sentence_wins`` and ``margin_sizes`` (``[[|d|, sentences], ...]`` for
    each nonzero per-sentence margin size, what :func:`flip_test` needs).
    """
    k = len(data.systems)
    first = data.first.astype(np.int64)
    second = data.second.astype(np.int64)
    lo, hi = np.minimum(first, second), np.maximum(first, second)
    # outcome from the point of view of the canonical first system
    o = np.where(first <= second, data.outcome, -data.outcome).astype(np.int64)
    pair = lo * k + hi
    n_pairs = k * k
    wins_a = np.bincount(pair, weights=(o == 1), minlength=n_pairs)
    wins_b = np.bincount(pair, weights=(o == -1), minlength=n_pairs)
    ties = np.bincount(pair, weights=(o == 0), minlength=n_pairs)

    # votes per (pair, sentence) group
    group = pair * (len(data.sentences) or 1) + data.sentence.astype(np.int64)
    keys, inverse = np.unique(group, return_inverse=True)
    inverse = inverse.ravel()
    votes_a = np.bincount(inverse, weights=(o == 1), minlength=keys.size)
    votes_b = np.bincount(inverse, weights=(o == -1), minlength=keys.size)
    category = sentence_categories(votes_a, votes_b)
    group_pair = keys // (len(data.sentences) or 1)
    # sentences per (pair, |margin|): the margins unit's flip test needs no more
    size = np.abs(votes_a - votes_b).astype(np.int64)
    widest = int(size.max(initial=0)) + 1
    sizes = np.bincount(group_pair * widest + size,
                        minlength=n_pairs * widest).reshape(n_pairs, widest)
    table = np.bincount(group_pair * 5 + category,
                        minlength=n_pairs * 5).reshape(n_pairs, 5)

    tables = []
    for code in np.flatnonzero(wins_a + wins_b + ties):
        a, b = divmod(int(code), k)
        name_a, name_b = data.systems[a], data.systems[b]
        row = table[code]
        tables.append({
            "systems": [name_a, name_b],
            "judgments": int(wins_a[code] + wins_b[code] + ties[code]),
            "wins": {name_a: int(wins_a[code]), name_b: int(wins_b[code])},
            "ties": int(ties[code]),
            # Keyed by category code (A: the first of "systems"): keys made
            # from names would collide for systems named "X" and "X+".
            "sentences": dict(zip(CATEGORIES, (int(n) for n in row))),
            "sentence_count": int(row.sum()),
            "sentence_wins": {name_a: int(row[0] + row[1]),
                              name_b: int(row[3] + row[4])},
            "margin_sizes": [[d, int(n)] for d, n in enumerate(sizes[code])
                             if d and n],
        })
    return tables


# flat keys of the earlier schema, kept: (unit, test) -> key
_FLAT = {("margins", "flip"): "margin_p",
         ("items", "z"): "p_value", ("items", "sign"): "sign_test_p",
         ("judgments", "z"): "judgment_p_value",
         ("judgments", "sign"): "judgment_sign_test_p"}


def _unit_tests(a: str, b: str, wins_a: int, wins_b: int, z_form: str) -> dict:
    z, p_z = z_test(wins_a, wins_b, z_form)
    return {"wins": {a: wins_a, b: wins_b}, "z": z, "p_z": p_z,
            "p_sign": sign_test(wins_a, wins_b)}


def _margin_tests(entry: dict) -> dict:
    a, b = entry["systems"]
    margin = entry["wins"][a] - entry["wins"][b]
    return {"wins": dict(entry["wins"]), "margin": margin,
            "sentences": sum(n for _, n in entry["margin_sizes"]),
            "p_flip": flip_test(dict(entry["margin_sizes"]), margin)}


def significance(tables: list[dict], *, alpha: float = 0.05, test: str = "sign",
                 correction: str = "holm", unit: str = "margins",
                 z_form: str = "binomial") -> list[dict]:
    """Add significance figures to the entries of :func:`pair_tables`.

    Adds ``units``: ``margins`` (``wins``, ``margin``, ``sentences`` with a
    nonzero margin, ``p_flip``), ``items`` (sentences won) and ``judgments``
    (``wins``, ``z``, ``p_z``, ``p_sign``); each with ``_holm`` versions when
    ``correction`` is ``"holm"`` (Holm within the unit) and ``p``: the
    p-value that unit's verdict would use (``p_flip`` for margins, that of
    ``test`` for the others, after the correction).  ``margins`` and
    ``items`` also get ``significant`` and ``better``; ``judgments`` gets
    none, its p-values are descriptive (the test assumes independent
    judgments).  Also ``p_margins``, ``p_items``, ``p_judgments`` (each
    unit's ``p``), ``significant``, ``better`` and ``decided_by`` for the
    ``unit`` the ordering uses, and the flat keys of the earlier schema
    (``z``, ``p_value``, ``sign_test_p``, ``judgment_z``, ... ``_holm``) plus
    ``margin_p`` (``_holm``).
    """
    for name, value, allowed in (("test", test, TESTS), ("correction", correction,
                                 CORRECTIONS), ("unit", unit, VERDICT_UNITS)):
        if value not in allowed:
            raise ValueError(f"unknown {name} {value!r}")
    out = []
    for entry in tables:
        a, b = entry["systems"]
        counts = {"items": entry["sentence_wins"], "judgments": entry["wins"]}
        new = dict(entry)
        new["units"] = {"margins": _margin_tests(entry)}
        new["units"].update({u: _unit_tests(a, b, counts[u][a], counts[u][b], z_form)
                             for u in ("items", "judgments")})
        out.append(new)

    suffix = "_holm" if correction == "holm" else ""
    for u in UNITS:
        tests = [e["units"][u] for e in out]
        names = ("p_flip",) if u == "margins" else ("p_z", "p_sign")
        if suffix:
            for name in names:
                for t, adjusted in zip(tests, holm([t[name] for t in tests])):
                    t[name + "_holm"] = adjusted
        decisive = ("p_flip" if u == "margins" else f"p_{test}") + suffix
        for entry, t in zip(out, tests):
            t["p"] = t[decisive]
            if u not in VERDICT_UNITS:
                continue
            a, b = entry["systems"]
            wa, wb = t["wins"][a], t["wins"][b]
            t["significant"] = bool(t["p"] < alpha and wa != wb)
            t["better"] = (a if wa > wb else b) if t["significant"] else None

    for entry in out:
        units = entry["units"]
        entry["z"], entry["judgment_z"] = units["items"]["z"], units["judgments"]["z"]
        for (u, t), key in _FLAT.items():
            entry[key] = units[u][f"p_{t}"]
            if suffix:
                entry[key + suffix] = units[u][f"p_{t}{suffix}"]
        for u in UNITS:
            entry[f"p_{u}"] = units[u]["p"]
        entry["significant"] = units[unit]["significant"]
        entry["better"] = units[unit]["better"]
        entry["decided_by"] = _FLAT[(unit, "flip" if unit == "margins" else test)] + suffix
    return out
