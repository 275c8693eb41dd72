"""Command line for ESA input; ``app.stats.cli.main`` hands over to
:func:`main` when ``app.stats.formats`` says the input is ESA.

    python scripts/analyse.py INPUT [--format wmt24-esa|bozka-esa]
        [--documents DOCS] [--json FILE] [--csv DIR] [--alpha 0.05] [--quiet]

Exit status as for the other protocols: 0 on success, 2 on bad input or
arguments, 1 when an output file cannot be written.
"""

from __future__ import annotations

import argparse

from ..arguments import alpha_level, emit, say
from ..reading import InputError
from .analysis import analyse_esa
from .reader import ESA_FORMATS, load_esa

__all__ = ["build_esa_parser", "main"]


def build_esa_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="analyse",
        description="Error Span Annotation (0-100 scores with error spans) analysis as "
                    "WMT24 ran it: system scores per domain, error spans, Wilcoxon "
                    "signed-rank per domain combined by Stouffer, rank ranges and "
                    "clusters (WMT24 ESA CSV, Bozka's ESA export). See docs/analysis.md.")
    p.add_argument("input", metavar="INPUT", help="WMT24 ESA CSV or Bozka ESA export")
    p.add_argument("--format", choices=ESA_FORMATS,
                   help="input format (detected from the first line when omitted)")
    p.add_argument("--documents", metavar="DOCS",
                   help="the test set's documents file (domain TAB document per segment, "
                        "the first line a canary); without it, the file's own domains or "
                        "one domain for all")
    p.add_argument("--json", metavar="FILE", help="write every figure as JSON")
    p.add_argument("--csv", metavar="DIR", help="write each table as a CSV file")
    p.add_argument("--alpha", type=alpha_level, default=0.05,
                   help="significance level of wins, rank ranges and clusters (default 0.05)")
    p.add_argument("--quiet", action="store_true", help="do not print the tables")
    return p


def main(argv=None) -> int:
    args = build_esa_parser().parse_args(argv)
    try:
        data = load_esa(args.input, args.format, args.documents)
    except InputError as exc:
        say(str(exc))
        return 2
    for warning in data.warnings:
        say(f"warning: {warning}")
    result = analyse_esa(data, alpha=args.alpha)
    result["settings"]["documents"] = args.documents

    from . import report
    return emit(result, args, report.text_report, report.write_csv, None)
