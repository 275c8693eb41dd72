"""What every protocol's command line shares: the argument types, the one
line on stderr and the outputs.  Kept apart from ``cli.py`` so that a
protocol's command line never imports the dispatcher that calls it."""

from __future__ import annotations

import argparse
import sys

from .output import printable, write_json

__all__ = ["alpha_level", "emit", "non_negative", "positive", "say"]


def alpha_level(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError("must be between 0 and 1")
    return value


def non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must not be negative")
    return value


def positive(text: str) -> int:
    value = non_negative(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def emit(result, args, text_report, write_csv, write_plots) -> int:
    """Print the report unless ``--quiet`` and write the ``--json``,
    ``--csv`` and ``--plots`` outputs; 1 when one cannot be written.
    ``write_csv`` or ``write_plots`` may be None for a protocol without them."""
    if not args.quiet:
        sys.stdout.write(text_report(result))
    target = None
    try:
        if args.json:
            target = args.json
            write_json(result, args.json)
        if getattr(args, "csv", None):
            target = args.csv
            write_csv(result, args.csv)
        if getattr(args, "plots", None):
            target = args.plots
            write_plots(result, args.plots)
    except OSError as exc:
        say(f"cannot write {target}: {exc.strerror or exc}")
        return 1
    return 0


def say(message: str) -> None:
    """One line on stderr; names in it cannot drive the terminal."""
    print(f"analyse: {printable(message)}", file=sys.stderr)
