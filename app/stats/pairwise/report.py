"""Presenting a pairwise analysis: terminal tables and CSV files (the JSON
file and the table formats every protocol shares are in ``app.stats.output``).

All functions take the dict returned by :func:`app.stats.pairwise.analysis.analyse`.
"""

from __future__ import annotations

import os

from ..agreement import FEW_PAIRS, LABEL_MARGIN
from ..output import fmt_num, fmt_p, printable, table, write_tables
from ..research import FLAGGED
from ..winners import CATEGORIES

__all__ = ["text_report", "write_csv"]


# --------------------------------------------------------------------------
# rows shared by the terminal and CSV outputs

AGREEMENT_HEADERS = ["measure", "kappa", "P(A)", "P(E)", "agreeing",
                     "comparable", "ties", "labels", "Landis & Koch"]


def agreement_rows(result) -> list[list]:
    a = result["agreement"]
    rows = []
    for name, entry in (("inter, WMT/Appraise (default)", a["inter"]),
                        ("inter, Ebaluatoia 3-outcome", a["inter_ebaluatoia"]),
                        ("inter, different judges", a.get("inter_different_judges")),
                        ("intra, WMT/Appraise", a["intra"])):
        if entry is None:
            rows.append([name, "n/a", "", "", "", "", "", "", "not available"])
            continue
        rows.append([name, fmt_num(entry["kappa"]), fmt_num(entry["p_a"]),
                     fmt_num(entry["p_e"]), entry["agreeing"],
                     entry["comparable"], entry["ties"], entry["labels"],
                     entry["label"]])
    return rows


BY_PAIR_HEADERS = ["pair", "kappa WMT", "kappa Ebaluatoia", "P(A)", "P(E) WMT",
                   "P(E) Eb.", "agreeing", "comparable", "ties", "labels",
                   "Landis & Koch"]


def few_pairs_warnings(result) -> list[str]:
    """A warning under the agreement table for each kappa that rests on too
    few comparable label pairs for a Landis and Koch word (agreement.describe)."""
    a = result["agreement"]
    lines = []
    for name, key in (("inter, WMT/Appraise", "inter"), ("inter, Ebaluatoia", "inter_ebaluatoia"),
                      ("inter, different judges", "inter_different_judges"), ("intra", "intra")):
        entry = a.get(key)
        if entry and entry.get("few_pairs"):
            lines.append(
                f"  WARNING: {name} kappa {fmt_num(entry['kappa'])} rests on {entry['comparable']} comparable "
                f"label pair{'' if entry['comparable'] == 1 else 's'}: its 95% margin is about "
                f"+-{entry['margin']:.2f}, wider than one Landis & Koch band ({LABEL_MARGIN}), so it is not "
                f"labelled; collect more overlapping judgments before reading it.")
    return lines


def by_pair_rows(result) -> list[list]:
    rows = []
    for e in result["agreement"]["by_pair"]:
        rows.append([" vs ".join(e["systems"]), fmt_num(e["kappa"]),
                     fmt_num(e["ebaluatoia"]["kappa"]), fmt_num(e["p_a"]),
                     fmt_num(e["p_e"]), fmt_num(e["ebaluatoia"]["p_e"]),
                     e["agreeing"], e["comparable"], e["ties"], e["labels"],
                     e["label"]])
    return rows


WINNER_HEADERS = ["pair (A vs B)", "A++", "A+", "equal", "B+", "B++", "sentences"]


def winner_rows(result) -> list[list]:
    rows = []
    for p in result["pairs"]:
        a, b = p["systems"]
        s = p["sentences"]
        rows.append([f"{a} vs {b}", *(s[c] for c in CATEGORIES), p["sentence_count"]])
    return rows


def significance_headers(result) -> list[str]:
    holm = result["settings"]["correction"] == "holm"
    headers = ["pair (A vs B)", "judgments", "A wins", "B wins", "ties",
               "sent. A", "sent. B"]
    for unit in ("margins", "items", "judgments (descriptive)"):
        headers += [f"p {unit}"] + ([f"p {unit}, Holm"] if holm else [])
    if result.get("sequential"):
        return headers + ["p stage", "significant (stage)"]
    return headers + [f"significant, {result['settings']['unit']}"]


