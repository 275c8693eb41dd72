"""Counts in the command line's messages, which are in English: "1 pair",
"2 pairs" (the web pages' counts go through Babel's ngettext instead)."""
from gettext import ngettext


def counted(n, singular, plural=None):
    """``n`` and the noun, singular for one: counted(1, "control") is "1 control"."""
    return f"{n} {ngettext(singular, plural or singular + 's', n)}"
