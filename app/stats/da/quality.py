"""Direct Assessment judge quality control, as WMT runs it.

For each judge, the bad-reference scores are paired with the scores the
same judge gave the originals they degrade (``DAScores.original``), and a
one-sided paired test asks whether the bad references were scored lower:

* ``"t"`` (default): the paired t-test behind WMT's released per-worker
  statistics (``ad-trk-stats``), R's ``t.test(bad, original, paired = TRUE,
  alternative = "less")``; the statistic is t of the differences
  bad - original (negative when bad references score lower).
* ``"wilcoxon"``: Graham et al.'s paired Wilcoxon signed-rank test, R's
  ``wilcox.test(bad, original, paired = TRUE, alternative = "less")``; the
  statistic is V, the rank sum of the positive differences.

A judge passes at p <= 0.05 (WMT's filter keeps p <= 0.05).  All differences
equal (no spread) cannot be tested: R's t-test stops or gives NaN and WMT
leaves such a worker out, so they fail here too.  A judge with fewer than
``min_pairs`` bad-reference pairs (or fewer than the test needs to be able to
pass at all) is untested and kept.  See docs/analysis.md, "Direct Assessment
campaigns", and scripts/bench/simulate_da_qc.py for the default.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import ttest_1samp, wilcoxon

from .loader import BAD_REFERENCE, KINDS, REPEAT

__all__ = ["DEFAULT_MIN_PAIRS", "DEFAULT_TEST", "TESTS", "THRESHOLD", "judge_quality",
           "min_pairs_for", "paired_test", "quality_notes", "quality_summary", "smallest_passing"]

#: test name -> what the report calls it
TESTS = {
    "t": "one-sided paired t-test of bad-reference scores against their originals (WMT)",
    "wilcoxon": "one-sided paired Wilcoxon signed-rank test of bad-reference scores "
                "against their originals (Graham et al.)",
}
STATISTIC = {"t": "t", "wilcoxon": "V"}
DEFAULT_TEST = "t"
THRESHOLD = 0.05
# The fewest bad-reference pairs before a judge is tested, per test: the smallest
# number at which the simulated honest judge is dropped at most 5 % of the time
# (scripts/bench/simulate_da_qc.py; docs/analysis.md).  WMT's HITs give every
# worker 10 pairs, so WMT's workers are all tested.
DEFAULT_MIN_PAIRS = {"t": 8, "wilcoxon": 9}


def smallest_passing(test: str, threshold: float = THRESHOLD) -> int:
    """The fewest pairs with which ``test`` can give p <= ``threshold``: 2 for
    the t-test; for the signed-rank test the n with 2**-n <= threshold, the
    exact test's smallest p (5 at 0.05; only tied drops pass with fewer)."""
    if test == "t":
        return 2
    return max(1, math.ceil(-math.log2(threshold) - 1e-12))


def paired_test(bad, original, test: str = DEFAULT_TEST) -> tuple[float | None, float | None]:
    """(statistic, p) of "bad references score lower than their originals",
    or (None, None) when the test cannot be computed: fewer than two pairs; for
    the t-test all differences equal; for the signed-rank test all of them 0.

    The signed-rank test follows R: zero differences are dropped; exact when
    fewer than 50 remain and none are tied, otherwise the normal approximation
    with tie and continuity corrections.
    """
    d = np.asarray(bad, dtype=float) - np.asarray(original, dtype=float)
    if test not in TESTS:
        raise ValueError(f"judge test must be one of {', '.join(TESTS)}, not {test!r}")
    if d.size < 2:
        return None, None
    if test == "t":
        if np.all(d == d[0]):       # R: "data are essentially constant" or NaN
            return None, None
        r = ttest_1samp(d, 0.0, alternative="less")
        return float(r.statistic), float(r.pvalue)
    nonzero = d[d != 0]
    if nonzero.size == 0:
        return None, None
    exact = nonzero.size < 50 and nonzero.size == d.size and \
        np.unique(np.abs(nonzero)).size == nonzero.size
    r = wilcoxon(d, zero_method="wilcox", correction=True, alternative="less",
                 method="exact" if exact else "approx")
    return float(r.statistic), float(r.pvalue)