#: how the report names a stage of the final analysis
STAGE_NAMES = {"sequential": "sequential", "final": "final look", None: "undecided"}


def significance_rows(result) -> list[list]:
    """One row per pair: counts, each unit's p-value (raw, then Holm when
    corrected) and the verdict of the unit the ordering uses.  The judgments
    unit gets no verdict: its test assumes independent judgments."""
    s = result["settings"]
    holm = s["correction"] == "holm"
    rows = []
    for p in result["pairs"]:
        a, b = p["systems"]
        row = [f"{a} vs {b}", p["judgments"], p["wins"][a], p["wins"][b],
               p["ties"], p["sentence_wins"][a], p["sentence_wins"][b]]
        for unit in ("margins", "items", "judgments"):
            t = p["units"][unit]
            raw = t["p_flip"] if unit == "margins" else t[f"p_{s['test']}"]
            row += [fmt_p(raw)] + ([fmt_p(t["p"])] if holm else [])
        if "stage" in p:    # --decisions: the two stages decide
            row.append(fmt_p(p["sequential_p"] if p["stage"] == "sequential" else p["final_p_holm"]))
            row.append(f"yes: {p['better']} ({STAGE_NAMES[p['stage']]})" if p["significant"]
                       else "no")
            rows.append(row)
            continue
        row.append(f"yes: {p['better']}" if p["significant"] else "no")
        rows.append(row)
    return rows


def significance_title(result) -> list[str]:
    """The lines naming the tests, the correction and the unit used."""
    s = result["settings"]
    test = ("exact sign test" if s["test"] == "sign" else
            f"{s['z_form']} z-test, no continuity correction")
    deciding = ("exact sign-flip test of per-sentence margins"
                if s["unit"] == "margins" else f"{test} of sentences won")
    if s["correction"] == "holm":
        n = len(result["pairs"])
        correction = (f"Holm-corrected over the {n} pair{'' if n == 1 else 's'} "
                      f"within each unit")
    else:
        correction = "no correction for multiple comparisons"
    seq = result.get("sequential")
    if seq:
        return [f"Significance (decided in two stages, see Sequential decisions: the "
                f"campaign's anytime-valid decisions at {_pct(seq['sequential_alpha'])}, then "
                f"the exact sign test of sentences won at {_pct(seq['final_alpha'])}, Holm over "
                f"the undecided pairs; alpha = {s['alpha']})",
                f"units (descriptive here; {correction}): margins = each sentence's "
                "votes(A) - votes(B), signs flipped per sentence (exact); items = sentences "
                f"won, judgments = single judgments ({test}, ties excluded). "
                "The ordering uses the two stages (--decisions): p stage is the anytime p "
                "at the campaign's counts for a sequential decision, the Holm-adjusted sign "
                "p of the final look otherwise."]
    return [f"Significance ({deciding}; {correction}; alpha = {s['alpha']})",
            "units: margins = each sentence's votes(A) - votes(B), signs flipped "
            "per sentence (exact); items = sentences won, judgments = single "
            f"judgments ({test}, ties excluded). The judgments p-value is "
            "descriptive only: it treats the judgments of one sentence as "
            "independent, so it decides nothing. "
            f"The ordering uses {s['unit']}."]


def _pct(level) -> str:
    return f"{level * 100:.3g}%"


SEQUENTIAL_HEADERS = ["pair (A vs B)", "campaign: A won", "B won", "judgments",
                      "decided at", "sent. A (this file)", "sent. B", "stage", "better", "p"]


def sequential_rows(result) -> list[list]:
    """One row per pair of the decisions file: the campaign's counts and
    decision, the sentences won in the judgments analysed, the stage that
    decided it (or none) and that stage's p."""
    rows = []
    for e in result["sequential"]["pairs"]:
        a, b = e["systems"]
        wins, won = e["wins"] or {}, e["sentence_wins"] or {}
        rows.append([f"{a} vs {b}", wins.get(a, ""), wins.get(b, ""),
                     "" if e["judgments"] is None else e["judgments"], e["decided_at"] or "",
                     won.get(a, "-"), won.get(b, "-"), STAGE_NAMES[e["stage"]],
                     e["better"] or "", fmt_p(e["p"])])
    return rows


