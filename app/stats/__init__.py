"""Statistics for Bozka campaigns (Flask-free).

Only the standard library, numpy and scipy are imported here; matplotlib is
imported lazily inside :mod:`app.stats.charts`.  Typical use::

    from app.stats import load, analyse
    result = analyse(load("judgments.csv"))

Direct Assessment scores (0-100) have their own reader and analysis::

    from app.stats import load_da, analyse_da
    result = analyse_da(load_da("da-judgments.csv"))

Each protocol is a subpackage (``pairwise``, ``da``, ``esa``) that
``formats`` registers for the command line; the modules beside them are
what the protocols share (or may: agreement, Bradley-Terry, orderings,
sequential tests, winners, reading, output).

See docs/analysis.md for every rule and the JSON schema.
"""

from .da import DAScores, analyse_da, load_da
from .pairwise import InputError, Judgments, analyse, filter_judges, from_records, load

__all__ = ["DAScores", "InputError", "Judgments", "analyse", "analyse_da",
           "filter_judges", "from_records", "load", "load_da"]
