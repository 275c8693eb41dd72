"""Presenting a DA analysis: terminal tables and CSV files.

All functions take the dict returned by :func:`app.stats.da.analysis.analyse_da`;
JSON is written by :func:`app.stats.output.write_json` as for pairwise.
"""

from __future__ import annotations

import os

from ..output import fmt_num, fmt_p, printable, table, write_tables
from ..research import FLAGGED

__all__ = ["significance", "stars", "text_report", "write_csv"]

CLUSTER_RULE = {"wmt21": "WMT21's rule: a cluster ends at the system in position i of n "
                         "that beats exactly n - i systems",
                "wmt22": "WMT22's rule: wins count only against lower z; a cluster ends "
                         "after position i of n when every system so far beats at least "
                         "n - i systems"}


#: The site's one rule of who counts (app/services/quality.left_out_volunteer), as
#: the analysis applies it.
WHO_COUNTS = ("Who counts (the site's rule, also its dashboard's and raffle's): answers of "
              "dismissed or held volunteers are left out (the export's flags); judges the "
              "judge test below leaves out are left out; judges with too few pairs to be "
              "tested are kept, as untested.")


def significance(result) -> dict:
    """The matrix of p-values the wins and stars use: Holm-adjusted
    by default, WMT's uncorrected one with ``correction="none"``."""
    if result["settings"].get("correction", "none") == "holm":
        return result["wilcoxon_holm"]
    return result["wilcoxon"]


def stars(p) -> str:
    """WMT's marks: * p < 0.05, ** p < 0.01, *** p < 0.001."""
    if p is None:
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else ""


def judge_rows(result) -> list[list]:
    """The quality-control table in WMT's form (pairs, statistic, p, kept),
    with each judge's scores, mean and sd."""
    rows = []
    for j in result["judges"]:
        kept = "no" if not j["kept"] else "yes, untested" if j["status"] == "untested" \
            else "yes, on request" if j["status"] == "unreliable" else "yes"
        statistic = j.get("statistic")
        rows.append([j["judge"], j["scores"], fmt_num(j["mean"], 2),
                     fmt_num(j["sd"], 2), j["bad_reference_pairs"],
                     "n/a" if statistic is None else f"{statistic:.3f}",
                     fmt_p(j["p"]), kept])
    return rows


def quality_lines(result) -> list[str]:
    """The heading and counts of the quality-control table."""
    q = result.get("quality_control")
    if q is None:
        return ["Judges"]
    rule = "kept whatever p" if q["keep_unreliable"] else f"kept at p <= {q['threshold']}"
    return [f"Judges (quality control: {q['description']}; {rule}; tested with at "
            f"least {q['min_pairs']} bad-reference pairs)",
            f"{q['judges']} judge(s): {q['tested']} tested, {q['failed']} failed, "
            f"{q['untested']} untested (kept), {q['left_out']} left out"]


def system_rows(result) -> list[list]:
    rows = []
    for rank, s in enumerate(result["systems"], start=1):
        ci = "n/a" if s["z_ci_low"] is None else \
            f"{s['z_ci_low']:.3f} .. {s['z_ci_high']:.3f}"
        rows.append([rank, s["system"], fmt_num(s["raw"], 1), fmt_num(s["z"]), ci,
                     s["segments"], s["judgments"], s["wins"]])
    return rows


def wilcoxon_rows(result) -> tuple[list[str], list[list]]:
    """WMT's matrix: row z minus column z, with the row-better stars."""
    names = [s["system"] for s in result["systems"]]
    z = {s["system"]: s["z"] for s in result["systems"]}
    matrix = significance(result)
    rows = []
    for a in names:
        row = [a]
        for b in names:
            if a == b:
                row.append("-")
            elif z[a] is None or z[b] is None:
                row.append("n/a")
            else:
                diff = round(z[a] - z[b], 2) + 0.0     # no "-0.00"
                row.append(f"{diff:.2f}{stars(matrix[a][b])}")
        rows.append(row)
    return [""] + names, rows


