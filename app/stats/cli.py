"""Command line of ``scripts/analyse.py``.

Exit status: 0 on success, 2 on bad input or bad arguments (with a one-line
``analyse: FILE:LINE: message`` on stderr), 1 when an output file cannot be
written.
"""

from __future__ import annotations

import argparse
import sys

from .analysis import analyse
from .loader import InputError, filter_judges, load, unknown_judges

__all__ = ["build_parser", "main"]


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError("must be between 0 and 1")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must not be negative")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="analyse",
        description="Agreement, per-sentence winners, significance tests, "
                    "system ordering and Bradley-Terry scores for pairwise "
                    "MT judgments (Bozka export or WMT/Appraise CSV). "
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
    p.add_argument("--alpha", type=_alpha, default=0.05,
                   help="significance level (default 0.05)")
    p.add_argument("--holm", action="store_true",
                   help="Holm-correct the p-values over all pairs")
    p.add_argument("--test", choices=("z", "sign"), default="z",
                   help="test deciding significance: z-test (default, as in "
                        "the paper) or exact sign test")
    p.add_argument("--z-form", choices=("binomial", "two-proportion"),
                   default="binomial",
                   help="z statistic: normal approximation to the sign test "
                        "(default) or pooled two-proportion test")
    p.add_argument("--bootstrap", type=_non_negative, default=1000, metavar="N",
                   help="bootstrap rounds for Bradley-Terry intervals "
                        "(default 1000; 0 to skip)")
    p.add_argument("--seed", type=int, default=1,
                   help="bootstrap random seed (default 1)")
    p.add_argument("--include-controls", action="store_true",
                   help="Bozka input: keep control items")
    p.add_argument("--include-discarded", action="store_true",
                   help="Bozka input: keep discarded judgments")
    p.add_argument("--quiet", action="store_true",
                   help="do not print the tables")
    return p


def _load(args):
    data = load(args.input, args.format, include_controls=args.include_controls,
                include_discarded=args.include_discarded)
    if args.judges:
        wanted = [j.strip() for j in args.judges.split(",") if j.strip()]
        missing = unknown_judges(data, wanted)
        if len(missing) == len(wanted):
            raise InputError(args.input, 1, "none of the judges given with "
                             "--judges occurs in the file")
        if missing:
            print(f"analyse: warning: judges not found: {', '.join(missing)}",
                  file=sys.stderr)
        before = len(data)
        data = filter_judges(data, wanted)
        data.counts["skipped_other_judges"] = before - len(data)
        if len(data.systems) < 2:
            raise InputError(args.input, 1, "the selected judges compared "
                             "fewer than two systems")
    return data


def main(argv=None) -> int:
    from . import da_cli
    if da_cli.wants_da(argv):   # Direct Assessment input: its own options and analysis
        return da_cli.main(argv)
    args = build_parser().parse_args(argv)
    try:
        data = _load(args)
    except InputError as exc:
        print(f"analyse: {exc}", file=sys.stderr)
        return 2
    result = analyse(data, alpha=args.alpha, use_holm=args.holm, test=args.test,
                     z_form=args.z_form, rounds=args.bootstrap, seed=args.seed)
    result["settings"]["include_controls"] = args.include_controls
    result["settings"]["include_discarded"] = args.include_discarded
    result["settings"]["judges"] = args.judges.split(",") if args.judges else None

    from . import report

    if not args.quiet:
        sys.stdout.write(report.text_report(result))
    target = None
    try:
        if args.json:
            target = args.json
            report.write_json(result, args.json)
        if args.csv:
            target = args.csv
            report.write_csv(result, args.csv)
        if args.plots:
            target = args.plots
            from .plots import write_plots
            write_plots(result, args.plots)
    except OSError as exc:
        print(f"analyse: cannot write {target}: {exc.strerror or exc}",
              file=sys.stderr)
        return 1
    return 0
