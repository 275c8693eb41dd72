"""Command line for Direct Assessment input; ``app.stats.cli.main`` hands
over to :func:`main` when ``app.stats.formats`` says the input is DA.

    python scripts/analyse.py INPUT [--format wmt-da|bozka-da] [--json FILE]
        [--csv DIR] [--plots DIR] [--alpha 0.05] [--pair SRC-TRG]
        [--no-correction] [--clusters wmt21|wmt22] [--bootstrap N] [--seed N]
        [--judge-test t|wilcoxon] [--judge-min-pairs N]
        [--keep-unreliable] [--include-discarded] [--keep-flagged] [--quiet]

Exit status as for pairwise input: 0 on success, 2 on bad input or
arguments, 1 when an output file cannot be written.
"""

from __future__ import annotations

import argparse

from ..arguments import alpha_level, emit, non_negative, say
from ..reading import InputError
from .analysis import analyse_da
from .loader import ALL_PAIRS, DA_FORMATS, load_da
from .quality import DEFAULT_MIN_PAIRS, DEFAULT_TEST, TESTS
from .significance import CLUSTER_RULES

__all__ = ["build_da_parser", "main"]


def build_da_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="analyse",
        description="Direct Assessment (0-100) analysis: judge quality control, "
                    "standardised system scores, Wilcoxon rank-sum significance "
                    "and clusters (Bozka da-judgments export or WMT DA file). "
                    "See docs/analysis.md.")
    p.add_argument("input", metavar="INPUT",
                   help="Bozka da-judgments export (CSV or JSON Lines) or WMT DA file")
    p.add_argument("--format", choices=DA_FORMATS,
                   help="input format (detected from the header when omitted)")
    p.add_argument("--json", metavar="FILE", help="write every figure as JSON")
    p.add_argument("--csv", metavar="DIR", help="write each table as a CSV file")
    p.add_argument("--plots", metavar="DIR", help="write PNG and SVG charts")
    p.add_argument("--alpha", type=alpha_level, default=0.05,
                   help="significance level of system wins and clusters (default 0.05)")
    correction = p.add_mutually_exclusive_group()
    correction.add_argument("--no-correction", dest="correction", action="store_const",
                            const="none", default="holm",
                            help="WMT's uncorrected matrix: each one-sided test at --alpha "
                                 "(the default is Holm over the system pairs)")
    correction.add_argument("--holm", dest="correction", action="store_const", const="holm",
                            help="Holm over the system pairs: the default")
    p.add_argument("--clusters", choices=CLUSTER_RULES, default=CLUSTER_RULES[0],
                   help="cluster rule: wmt21 (WMT21's published clusters, default) or "
                        "wmt22 (no win against the z order)")
    p.add_argument("--bootstrap", type=non_negative, default=1000, metavar="N",
                   help="resamples of judges and sentences for the 95%% interval of z "
                        "(default 1000; 0: the normal interval over segments)")
    p.add_argument("--seed", type=int, default=1, help="bootstrap random seed (default 1)")
    p.add_argument("--campaign", metavar="SLUG",
                   help="Bozka export: analyse only this campaign (required "
                        "when the file holds several)")
    p.add_argument("--pair", metavar="SRC-TRG",
                   help="WMT input: the language pair to analyse when the file "
                        "holds several (Input.src-Input.trg, e.g. hi-bn)")
    p.add_argument("--judge-test", choices=tuple(TESTS), default=DEFAULT_TEST,
                   help="judge quality control: t (WMT's one-sided paired t-test of "
                        "bad-reference scores against their originals, default) or "
                        "wilcoxon (Graham et al.'s paired signed-rank test)")
    p.add_argument("--judge-min-pairs", type=non_negative, metavar="N",
                   help="bad-reference pairs a judge needs to be tested; fewer: "
                        "untested and kept (default " + ", ".join(
                            f"{n} for {t}" for t, n in DEFAULT_MIN_PAIRS.items()) + ")")
    p.add_argument("--keep-unreliable", action="store_true",
                   help="keep judges who fail quality control (p > 0.05)")
    p.add_argument("--include-discarded", action="store_true",
                   help="Bozka input: keep discarded judgments")
    p.add_argument("--keep-flagged", action="store_true",
                   help="Bozka input: keep scores that do not count for research "
                        "(held, dismissed or untested volunteers, scores given too "
                        "fast to have been read); left out by default")
    p.add_argument("--quiet", action="store_true", help="do not print the tables")
    return p


def main(argv=None) -> int:
    args = build_da_parser().parse_args(argv)
    try:
        data = load_da(args.input, args.format, pair=args.pair, campaign=args.campaign,
                       include_discarded=args.include_discarded, keep_flagged=args.keep_flagged)
        # WMT tests a worker on every language pair they judged (quality-control.R)
        whole = load_da(args.input, data.source_format, pair=ALL_PAIRS) \
            if args.pair and data.source_format == "wmt-da" else None
    except InputError as exc:
        say(str(exc))
        return 2
    result = analyse_da(data, alpha=args.alpha, keep_unreliable=args.keep_unreliable,
                        judge_test=args.judge_test, judge_min_pairs=args.judge_min_pairs,
                        correction=args.correction, clusters=args.clusters,
                        bootstrap=args.bootstrap, seed=args.seed, quality_data=whole)
    result["settings"]["include_discarded"] = args.include_discarded
    result["settings"]["keep_flagged"] = args.keep_flagged
    result["settings"]["pair"] = args.pair

    from . import report

    def plots(result, directory):
        from .plots import write_da_plots    # matplotlib only when charts are asked for
        write_da_plots(result, directory)

    return emit(result, args, report.text_report, report.write_csv, plots)
