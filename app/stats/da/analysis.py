"""Direct Assessment analysis, as Graham et al. and WMT do it.

1. Judges (``quality``).  WMT's quality control: a one-sided paired test
   of each judge's bad-reference scores against their scores of the same
   originals (WMT's t-test by default, Graham et al.'s signed-rank test as an
   option); judges at p > 0.05 are left out.  A judge with fewer
   bad-reference pairs than the minimum is untested and kept.
2. Standardisation.  Each kept judge's scores become z scores with that
   judge's mean and standard deviation (n-1) over all their scores, every
   kind of item included (WMT's rule; ``z_over="system"`` uses system items
   only, as WMT's Appraise script does).
3. Systems.  The score of a segment (system + sentence) is the mean of its
   system and repeat scores, rounded to 1e-9; a system's score is the mean
   over its segments (micro average), raw and z, with a judge-level
   bootstrap interval of z.
4. Significance.  For every ordered pair (A, B), a one-sided Wilcoxon
   rank-sum test of A's segment z scores against B's; Holm over the system
   pairs by default (``correction="none"``: WMT's uncorrected matrix).
5. Clusters.  Systems in z order, WMT21's rule or WMT22's
   (``significance.wmt_clusters``), on the uncorrected tests as WMT ran
   them (the published clusters), whatever the correction.

See docs/analysis.md, "Direct Assessment campaigns".
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import mannwhitneyu

from .loader import REPEAT, SYSTEM
from .quality import DEFAULT_TEST, judge_quality, quality_notes, quality_summary
from .significance import (CLUSTER_RULES, CORRECTIONS, holm_matrix, judge_bootstrap,
                              wins, wmt_clusters)

__all__ = ["analyse_da", "rank_sum_greater", "segment_scores",
           "standardise", "wmt_clusters"]

Z95 = 1.959963984540054
# segment means are rounded to this many decimals before ranking, so that
# means equal in exact arithmetic tie whatever the order of summation
DIGITS = 9


# --------------------------------------------------------------------------
# the test


def rank_sum_greater(x, y) -> float | None:
    """p-value of "``x`` tends to be greater than ``y``" (one-sided Wilcoxon
    rank-sum / Mann-Whitney test), None when a sample is empty.

    As R's ``wilcox.test(x, y, alternative = "greater")``, which WMT uses:
    exact when both samples have fewer than 50 values and no ties, otherwise
    the normal approximation with tie and continuity corrections (scipy's
    own "auto" switches to the approximation at 8 values, so it is chosen here).
    Values are rounded to ``DIGITS`` decimals first (deterministic ties).
    """
    x, y = np.round(np.asarray(x, dtype=float), DIGITS), np.round(np.asarray(y, dtype=float), DIGITS)
    if x.size == 0 or y.size == 0:
        return None
    both = np.concatenate([x, y])
    if np.unique(both).size == 1:       # every value tied: no evidence either way
        return 1.0
    exact = x.size < 50 and y.size < 50 and np.unique(both).size == both.size
    return float(mannwhitneyu(x, y, alternative="greater", use_continuity=True,
                              method="exact" if exact else "asymptotic").pvalue)


# --------------------------------------------------------------------------
# steps


def standardise(data, keep: np.ndarray, over: str = "all"):
    """z score of every row (NaN for rows not kept, and for judges whose
    scores have no spread or number fewer than two), with each judge's mean
    and standard deviation (n-1) over their kept rows of the kinds ``over``
    names ("all" or "system")."""
    basis = keep if over == "all" else keep & (data.kind == SYSTEM)
    k = len(data.judges)
    n = np.bincount(data.judge[basis], minlength=k).astype(float)
    total = np.bincount(data.judge[basis], weights=data.score[basis], minlength=k)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / n
        dev = (data.score[basis] - mean[data.judge[basis]]) ** 2
        sd = np.sqrt(np.bincount(data.judge[basis], weights=dev, minlength=k) / (n - 1))
    sd[(n < 2) | ~(sd > 0)] = np.nan
    z = (data.score - mean[data.judge]) / sd[data.judge]
    z[~keep] = np.nan
    return z, mean, sd


def segment_scores(data, use: np.ndarray, z: np.ndarray) -> list[dict]:
    """Mean raw and z score of each segment (system + sentence) over the rows
    in ``use``, rounded to ``DIGITS`` decimals; a z mean skips undefined z
    scores (NaN if none is defined)."""
    key = data.system[use].astype(np.int64) * len(data.sentences) + data.sentence[use]
    keys, group = np.unique(key, return_inverse=True)
    count = np.bincount(group)
    raw = np.round(np.bincount(group, weights=data.score[use]) / count, DIGITS)
    zs = z[use]
    defined = ~np.isnan(zs)
    z_count = np.bincount(group[defined], minlength=keys.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        z_mean = np.round(np.bincount(group[defined], weights=zs[defined],
                                      minlength=keys.size) / z_count, DIGITS)
    return [{"system": data.systems[k // len(data.sentences)],
             "sentence": data.sentences[k % len(data.sentences)],
             "raw": float(r), "z": float(zm), "scores": int(c)}
            for k, r, zm, c in zip(keys.tolist(), raw, z_mean, count)]


# --------------------------------------------------------------------------
# everything


def analyse_da(data, *, alpha: float = 0.05, judge_threshold: float = 0.05,
               keep_unreliable: bool = False, z_over: str = "all",
               judge_test: str = DEFAULT_TEST, judge_min_pairs: int | None = None,
               correction: str = "holm", clusters: str = "wmt21",
               bootstrap: int = 1000, seed: int = 1, quality_data=None) -> dict:
    """Run the DA analysis on ``data`` (a loader.DAScores); the result
    follows the schema in docs/analysis.md (``systems``, ``wilcoxon``,
    ``wilcoxon_holm``, ``judges``, ``clusters``, ``segments``, ``input``,
    ``settings``, ``notes``).  ``bootstrap`` resamples of the judges give
    the z intervals (0: the normal interval over segments instead).
    Judges: ``judge_test`` ("t" or "wilcoxon"), ``judge_min_pairs`` (None:
    the test's default) and ``judge_threshold`` as in ``quality``; the
    table in WMT's form is ``quality_control``.  ``quality_data`` (the whole
    file when ``data`` is one of its language pairs) is what judges are
    tested on: WMT tests a worker on every pair they judged, and
    standardises their scores within the pair."""
    if z_over not in ("all", "system"):
        raise ValueError(f"z_over must be 'all' or 'system', not {z_over!r}")
    if correction not in CORRECTIONS or clusters not in CLUSTER_RULES:
        raise ValueError(f"correction must be one of {CORRECTIONS} and clusters "
                         f"one of {CLUSTER_RULES}, not {correction!r}, {clusters!r}")
    judges, quality, notes = _quality_control(data, judge_test, judge_min_pairs,
                                              judge_threshold, keep_unreliable, quality_data)

    kept_codes = [j for j, e in enumerate(judges) if e["kept"]]
    keep = np.isin(data.judge, kept_codes)
    z, mean, sd = standardise(data, keep, z_over)
    for j, entry in enumerate(judges):
        entry["mean"], entry["sd"] = _num(mean[j]), _num(sd[j])
    no_z = [judges[j]["judge"] for j in kept_codes if math.isnan(sd[j])]
    if no_z:
        notes.append(f"no z scores for {_names(no_z)} (fewer than two scores "
                     "or all equal): their scores count in raw means only")

    use = keep & ((data.kind == SYSTEM) | (data.kind == REPEAT))
    segments = segment_scores(data, use, z) if use.any() else []
    scored = use & ~np.isnan(z)
    low, high = judge_bootstrap(data.judge[scored], data.sentence[scored], data.system[scored],
                                z[scored], len(data.systems), bootstrap, seed)
    interval = dict(zip(data.systems, zip(low, high))) if bootstrap > 0 else None
    systems = _system_rows(segments, interval)
    order = [s["system"] for s in systems]
    seg_z = {name: [] for name in order}
    for g in segments:
        if not math.isnan(g["z"]):
            seg_z[g["system"]].append(g["z"])
    wilcoxon = {a: {b: rank_sum_greater(seg_z[a], seg_z[b])
                    for b in order if b != a} for a in order}
    wilcoxon_holm = holm_matrix(wilcoxon)
    chosen = wilcoxon_holm if correction == "holm" else wilcoxon
    won = wins(order, chosen, alpha, clusters)
    for row in systems:
        row["wins"] = won[row["system"]]
    ranked = [s["system"] for s in systems if s["z"] is not None]
    # the clusters follow WMT's rule as WMT ran it, on the uncorrected tests, so
    # they reproduce the published ones; wins and verdicts use ``correction``
    cluster_list = wmt_clusters(ranked, wins(order, wilcoxon, alpha, clusters), clusters)
    position = {name: i for i, name in enumerate(order)}
    for a in order:
        for b, p in chosen[a].items():
            if p is not None and p < alpha and position[b] < position[a]:
                notes.append(f"{a} significantly beat {b} (p = {p:.4f}), although "
                             f"{b}'s z is higher" + (" (not a win under the wmt22 "
                                                      "cluster rule)" if clusters == "wmt22" else ""))
    missing = sorted(set(data.systems) - set(order))
    if missing:
        notes.append("no system scores (quality-control items only or judges "
                     "left out): " + ", ".join(missing))

    counts = dict(data.counts)
    counts["left_out_unreliable"] = int((~keep).sum())
    return {
        "protocol": "da",
        "input": {"path": data.path, "format": data.source_format,
                  "scores": len(data), "judges": len(data.judges),
                  "systems": len(data.systems), "sentences": len(data.sentences),
                  "counts": counts},
        "settings": {"alpha": alpha, "judge_threshold": judge_threshold,
                     "keep_unreliable": keep_unreliable, "z_over": z_over,
                     "judge_test": judge_test, "judge_min_pairs": quality["min_pairs"],
                     "segment": "system + sentence; system and repeat scores",
                     "test": "one-sided Wilcoxon rank-sum (R's wilcox.test)",
                     "segment_digits": DIGITS, "correction": correction,
                     "clusters": clusters, "cluster_tests": "uncorrected (as WMT)",
                     "bootstrap": bootstrap, "seed": seed,
                     "interval": (f"bootstrap of judges and sentences, {bootstrap} "
                                  "resamples, percentile"
                                  if bootstrap > 0 else "normal, over segments")},
        "systems": systems,
        "wilcoxon": wilcoxon,
        "wilcoxon_holm": wilcoxon_holm,
        "judges": judges,
        "quality_control": quality,
        "clusters": cluster_list,
        "segments": segments,
        "notes": notes,
    }


def _quality_control(data, test, min_pairs, threshold, keep_unreliable, quality_data=None) -> tuple:
    """The judges' entries, each marked kept or not, the quality-control
    summary (``quality.quality_summary``) and the notes on them; the test
    on ``quality_data``'s pairs when given."""
    judges = judge_quality(data, test, min_pairs, threshold)
    if quality_data is not None:
        whole = {e["judge"]: e for e in judge_quality(quality_data, test, min_pairs, threshold)}
        for entry in judges:
            entry.update({key: whole[entry["judge"]][key] for key in
                          ("bad_reference_pairs", "repeat_pairs", "statistic", "p", "status")})
    for entry in judges:
        entry["kept"] = keep_unreliable or entry["status"] != "unreliable"
    quality = quality_summary(judges, test, min_pairs, threshold, keep_unreliable)
    return judges, quality, quality_notes(data, quality, _names)