def sequential_lines(result) -> list[str]:
    """The "Sequential decisions" section (--decisions): what decided each
    pair and why the family-wise error stays at alpha; nothing without it."""
    seq = result.get("sequential")
    if not seq:
        return []
    about = ", ".join(f"{k} {seq[k]}" for k in ("campaign", "assignment", "goal") if seq.get(k))
    return [printable(f"Sequential decisions ({os.path.basename(seq['path'])}"
                      + (f"; {about}" if about else "") + ")"),
            printable(seq["text"]),
            table(SEQUENTIAL_HEADERS, sequential_rows(result), "lrrrlrrllr"), ""]


BT_HEADERS = ["rank", "system", "BT score", "95% CI low", "95% CI high",
              "rank range", "judgments", "win rate", "win rate (ties 1/2)"]


def bt_rows(result) -> list[list]:
    rates = {r["system"]: r for r in result["win_rates"]}
    rows = []
    for r in result["bradley_terry"]:
        rate = rates[r["system"]]
        if r["rank_low"] is None:
            rank_range = "n/a"
        elif r["rank_low"] == r["rank_high"]:
            rank_range = str(r["rank_low"])
        else:
            rank_range = f"{r['rank_low']}-{r['rank_high']}"
        rows.append([r["rank"], r["system"], f"{r['score']:+.3f}",
                     fmt_num(r["ci_low"]), fmt_num(r["ci_high"]), rank_range,
                     rate["judgments"], fmt_num(rate["win_rate"]),
                     fmt_num(rate["score_rate"])])
    return rows


def win_matrix_rows(result) -> tuple[list[str], list[list]]:
    m = result["win_matrix"]
    headers = ["row beat column"] + m["systems"]
    rows = []
    for name, wins in zip(m["systems"], m["wins"]):
        rows.append([name] + [w if other != name else "-"
                              for other, w in zip(m["systems"], wins)])
    return headers, rows


RANK_ORDERING_HEADERS = ["rank", "system", "score", "rank range", "cluster"]


def rank_ordering_lines(result) -> list[str]:
    """The --ordering table (TrueSkill or Expected Wins, WMT's rank ranges
    and clusters); nothing when the ordering is Bradley-Terry's."""
    r = result.get("rank_ordering")
    if not r:
        return []
    if r["method"] == "trueskill":
        title = (f"TrueSkill as WMT14-16 (mean mu of {r['runs']} runs, seed "
                 f"{r['seed']}; 95% rank ranges over the runs)")
    else:
        title = (f"Expected Wins as WMT13 (ties left out; 95% rank ranges over "
                 f"{r['runs']} resamples of the judgments, seed {r['seed']})")
    rows = [[e["rank"], e["system"], f"{e['score']:+.3f}" if r["method"] == "trueskill"
             else f"{e['score']:.3f}",
             str(e["rank_low"]) if e["rank_low"] == e["rank_high"]
             else f"{e['rank_low']}-{e['rank_high']}", e["cluster"]]
            for e in r["systems"]]
    clusters = "  >  ".join("{" + ", ".join(c) + "}" for c in r["clusters"])
    return [title, table(RANK_ORDERING_HEADERS, rows, "rlrrr"),
            printable(f"Clusters (ranges that do not overlap): {clusters}"), ""]


# --------------------------------------------------------------------------
# terminal

#: The site's one rule of who counts (app/services/quality.left_out_volunteer), as
#: the analysis of its export applies it.
WHO_COUNTS = ("Who counts (the site's rule, also its dashboard's and raffle's): answers of "
              "dismissed or held volunteers, and of volunteers not yet checked by their "
              "controls, are left out (the export's flags).")


