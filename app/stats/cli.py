"""Command line of ``scripts/analyse.py``: hands the input to the command
line of its protocol (``app.stats.formats``: pairwise, DA, ESA), which
parses the options and prints or writes the analysis.

Exit status: 0 on success, 2 on bad input or bad arguments (with a one-line
``analyse: FILE:LINE: message`` on stderr), 1 when an output file cannot be
written.  Nothing is written unless the whole input was read.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys

from . import formats

__all__ = ["main", "protocol_for"]


def main(argv=None) -> int:
    return protocol_for(argv).main(argv)


def protocol_for(argv=None):
    """The protocol (``app.stats.formats``) whose command line reads this
    input: the one of ``--format``, or, without it, the one that recognises
    the input file; the default (pairwise) when none does, or when the
    arguments cannot be read (its parser then says why)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    own = argparse.ArgumentParser(add_help=False)   # --format and the protocols' values
    own.add_argument("--format")
    for option in formats.value_options():
        own.add_argument(option)
    known, rest = own.parse_known_args(argv)
    if known.format is not None:
        return formats.by_format(known.format) or formats.DEFAULT
    # the default's parser knows which of its options take a value, so it finds
    # INPUT; its errors are left for the real parse to show, --help for the protocol's
    quiet = io.StringIO()
    try:
        with contextlib.redirect_stderr(quiet), contextlib.redirect_stdout(quiet):
            args = formats.DEFAULT.build_parser().parse_known_args(
                [a for a in rest if a not in ("-h", "--help")])[0]
    except SystemExit:
        return formats.DEFAULT
    return formats.by_file(args.input)
