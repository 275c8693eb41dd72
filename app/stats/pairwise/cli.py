"""Command line for pairwise input (Bozka export, WMT/Appraise CSV);
``app.stats.cli.main`` hands over to :func:`main` when ``app.stats.formats``
says the input is pairwise, and for any input no protocol recognises.

Exit status: 0 on success, 2 on bad input or bad arguments (with a one-line
``analyse: FILE:LINE: message`` on stderr), 1 when an output file cannot be
written.  Nothing is written unless the whole input was read.
"""

from __future__ import annotations

import argparse

from ..arguments import alpha_level, emit, non_negative, positive, say
from ..bradley_terry import TIE_MODELS
from ..ordering import ORDERINGS, rank_ordering
from .analysis import analyse
from .decisions_reader import read_decisions
from .loader import InputError, filter_judges, load, unknown_judges

__all__ = ["build_parser", "main"]

#: runs behind an --ordering's rank ranges: 100 TrueSkill runs take about 20 s
#: on WMT13 fr-en (102,000 judgments); Expected Wins resamples are cheap.
DEFAULT_RUNS = {"trueskill": 100, "expected-wins": 1000}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="analyse",
        description="Agreement, per-sentence winners, significance tests, "
                    "system ordering and Bradley-Terry scores for pairwise "
                    "MT judgments (Bozka export or WMT/Appraise CSV). "
                    "Direct Assessment files (Bozka's da-judgments export, "
                    "WMT's DA files: --format wmt-da) are detected and have "
                    "options of their own (analyse DA-FILE --help), as do "
                    "Error Span Annotation files (--format wmt24-esa|bozka-esa). "
                    "See docs/analysis.md.")
    p.add_argument("input", metavar="INPUT",
                   help="Bozka export (CSV or JSON Lines) or WMT/Appraise CSV")
    p.add_argument("--format", choices=("bozka", "wmt"),
                   help="input format (detected from the header when omitted)")
    p.add_argument("--json", metavar="FILE", help="write every figure as JSON")
    p.add_argument("--csv", metavar="DIR", help="write each table as a CSV file")
    p.add_argument("--plots", metavar="DIR", help="write PNG and SVG charts")
    p.add_argument("--judges", metavar="ID,...",
                   help="keep only these judges (volunteer / judgeID)")
    p.add_argument("--campaign", metavar="SLUG",
                   help="analyse only this campaign of a Bozka export, or "
                        "this language pair (SRCLANG-TRGLANG, as in the file) "
                        "of a WMT file (required when the file holds several)")
    p.add_argument("--alpha", type=alpha_level, default=0.05,
                   help="significance level (default 0.05)")
    correction = p.add_mutually_exclusive_group()
    correction.add_argument("--no-correction", dest="correction",
                            action="store_const", const="none", default="holm",
                            help="do not correct for multiple comparisons "
                                 "(the default is Holm over all pairs)")
    correction.add_argument("--holm", dest="correction", action="store_const",
                            const="holm",
                            help="Holm over all pairs: the default, accepted "
                                 "for compatibility")
    p.add_argument("--test", choices=("sign", "z"), default="sign",
                   help="test of the items unit (and of the judgments "
                        "p-values): exact sign test (default) or z-test "
                        "without continuity correction (as in the paper)")
    p.add_argument("--unit", choices=("margins", "items"), default="margins",
                   help="what decides significance and the ordering: "
                        "per-sentence judgment margins by an exact "
                        "sentence-level sign-flip test (default) or "
                        "per-sentence winners by --test (as in the paper); "
                        "both are reported, with the judgments p-value as "
                        "descriptive only")
    p.add_argument("--z-form", choices=("binomial", "two-proportion"),
                   default="binomial",
                   help="z statistic: normal approximation to the sign test "
                        "(default) or pooled two-proportion test")
    p.add_argument("--bootstrap", type=non_negative, default=1000, metavar="N",
                   help="bootstrap rounds for Bradley-Terry intervals "
                        "(default 1000; 0 to skip)")
    p.add_argument("--bt-ties", choices=TIE_MODELS, default=TIE_MODELS[0],
                   help="Bradley-Terry ties: as ties, Davidson's model "
                        "(default), or as half a win each way")
    p.add_argument("--seed", type=int, default=1,
                   help="bootstrap random seed (default 1)")
    p.add_argument("--ordering", choices=ORDERINGS, default=ORDERINGS[0],
                   help="also rank the systems as WMT did: TrueSkill (WMT14-16) "
                        "or Expected Wins (WMT13), with rank ranges and "
                        "clusters; bt (default) adds nothing to the "
                        "significance ordering and Bradley-Terry scores")
    p.add_argument("--ordering-runs", type=positive, metavar="N",
                   help="runs behind the rank ranges of --ordering (default "
                        "100 TrueSkill runs, 1000 Expected Wins resamples)")
    p.add_argument("--include-controls", action="store_true",
                   help="Bozka input: keep control items")
    p.add_argument("--include-discarded", action="store_true",
                   help="Bozka input: keep discarded judgments")
    p.add_argument("--keep-flagged", action="store_true",
                   help="Bozka input: keep answers that do not count for "
                        "research (held, dismissed or untested volunteers, "
                        "answers too fast to have been read); left out by default")
    p.add_argument("--decisions", metavar="FILE",
                   help="the campaign's decisions export (CSV or JSON Lines): "
                        "pairs decided while it ran keep their sequential "
                        "decision, the others get one exact sign test of "
                        "sentences won at the remaining level (Holm), so the "
                        "family-wise error stays at --alpha")
    p.add_argument("--quiet", action="store_true",
                   help="do not print the tables")
    return p


