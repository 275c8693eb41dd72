"""Known-worse variants of a translation, shared by the protocols (pairwise
generated controls, DA bad references) and the control pools made from
held-out sentences (``control_pool``): Graham et al.'s bad reference, a
run of words replaced by as many words taken from elsewhere in the campaign,
so the variant keeps the original's length in words and reads like the
campaign's language. Plain functions of values."""


def units(text):
    """Words, or characters for a text written without spaces (Thai,
    Japanese...), and the string that joins them back."""
    words = text.split()
    if len(words) == 1 and len(words[0]) > 1:
        return list(words[0]), ""
    return words, " "


def span_length(n):
    """How many of an n-word translation's words the bad reference changes
    (the seed's table; 0: too short to degrade)."""
    if n < 2:
        return 0
    for longest, changed in ((3, 1), (5, 2), (8, 3), (15, 4), (20, 5)):
        if n <= longest:
            return changed
    return n // 5


def replace_span(text, donor, rng):
    """``text`` with a random run of ``span_length`` words replaced by as many
    consecutive words of ``donor`` (another text of the campaign); None when
    ``text`` is too short, ``donor`` shorter than the run, or the result
    would not differ from ``text``."""
    own, joiner = units(text)
    k = span_length(len(own))
    taken, _joiner = units(donor)
    if k == 0 or len(taken) < k:
        return None
    start = rng.randrange(len(own) - k + 1)
    first = rng.randrange(len(taken) - k + 1)
    changed = own[:start] + taken[first:first + k] + own[start + k:]
    if changed == own:
        return None
    return joiner.join(changed)


def known_worse(text, donor, rng, avoid=()):
    """The known-worse side of a control whose better side is ``text``
    (``replace_span`` with words of ``donor``), as generated controls and
    made pools (``control_pool``) build it; None when it cannot be made or
    would be one of ``avoid``: another translation of the same source is
    no known-worse one."""
    worse = replace_span(text, donor, rng)
    return None if worse is None or worse in avoid else worse
