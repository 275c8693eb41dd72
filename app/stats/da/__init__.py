"""Direct Assessment (0-100 scores): reader, judge quality control,
standardised scores, significance and clusters, and its command line.
Registered with ``app.stats.formats``."""

from .analysis import analyse_da
from .cli import main
from .loader import DA_FORMATS as FORMATS, DAScores, load_da, sniff_da as sniff

NAME = "da"
VALUE_OPTIONS = ("--pair",)

__all__ = ["DAScores", "FORMATS", "NAME", "VALUE_OPTIONS", "analyse_da", "load_da", "main", "sniff"]
