"""Statistics for Bozka campaigns (Flask-free).

Only the standard library, numpy and scipy are imported here; matplotlib is
imported lazily inside :mod:`app.stats.plots`.  Typical use::

    from app.stats import load, analyse
    result = analyse(load("judgments.csv"))

Direct Assessment scores (0-100) have their own reader and analysis::

    from app.stats import load_da, analyse_da
    result = analyse_da(load_da("da-judgments.csv"))

Each protocol other than pairwise is a subpackage (``da``, ``esa``) that
``formats`` registers for the command line.

See docs/analysis.md for every rule and the JSON schema.
"""

from .analysis import analyse
from .da import DAScores, analyse_da, load_da
from .loader import InputError, Judgments, filter_judges, from_records, load

__all__ = ["DAScores", "InputError", "Judgments", "analyse", "analyse_da",
           "filter_judges", "from_records", "load", "load_da"]