def text_report(result) -> str:
    inp = result["input"]
    s = result["settings"]
    out = []
    skipped = {k: v for k, v in inp["counts"].items() if k.startswith("skipped")}
    line = (f"{os.path.basename(inp['path'])} ({inp['format']} format): "
            f"{inp['judgments']} judgments of {len(result['systems'])} systems "
            f"on {inp['sentences']} sentences by {inp['judges']} "
            f"judge{'' if inp['judges'] == 1 else 's'}")
    if skipped:
        line += "; left out: " + ", ".join(
            f"{v} {k.replace('skipped_', '')}" for k, v in sorted(skipped.items()))
        if any(f"skipped_{reason}" in skipped for reason in FLAGGED):
            line += " (flagged answers: --keep-flagged keeps them)"
    out += [printable(line)] + ([WHO_COUNTS] if inp["format"] == "bozka" else []) + [""]

    out += ["Inter-annotator agreement (Cohen's kappa)",
            table(AGREEMENT_HEADERS, agreement_rows(result), "l" + "r" * 7 + "l")]
    out += few_pairs_warnings(result)
    a = result["agreement"]
    out += [f"Krippendorff's alpha (nominal): {fmt_num(a['krippendorff_alpha'])}",
            f"Symmetrised alpha (first/second-better totals averaged): "
            f"{fmt_num(a['krippendorff_alpha_symmetrised'])}", ""]

    out += ["Agreement by system pair",
            table(BY_PAIR_HEADERS, by_pair_rows(result), "l" + "r" * 9 + "l")]
    few = sum(1 for e in result["agreement"]["by_pair"] if e.get("few_pairs"))
    if few:
        out.append(f"  WARNING: {few} of {len(result['agreement']['by_pair'])} pairs' kappas rest on too few "
                   f"comparable label pairs to be labelled (\"{FEW_PAIRS}\"; see above).")
    out.append("")

    out += ["Per-sentence winners (X++: vote difference > 2, X+: 1 or 2)",
            table(WINNER_HEADERS, winner_rows(result)), ""]

    out += sequential_lines(result)
    out += significance_title(result)
    out += [table(significance_headers(result), significance_rows(result)), ""]

    out += [f"Ordering: {printable(result['ordering'])}",
            "Clusters: " + printable("  >  ".join("{" + ", ".join(c) + "}"
                                                  for c in result["clusters"]))]
    for note in result["notes"]:
        out.append(f"  note: {printable(note)}")
    out.append("")

    rounds = s["bootstrap_rounds"]
    if s["bt_ties"] == "half":
        ties = "tie = half a win each way"
    else:
        nu = result["bradley_terry_nu"]
        ties = f"ties as ties (Davidson), nu = {fmt_num(nu)}"
    out += [f"Bradley-Terry (all judgments, {ties}; "
            f"{rounds} bootstrap rounds over sentences, seed {s['seed']})",
            table(BT_HEADERS, bt_rows(result), "rl" + "r" * 7), ""]

    out += rank_ordering_lines(result)

    headers, rows = win_matrix_rows(result)
    out += ["Win matrix (judgments in which the row system beat the column system)",
            table(headers, rows)]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# CSV


