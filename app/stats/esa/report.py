"""Presenting an ESA analysis: terminal tables and CSV files (JSON is
written by :func:`app.stats.output.write_json` as for the other protocols)."""

from __future__ import annotations

from ..output import fmt_num, fmt_p, table, write_tables

__all__ = ["text_report", "write_csv"]

SYSTEM_HEADERS = ["#", "system", "score", "segment mean", "z", "segments", "rank range",
                  "cluster", "spans/seg", "minor/seg", "major/seg", "omissions", "span score"]


def system_rows(result) -> list[list]:
    return [[n, s["system"], fmt_num(s["score"], 1), fmt_num(s["score_segments"], 1),
             fmt_num(s["z"]), s["segments"], "-".join(map(str, s["rank_range"])), s["cluster"],
             fmt_num(s["spans_per_segment"], 2), fmt_num(s["minor_per_segment"], 2),
             fmt_num(s["major_per_segment"], 2), s["omissions"], fmt_num(s["span_score"], 2)]
            for n, s in enumerate(result["systems"], start=1)]


def text_report(result) -> str:
    """The report printed by ``scripts/analyse.py`` on ESA input."""
    info, alpha = result["input"], result["settings"]["alpha"]
    counts = info["counts"]
    left_out = ", ".join(f"{k[len('skipped_'):]} {v}" for k, v in counts.items()
                         if k.startswith("skipped_"))
    lines = [f"Error Span Annotation: {info['path']} ({info['format']}"
             + (f", {info['pair']}" if info["pair"] else "") + ")",
             f"{counts.get('rows', 0)} row(s) read; left out: {left_out or 'none'}; "
             f"{counts.get('replaced_repeats', 0)} repeated score(s) replaced by the later; "
             f"{counts.get('judgments', 0)} judgment(s) of {info['annotators']} annotator(s)",
             f"Domains: {', '.join(info['domains'])}"]
    lines += [f"warning: {w}" for w in info["warnings"]]
    lines += ["", "Systems (score: mean per domain, then over domains, as WMT24; span score: "
              f"minor {result['settings']['minor_weight']}, major "
              f"{result['settings']['major_weight']} per segment)",
              table(SYSTEM_HEADERS, system_rows(result), "rl" + "r" * 11), ""]
    lines.append(f"Significant pairs (Wilcoxon per domain, Stouffer; p < {alpha:g}, the first "
                 f"scoring higher): {result['significant_pairs']} of {result['pairs']}")
    lines.append("Clusters: " + " > ".join("{" + ", ".join(c) + "}" for c in result["clusters"]))
    rows = [[p["first"], p["second"], fmt_p(p["p"]), "yes" if p["significant"] else "no"]
            for p in result["significance"]]
    if rows:
        lines += ["", table(["first", "second", "p", "significant"], rows, "llrr")]
    return "\n".join(lines) + "\n"


def write_csv(result, directory: str) -> list[str]:
    """``esa_systems.csv`` and ``esa_significance.csv`` in ``directory``."""
    keys = ["system", "score", "score_segments", "z", "segments", "judgments",
            "spans_per_segment", "minor_per_segment", "major_per_segment", "omissions",
            "span_score", "cluster"]
    systems = [keys + ["rank_best", "rank_worst"]] + [
        [s[k] for k in keys] + s["rank_range"] for s in result["systems"]]
    pairs = [["first", "second", "p", "significant"]] + [
        [p["first"], p["second"], p["p"], p["significant"]] for p in result["significance"]]
    return write_tables({"esa_systems.csv": systems, "esa_significance.csv": pairs}, directory)