def _system_rows(segments, interval=None) -> list[dict]:
    """Micro averages per system, best z first (systems without z last);
    the z interval from ``interval`` ({system: (low, high)}), or without it
    the normal one, z +- 1.96 sd / sqrt(N) over the segments."""
    by_system = {}
    for g in segments:
        by_system.setdefault(g["system"], []).append(g)
    rows = []
    for name, segs in by_system.items():
        raw = np.array([g["raw"] for g in segs])
        zs = np.array([g["z"] for g in segs if not math.isnan(g["z"])])
        z = float(zs.mean()) if zs.size else None
        if interval is not None:
            low, high = (_num(v) for v in interval[name])
        elif zs.size > 1:
            half = Z95 * zs.std(ddof=1) / math.sqrt(zs.size)
            low, high = z - half, z + half
        else:
            low = high = None
        rows.append({"system": name, "raw": float(raw.mean()), "z": z,
                     "segments": len(segs), "z_segments": int(zs.size),
                     "judgments": sum(g["scores"] for g in segs),
                     "z_ci_low": low, "z_ci_high": high})
    rows.sort(key=lambda r: (r["z"] is None, -(r["z"] or 0.0), -r["raw"], r["system"]))
    return rows


def _names(names, most: int = 10) -> str:
    """A note's list of names, cut short: every name is in the judges table."""
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def _num(value) -> float | None:
    return None if math.isnan(value) else float(value)