def _raw_rows(result):
    """Tables for CSV: unformatted numbers."""
    a = result["agreement"]
    keys = ["kappa", "p_a", "p_e", "agreeing", "comparable", "ties", "labels",
            "label"]
    agreement = [["measure", "definition"] + keys]
    for name, entry in (("inter", a["inter"]), ("inter", a["inter_ebaluatoia"]),
                        ("inter", a.get("inter_different_judges")),
                        ("intra", a["intra"])):
        if entry is None:
            agreement.append([name, "wmt"] + [""] * (len(keys) - 1) + ["not available"])
        else:
            agreement.append([name, entry["definition"]] + [entry[k] for k in keys])
    agreement.append(["krippendorff_alpha", "", a["krippendorff_alpha"]] +
                     [""] * (len(keys) - 1))
    agreement.append(["krippendorff_alpha_symmetrised", "", a["krippendorff_alpha_symmetrised"]] +
                     [""] * (len(keys) - 1))

    by_pair = [["system_a", "system_b"] + keys +
               ["kappa_ebaluatoia", "p_e_ebaluatoia", "label_ebaluatoia"]]
    for e in a["by_pair"]:
        eb = e["ebaluatoia"]
        by_pair.append(e["systems"] + [e[k] for k in keys] +
                       [eb["kappa"], eb["p_e"], eb["label"]])

    pair_cols = ["judgments", "ties", "sentence_count", "margin_p", "z", "p_value",
                 "sign_test_p", "judgment_z", "judgment_p_value",
                 "judgment_sign_test_p"]
    if result["settings"]["correction"] == "holm":
        pair_cols += ["margin_p_holm", "p_value_holm", "sign_test_p_holm",
                      "judgment_p_value_holm", "judgment_sign_test_p_holm"]
    # p_judgments is descriptive: "significant" is the ordering's unit's verdict
    pair_cols += ["p_margins", "p_items", "p_judgments"]
    if result.get("sequential"):    # --decisions: what decided, and its p
        pair_cols += ["stage", "decided_by", "sequential_p", "final_p_holm"]
    pairs = [["system_a", "system_b", "wins_a", "wins_b", "a_plus_plus",
              "a_plus", "equal", "b_plus", "b_plus_plus", "sentence_wins_a",
              "sentence_wins_b"] + pair_cols + ["significant", "better"]]
    for p in result["pairs"]:
        x, y = p["systems"]
        s = p["sentences"]
        pairs.append([x, y, p["wins"][x], p["wins"][y], *(s[c] for c in CATEGORIES),
                      p["sentence_wins"][x],
                      p["sentence_wins"][y]] + [p[c] for c in pair_cols] +
                     [p["significant"], p["better"] or ""])

    bt_cols = ["rank", "system", "score", "ci_low", "ci_high", "rank_low",
               "rank_high"]
    bt = [bt_cols] + [[r[c] for c in bt_cols] for r in result["bradley_terry"]]

    rate_cols = ["system", "judgments", "wins", "ties", "losses", "win_rate",
                 "score_rate"]
    rates = [rate_cols] + [[r[c] for c in rate_cols] for r in result["win_rates"]]

    m = result["win_matrix"]
    matrix = [["winner\\loser"] + m["systems"]]
    matrix += [[name] + row for name, row in zip(m["systems"], m["wins"])]
    ties = [["system"] + m["systems"]]
    ties += [[name] + row for name, row in zip(m["systems"], m["ties"])]

    ordering = [["position", "system", "relation_to_next", "cluster", "copeland"]]
    detail = result["ordering_detail"]
    cluster_of = {s: i + 1 for i, c in enumerate(result["clusters"]) for s in c}
    for i, name in enumerate(detail["sequence"]):
        rel = detail["relations"][i] if i < len(detail["relations"]) else ""
        ordering.append([i + 1, name, rel, cluster_of[name], detail["copeland"][name]])

    tables = {
        "agreement.csv": agreement,
        "agreement_by_pair.csv": by_pair,
        "pairs.csv": pairs,
        "ordering.csv": ordering,
        "bradley_terry.csv": bt,
        "win_rates.csv": rates,
        "win_matrix.csv": matrix,
        "tie_matrix.csv": ties,
    }
    if result.get("sequential"):
        cols = ["stage", "decided", "better", "p", "judgments", "decided_at", "in_judgments"]
        rows = [["system_a", "system_b", "campaign_wins_a", "campaign_wins_b",
                 "sentence_wins_a", "sentence_wins_b"] + cols]
        for e in result["sequential"]["pairs"]:
            a, b = e["systems"]
            wins, won = e["wins"] or {}, e["sentence_wins"] or {}
            rows.append([a, b, wins.get(a), wins.get(b), won.get(a), won.get(b)] + [e[c] for c in cols])
        tables["sequential.csv"] = rows
    if result.get("rank_ordering"):
        cols = ["rank", "system", "score", "sigma", "rank_low", "rank_high", "cluster"]
        tables["rank_ordering.csv"] = [cols] + [[e[c] for c in cols] for e in
                                                result["rank_ordering"]["systems"]]
    return tables


def write_csv(result, directory: str) -> list[str]:
    """Write one CSV file per table into ``directory``; returns the paths."""
    return write_tables(_raw_rows(result), directory)