def _load(args):
    data = load(args.input, args.format, include_controls=args.include_controls,
                include_discarded=args.include_discarded, keep_flagged=args.keep_flagged,
                campaign=args.campaign)
    for warning in data.warnings:   # e.g. a WMT file's columns not used
        say(f"warning: {warning}")
    if args.judges:
        wanted = [j.strip() for j in args.judges.split(",") if j.strip()]
        missing = unknown_judges(data, wanted)
        if len(missing) == len(wanted):
            raise InputError(args.input, 1, "none of the judges given with "
                             "--judges occurs in the file")
        if missing:
            say(f"warning: judges not found: {', '.join(missing)}")
        before = len(data)
        data = filter_judges(data, wanted)
        data.counts["skipped_other_judges"] = before - len(data)
        if len(data.systems) < 2:
            raise InputError(args.input, 1, "the selected judges compared "
                             "fewer than two systems")
    return data


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        data = _load(args)
        sequential = None
        if args.decisions:
            sequential = read_decisions(args.decisions, data, args.campaign)
            if not sequential["level"] < args.alpha:
                raise InputError(args.decisions, sequential["pairs"][0]["line"],
                                 f"level {sequential['level']:g} is not below --alpha "
                                 f"{args.alpha:g}: nothing is left for the final look")
    except InputError as exc:
        say(str(exc))
        return 2
    result = analyse(data, alpha=args.alpha, test=args.test,
                     correction=args.correction, unit=args.unit,
                     z_form=args.z_form, rounds=args.bootstrap, seed=args.seed,
                     bt_ties=args.bt_ties, sequential=sequential)
    result["settings"]["include_controls"] = args.include_controls
    result["settings"]["include_discarded"] = args.include_discarded
    result["settings"]["keep_flagged"] = args.keep_flagged
    result["settings"]["judges"] = args.judges.split(",") if args.judges else None
    result["settings"]["campaign"] = args.campaign
    result["settings"]["ordering"] = args.ordering
    if args.ordering != "bt":
        runs = args.ordering_runs
        if runs is None:
            runs = DEFAULT_RUNS[args.ordering]
        result["rank_ordering"] = rank_ordering(data, args.ordering, runs, args.seed)
    result["input"]["warnings"] = list(data.warnings)

    from . import report

    def plots(result, directory):
        from .plots import write_plots      # matplotlib only when charts are asked for
        write_plots(result, directory)

    return emit(result, args, report.text_report, report.write_csv, plots)