def text_report(result) -> str:
    inp, s = result["input"], result["settings"]
    skipped = {k: v for k, v in inp["counts"].items() if k.startswith("skipped")}
    line = (f"{os.path.basename(inp['path'])} ({inp['format']} format): "
            f"{inp['scores']} scores of {inp['systems']} systems on "
            f"{inp['sentences']} sentences by {inp['judges']} "
            f"judge{'' if inp['judges'] == 1 else 's'}")
    if skipped:
        line += "; left out: " + ", ".join(
            f"{v} {k.replace('skipped_', '')}" for k, v in sorted(skipped.items()))
        if any(f"skipped_{reason}" in skipped for reason in FLAGGED):
            line += " (flagged answers: --keep-flagged keeps them)"
    out = [printable(line)] + ([WHO_COUNTS] if inp["format"] == "bozka-da" else []) + [""]

    statistic = result.get("quality_control", {}).get("statistic", "t")
    out += quality_lines(result) + [
        table(["judge", "scores", "mean", "sd", "pairs", statistic, "p", "kept"],
              judge_rows(result), "l" + "r" * 6 + "l"), ""]

    if not result["systems"]:
        out += ["No system scores: no judge was kept, or only quality-control "
                "items remain.", ""]
        return "\n".join(out + [f"  note: {n}" for n in result["notes"]]) + "\n"

    basis = "all their scores" if s["z_over"] == "all" else "their system scores"
    interval = s.get("interval", "normal, over segments")
    corrected = s.get("correction") == "holm"
    out += [f"Systems (mean of segment means; z: each judge's scores standardised "
            f"with the mean and sd of {basis}; 95% CI of z: {interval}; wins at "
            f"alpha = {s['alpha']}, {'Holm' if corrected else 'uncorrected'})",
            table(["rank", "system", "raw", "z", "95% CI of z", "segments",
                   "scores", "wins"], system_rows(result), "rl" + "r" * 6), ""]

    headers, rows = wilcoxon_rows(result)
    n = len(headers) - 1
    pairs = n * (n - 1) // 2
    how = f"Holm-adjusted over the {pairs} system pairs" if corrected else \
        "uncorrected, as WMT publishes it (--holm is the default)"
    out += [f"Wilcoxon rank-sum on segment z scores, p {how} (row z minus column z; "
            "* p < 0.05, ** p < 0.01, *** p < 0.001 that the row is better)",
            table(headers, rows, "l" + "r" * (len(headers) - 1)), ""]

    rule = s.get("clusters", "wmt21")
    out.append("Clusters: " + printable("  >  ".join("{" + ", ".join(c) + "}"
                                                     for c in result["clusters"])))
    out.append(f"  ({CLUSTER_RULE.get(rule, rule)}; on the uncorrected tests, as WMT published them)")
    for note in result["notes"]:
        out.append(f"  note: {printable(note)}")
    return "\n".join(out) + "\n"


def _tables(result) -> dict:
    """Tables for CSV: unformatted numbers."""
    cluster_of = {name: i + 1 for i, c in enumerate(result["clusters"]) for name in c}
    cols = ["system", "raw", "z", "z_ci_low", "z_ci_high", "segments",
            "z_segments", "judgments", "wins"]
    systems = [["rank"] + cols + ["cluster"]]
    for rank, s in enumerate(result["systems"], start=1):
        systems.append([rank] + [s[c] for c in cols] + [cluster_of.get(s["system"])])

    judges = [["judge", "scores", "mean", "sd", "bad_reference_pairs",
               "repeat_pairs", "statistic", "p", "status", "kept", "mean_system",
               "mean_repeat", "mean_bad_reference", "mean_reference"]]
    for j in result["judges"]:
        m = j["mean_by_kind"]
        judges.append([j["judge"], j["scores"], j["mean"], j["sd"],
                       j["bad_reference_pairs"], j["repeat_pairs"], j.get("statistic"), j["p"],
                       j["status"], j["kept"], m["system"], m["repeat"],
                       m["bad_reference"], m["reference"]])

    names = [s["system"] for s in result["systems"]]
    matrices = {}
    for key in ("wilcoxon", "wilcoxon_holm"):
        matrices[key] = [["better\\worse"] + names]
        for a in names:
            matrices[key].append([a] + [result[key][a].get(b) for b in names])

    segments = [["system", "sentence", "raw", "z", "scores"]]
    segments += [[g["system"], g["sentence"], g["raw"], g["z"], g["scores"]]
                 for g in result["segments"]]
    return {"da_systems.csv": systems, "da_judges.csv": judges,
            "da_wilcoxon.csv": matrices["wilcoxon"],
            "da_wilcoxon_holm.csv": matrices["wilcoxon_holm"], "da_segments.csv": segments}


def write_csv(result, directory: str) -> list[str]:
    """Write one CSV file per table into ``directory``; returns the paths."""
    return write_tables(_tables(result), directory)
