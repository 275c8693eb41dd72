"""Pairwise judgments (which of two translations is better): the Bozka and
WMT/Appraise readers, agreement, winners, significance, ordering and
Bradley-Terry scores, and its command line.  Registered with
``app.stats.formats`` as the default: input no protocol recognises is read
here, so that its loader says what is wrong."""

from .analysis import analyse
from .cli import build_parser, main
from .loader import InputError, Judgments, filter_judges, from_records, load, sniff

NAME = "pairwise"
FORMATS = ("bozka", "wmt")
VALUE_OPTIONS = ()   # the dispatcher finds INPUT with this package's own parser

__all__ = ["FORMATS", "InputError", "Judgments", "NAME", "VALUE_OPTIONS", "analyse", "build_parser",
           "filter_judges", "from_records", "load", "main", "sniff"]
