"""The ESA analysis (docs/analysis.md, "Error Span Annotation"): per system
the score as WMT24 gave it (mean per domain, then over domains) and over
segments, z-scores per annotator, error-span counts, and WMT24's paired
significance, rank ranges and clusters."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from .reader import ESAScores
from .significance import clusters, pair_p, rank_ranges, significant

__all__ = ["MAJOR_WEIGHT", "MINOR_WEIGHT", "analyse_esa", "segment_scores", "span_counts"]

# MQM's weights, the usual reading of ESA's spans as a score
MINOR_WEIGHT, MAJOR_WEIGHT = -1, -5


def segment_scores(data: ESAScores) -> dict:
    """{system: {domain: {(document, segment): mean score of its annotators}}}."""
    sums = defaultdict(lambda: [0.0, 0])
    for j in data.judgments:
        entry = sums[(j.system, j.domain, (j.document, j.segment))]
        entry[0] += j.score
        entry[1] += 1
    out = defaultdict(lambda: defaultdict(dict))
    for (system, domain, segment), (total, n) in sums.items():
        out[system][domain][segment] = total / n
    return out


def span_counts(spans) -> dict:
    """Counts of one judgment's spans and its span-based score."""
    minor = sum(1 for s in spans if s.severity == "minor")
    major = sum(1 for s in spans if s.severity == "major")
    return {"spans": len(spans), "minor": minor, "major": major,
            "omissions": sum(1 for s in spans if s.start is None),
            "span_score": MINOR_WEIGHT * minor + MAJOR_WEIGHT * major}


def z_scores(data: ESAScores) -> dict:
    """{system: mean z} with each annotator's scores standardised by their
    own mean and standard deviation (0 for an annotator who never varied)."""
    by_annotator = defaultdict(list)
    for j in data.judgments:
        by_annotator[j.annotator].append(j.score)
    scale = {a: (np.mean(v), np.std(v)) for a, v in by_annotator.items()}
    z = defaultdict(list)
    for j in data.judgments:
        mean, sd = scale[j.annotator]
        z[j.system].append((j.score - mean) / sd if sd > 0 else 0.0)
    return {system: float(np.mean(values)) for system, values in z.items()}


def system_rows(data: ESAScores, segments: dict) -> dict:
    """Per system: both means, counts and the error-span statistics."""
    spans = defaultdict(lambda: defaultdict(int))
    for j in data.judgments:
        counts = spans[j.system]
        counts["judgments"] += 1
        for key, value in span_counts(j.spans).items():
            counts[key] += value
    z = z_scores(data)
    rows = {}
    for system, domains in segments.items():
        per_domain = {d: float(np.mean(list(s.values()))) for d, s in sorted(domains.items())}
        every = [score for s in domains.values() for score in s.values()]
        counts = spans[system]
        n = counts["judgments"]
        rows[system] = {
            "system": system, "score": float(np.mean(list(per_domain.values()))),
            "score_segments": float(np.mean(every)), "segments": len(every),
            "judgments": n, "z": z[system], "domains": per_domain,
            "spans_per_segment": counts["spans"] / n, "minor_per_segment": counts["minor"] / n,
            "major_per_segment": counts["major"] / n, "omissions": counts["omissions"],
            "span_score": counts["span_score"] / n}
    return rows


def analyse_esa(data: ESAScores, alpha: float = 0.05) -> dict:
    """Every figure of the ESA analysis as a JSON-ready dict; systems best
    first by the mean over domains."""
    segments = segment_scores(data)
    rows = system_rows(data, segments)
    order = sorted(rows, key=lambda s: (-rows[s]["score"], s))
    p, by_domain = {}, {}
    for a in order:
        for b in order:
            if a != b:   # the combined p once for each order of the pair
                p[(a, b)], by_domain[(a, b)] = pair_p(segments[a], segments[b])
    scores = {s: rows[s]["score"] for s in order}
    wins = significant(p, scores, alpha)
    ranges = rank_ranges(order, wins)
    groups = clusters(order, p, alpha)
    cluster_of = {s: i + 1 for i, group in enumerate(groups) for s in group}
    for s in order:
        rows[s]["rank_range"] = list(ranges[s])
        rows[s]["cluster"] = cluster_of[s]
    domains = sorted({j.domain for j in data.judgments})
    return {
        "protocol": "esa",
        "input": {"path": data.path, "format": data.source_format, "pair": data.pair,
                  "counts": dict(data.counts), "warnings": list(data.warnings),
                  "annotators": len({j.annotator for j in data.judgments}),
                  "domains": domains},
        "settings": {"alpha": alpha, "minor_weight": MINOR_WEIGHT, "major_weight": MAJOR_WEIGHT},
        "systems": [rows[s] for s in order],
        "significance": [{"first": a, "second": b, "p": p[(a, b)], "domains": by_domain[(a, b)],
                          "significant": (a, b) in wins}
                         for i, a in enumerate(order) for b in order[i + 1:]],
        "significant_pairs": len(wins),
        "pairs": len(order) * (len(order) - 1) // 2,
        "clusters": groups,
    }
