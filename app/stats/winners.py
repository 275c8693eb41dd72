"""Per-sentence winners and significance tests for each system pair.

Per-sentence winner (the paper's section 4.2)
    For a pair (A, B) and a source sentence, count the judgments preferring
    A and those preferring B ("equal" judgments are no vote).  With
    ``d = votes(A) - votes(B)``: ``A++`` if ``d > 2``, ``A+`` if ``d`` is 1
    or 2, ``equal`` if ``d = 0``, ``B+`` if ``d`` is -1 or -2, ``B++`` if
    ``d < -2``.

Significance, on the sentences won by each system (ties excluded)
    With ``a`` and ``b`` the sentences won by A and by B and ``n = a + b``:

    * z-test (default form ``binomial``): the normal approximation to the
      binomial under H0 "each decisive sentence is won by A with
      probability 1/2": ``z = (a - b) / sqrt(n)``, two-sided
      ``p = 2 * (1 - Phi(|z|))``, no continuity correction.
    * form ``two-proportion``: the pooled two-sample test of a/n against
      b/n, ``z = (a - b) * sqrt(2 / n)``.  It treats the two complementary
      shares as independent samples, which inflates z by sqrt(2); it is
      offered only to compare with analyses done that way.
    * the exact two-sided binomial (sign) test of ``a`` successes in ``n``
      trials with probability 1/2 (``scipy.stats.binomtest``).

    With ``n = 0`` there is no evidence either way: z = 0 and p = 1.

Holm correction
    Step-down Holm-Bonferroni over all m tested pairs: with p-values sorted
    increasingly, ``p_(i)`` becomes ``max_{j <= i} min(1, (m - j + 1) p_(j))``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

__all__ = [
    "CATEGORIES",
    "holm",
    "pair_tables",
    "sentence_categories",
    "sign_test",
    "significance",
    "z_test",
]

#: category codes, in display order (A is the pair's first system)
CATEGORIES = ("A++", "A+", "equal", "B+", "B++")


def sentence_categories(votes_a, votes_b) -> np.ndarray:
    """Category index (into CATEGORIES) of each sentence from its votes."""
    d = np.asarray(votes_a, dtype=np.int64) - np.asarray(votes_b, dtype=np.int64)
    out = np.full(d.shape, 2, dtype=np.int64)
    out[d > 2] = 0
    out[(d >= 1) & (d <= 2)] = 1
    out[(d <= -1) & (d >= -2)] = 3
    out[d < -2] = 4
    return out


def z_test(wins_a: int, wins_b: int, form: str = "binomial") -> tuple[float, float]:
    """Two-sided z-test on decisive sentences; returns ``(z, p)``.

    ``z > 0`` means A won more sentences.  See the module docstring.
    """
    n = wins_a + wins_b
    if n == 0:
        return 0.0, 1.0
    if form == "binomial":
        z = (wins_a - wins_b) / math.sqrt(n)
    elif form == "two-proportion":
        z = (wins_a - wins_b) * math.sqrt(2.0 / n)
    else:
        raise ValueError(f"unknown z-test form {form!r}")
    return z, float(2.0 * stats.norm.sf(abs(z)))


def sign_test(wins_a: int, wins_b: int) -> float:
    """Exact two-sided binomial (sign) test p-value, ties already dropped."""
    n = wins_a + wins_b
    if n == 0:
        return 1.0
    return float(stats.binomtest(int(wins_a), int(n), 0.5).pvalue)


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

    ``data`` is a loader.Judgments.  Pairs are in canonical order (the
    system whose name sorts first is A).  Each entry: ``systems``,
    ``judgments``, ``wins`` (judgment level), ``ties``, ``sentences``
    (counts per category, keyed with the real names, e.g. ``Google++``)
    and ``sentence_wins``.
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
            "sentences": {f"{name_a}++": int(row[0]), f"{name_a}+": int(row[1]),
                          "equal": int(row[2]), f"{name_b}+": int(row[3]),
                          f"{name_b}++": int(row[4])},
            "sentence_count": int(row.sum()),
            "sentence_wins": {name_a: int(row[0] + row[1]),
                              name_b: int(row[3] + row[4])},
        })
    return tables


def significance(tables: list[dict], *, alpha: float = 0.05, use_holm: bool = False,
               test: str = "z", z_form: str = "binomial") -> list[dict]:
    """Add significance figures to the entries of :func:`pair_tables`.

    Adds ``z``, ``p_value`` (z-test on sentences won), ``sign_test_p``,
    their Holm-adjusted versions when ``use_holm``, the same tests at
    judgment level (``judgment_z``, ``judgment_p_value``,
    ``judgment_sign_test_p``), ``significant`` (decided by ``test``: ``"z"``
    or ``"sign"``, after Holm when requested, at level ``alpha``) and
    ``better`` (the significantly better system, or None).
    """
    if test not in ("z", "sign"):
        raise ValueError(f"unknown test {test!r}")
    out = []
    for entry in tables:
        a, b = entry["systems"]
        sa, sb = entry["sentence_wins"][a], entry["sentence_wins"][b]
        ja, jb = entry["wins"][a], entry["wins"][b]
        z, p = z_test(sa, sb, z_form)
        jz, jp = z_test(ja, jb, z_form)
        new = dict(entry)
        new.update({"z": z, "p_value": p, "sign_test_p": sign_test(sa, sb),
                    "judgment_z": jz, "judgment_p_value": jp,
                    "judgment_sign_test_p": sign_test(ja, jb)})
        out.append(new)
    key = "p_value" if test == "z" else "sign_test_p"
    if use_holm:
        for name in ("p_value", "sign_test_p"):
            for entry, adj in zip(out, holm([e[name] for e in out])):
                entry[name + "_holm"] = adj
        key += "_holm"
    for entry in out:
        a, b = entry["systems"]
        sa, sb = entry["sentence_wins"][a], entry["sentence_wins"][b]
        entry["significant"] = bool(entry[key] < alpha and sa != sb)
        entry["better"] = (a if sa > sb else b) if entry["significant"] else None
        entry["decided_by"] = key
    return out
