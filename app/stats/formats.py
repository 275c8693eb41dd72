"""The registry of input formats: which protocol's command line reads a
file.  ``cli.py`` asks it instead of naming a protocol.

A protocol subpackage has ``NAME``, ``FORMATS`` (its ``--format`` values),
``VALUE_OPTIONS`` (its options that take a value, unknown to the default's
parser, so that the input file can be found among the arguments),
``sniff(path)`` (the format of a file, or None when it is not the
protocol's) and ``main(argv)`` (its command line; exit status as ``cli.main``).
The default, pairwise, also has ``build_parser()``: its parser finds the
input file.
"""

from __future__ import annotations

from . import da, esa, pairwise

__all__ = ["DEFAULT", "PROTOCOLS", "by_format", "by_file", "value_options"]

# pairwise last: its sniff takes any JSON Lines file for a Bozka export
PROTOCOLS = (da, esa, pairwise)
#: reads what no protocol recognises, so that its loader says what is wrong
DEFAULT = pairwise


def by_format(name: str):
    """The protocol whose ``--format`` value this is, or None."""
    return next((p for p in PROTOCOLS if name in p.FORMATS), None)


def by_file(path: str):
    """The first protocol that recognises the file, else the default."""
    return next((p for p in PROTOCOLS if p.sniff(path) is not None), DEFAULT)


def value_options() -> tuple[str, ...]:
    """Every protocol's options that take a value."""
    return tuple(option for p in PROTOCOLS for option in p.VALUE_OPTIONS)
