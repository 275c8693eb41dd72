"""Times and percentages as people read them, in the interface language
(Babel), for the templates (the ``utc`` and ``percent`` filters). Counts
and decimals use Flask-Babel's own filters (numberformat, decimalformat)."""
from datetime import datetime

from flask_babel import format_datetime, format_percent, get_locale
from flask_babel import gettext as _


def utc(value, format="medium"):
    """A stored time (naive UTC, or ISO text) with its zone named."""
    if value is None:
        return ""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return _("%(time)s UTC", time=format_datetime(value, format))


def percent(share, decimals=1):
    """``share`` (0.0681) as a percentage in the language's own pattern
    ("6.8%", "6,8 %", "% 6,8"), with up to ``decimals`` decimals; "–" for None."""
    if share is None:
        return "–"
    pattern = get_locale().percent_formats[None].pattern
    if decimals:
        pattern = pattern.replace("0", "0." + "#" * decimals, 1)
    return format_percent(share, pattern)


def iso_utc(value):
    """A stored (naive UTC) time as the exports write it: to the second, with a Z; None stays None."""
    return value.isoformat(timespec="seconds") + "Z" if value is not None else None
