"""Statistics for Bozka campaigns (Flask-free).

Only the standard library, numpy and scipy are imported here; matplotlib is
imported lazily inside :mod:`app.stats.plots`.  Typical use::

    from app.stats import load, analyse
    result = analyse(load("judgments.csv"))

See docs/analysis.md for every rule and the JSON schema.
"""

from .analysis import analyse
from .loader import InputError, Judgments, filter_judges, from_records, load

__all__ = ["InputError", "Judgments", "analyse", "filter_judges",
           "from_records", "load"]
