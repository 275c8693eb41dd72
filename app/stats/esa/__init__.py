"""Error Span Annotation (ESA): reader of WMT24's CSV and Bozka's export,
WMT24's analysis (scores per domain, Wilcoxon and Stouffer, rank ranges,
clusters) with error-span statistics, and its command line.  Registered
with ``app.stats.formats``."""

from .analysis import analyse_esa
from .cli import main
from .reader import ESA_FORMATS as FORMATS, ESAScores, load_esa, sniff_esa as sniff

NAME = "esa"
VALUE_OPTIONS = ("--documents",)

__all__ = ["ESAScores", "FORMATS", "NAME", "VALUE_OPTIONS", "analyse_esa", "load_esa", "main",
           "sniff"]
