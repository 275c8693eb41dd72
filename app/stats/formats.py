"""The registry of input formats beside the pairwise ones: which protocol's
command line reads a file.  ``cli.py`` asks it instead of naming a protocol.

A protocol subpackage has ``NAME``, ``FORMATS`` (its ``--format`` values),
``VALUE_OPTIONS`` (its options that take a value, unknown to the pairwise
parser, so that the input file can be found among the arguments),
``sniff(path)`` (the format of a file, or None when it is not the
protocol's) and ``main(argv)`` (its command line; exit status as ``cli.main``).
"""

from __future__ import annotations

from . import da, esa

__all__ = ["PROTOCOLS", "by_format", "by_file", "value_options"]

PROTOCOLS = (da, esa)


def by_format(name: str):
    """The protocol whose ``--format`` value this is, or None (pairwise)."""
    return next((p for p in PROTOCOLS if name in p.FORMATS), None)


def by_file(path: str):
    """The first protocol that recognises the file, or None (pairwise)."""
    return next((p for p in PROTOCOLS if p.sniff(path) is not None), None)


def value_options() -> tuple[str, ...]:
    """Every protocol's options that take a value."""
    return tuple(option for p in PROTOCOLS for option in p.VALUE_OPTIONS)