def min_pairs_for(test: str, min_pairs: int | None = None,
                  threshold: float = THRESHOLD) -> int:
    """The pairs a judge needs to be tested: ``min_pairs`` (the test's default
    when None), and never fewer than the test needs to be able to pass."""
    if test not in TESTS:
        raise ValueError(f"judge test must be one of {', '.join(TESTS)}, not {test!r}")
    wanted = DEFAULT_MIN_PAIRS[test] if min_pairs is None else int(min_pairs)
    return max(wanted, smallest_passing(test, threshold))


def judge_quality(data, test: str = DEFAULT_TEST, min_pairs: int | None = None,
                  threshold: float = THRESHOLD) -> list[dict]:
    """One entry per judge (in ``data.judges`` order): scores, the pairs,
    ``statistic`` and ``p`` of the paired test (None when untested or not
    computable), ``status`` (reliable, unreliable, untested) and mean score per
    kind of item.  ``min_pairs`` as in :func:`min_pairs_for`."""
    need = min_pairs_for(test, min_pairs, threshold)
    k = len(data.judges)
    key = data.judge.astype(np.int64) * len(KINDS) + data.kind
    count = np.bincount(key, minlength=k * len(KINDS)).reshape(k, len(KINDS))
    total = np.bincount(key, weights=data.score,
                        minlength=k * len(KINDS)).reshape(k, len(KINDS))
    paired = data.original >= 0
    bad = np.flatnonzero(paired & (data.kind == BAD_REFERENCE))
    bad = bad[np.argsort(data.judge[bad], kind="stable")]
    bounds = np.searchsorted(data.judge[bad], np.arange(k + 1))
    repeats = np.bincount(data.judge[paired & (data.kind == REPEAT)], minlength=k)
    out = []
    for j, name in enumerate(data.judges):
        rows = bad[bounds[j]:bounds[j + 1]]
        statistic = p = None
        if rows.size < need:
            status = "untested"
        else:
            statistic, p = paired_test(data.score[rows], data.score[data.original[rows]], test)
            status = "reliable" if p is not None and p <= threshold else "unreliable"
        out.append({
            "judge": name, "scores": int(count[j].sum()),
            "bad_reference_pairs": int(rows.size), "repeat_pairs": int(repeats[j]),
            "statistic": statistic, "p": p, "status": status,
            "mean_by_kind": {kind_name: float(total[j, c] / count[j, c]) if count[j, c]
                             else None for c, kind_name in enumerate(KINDS)},
        })
    return out


def quality_summary(judges, test: str, min_pairs: int | None, threshold: float,
                    keep_unreliable: bool) -> dict:
    """The quality-control table in WMT's form (per judge: pairs, statistic,
    p, kept) with its settings and counts; ``judges`` carry ``kept``."""
    return {
        "test": test, "description": TESTS[test], "statistic": STATISTIC[test],
        "threshold": threshold, "min_pairs": min_pairs_for(test, min_pairs, threshold),
        "keep_unreliable": keep_unreliable,
        "judges": len(judges),
        "tested": sum(e["status"] != "untested" for e in judges),
        "untested": sum(e["status"] == "untested" for e in judges),
        "failed": sum(e["status"] == "unreliable" for e in judges),
        "left_out": sum(not e["kept"] for e in judges),
        "table": [{"judge": e["judge"], "pairs": e["bad_reference_pairs"],
                   "statistic": e["statistic"], "p": e["p"], "status": e["status"],
                   "kept": e["kept"]} for e in judges],
    }


def quality_notes(data, summary, names) -> list[str]:
    """The notes on quality control; ``names`` shortens a list of judges."""
    notes = []
    failed = [row["judge"] for row in summary["table"] if row["status"] == "unreliable"]
    if failed:
        what = "kept on request" if summary["keep_unreliable"] else "left out"
        notes.append(f"{len(failed)} of {summary['tested']} tested judge(s) {what} "
                     f"(quality control p > {summary['threshold']} or not computable): "
                     f"{names(failed)}")
    if summary["untested"]:
        notes.append(f"{summary['untested']} judge(s) untested (fewer than "
                     f"{summary['min_pairs']} bad-reference pairs) and kept")
    paired_kinds = (data.kind == REPEAT) | (data.kind == BAD_REFERENCE)
    unmatched = int((paired_kinds & (data.original < 0)).sum())
    if unmatched:
        notes.append(f"{unmatched} repeat or bad-reference item(s) without their "
                     "original system score: not used in quality control")
    return notes
