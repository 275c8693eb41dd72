"""Direct Assessment quality control (Graham et al., seed 000, sections
3.4-3.5), as plain functions of values.

A quality-control item pairs with an original the volunteer already scored:
a *bad reference* (the same translation, degraded), an *exact repeat*, or,
when the campaign has references, *the reference* shown as a translation.
"""
import statistics

from .quality import digest

BAD_REFERENCE = "bad_reference"
REPEAT = "repeat"
REFERENCE = "reference"
KINDS = (BAD_REFERENCE, REPEAT, REFERENCE)

# Stored reason codes of the live rule.
NOT_LOWER = "bad_references_not_lower"
LOW_VARIATION = "scores_barely_vary"


def words_to_delete(n):
    """How many words the seed deletes from an n-word translation for an
    adequacy bad reference (0: too short to degrade)."""
    if n < 2:
        return 0
    for longest, deleted in ((3, 1), (5, 2), (8, 3), (15, 4), (20, 5)):
        if n <= longest:
            return deleted
    return n // 5


def _units(text):
    """Words, or characters for a text written without spaces (Thai,
    Japanese...), and the string that joins them back."""
    words = text.split()
    if len(words) == 1 and len(words[0]) > 1:
        return list(words[0]), ""
    return words, " "


def degrade_adequacy(text, rng):
    """The adequacy bad reference: a random run of words deleted, emulating
    an omitted phrase; None when the text is too short to degrade."""
    units, joiner = _units(text)
    k = words_to_delete(len(units))
    if k == 0:
        return None
    start = rng.randrange(len(units) - k + 1)
    return joiner.join(units[:start] + units[start + k:])


def fluency_gaps(n, first):
    """The gaps (0 = before the first word, n = after the last) where the
    pair of words starting at ``first`` may be copied: not string-initial or
    final, not inside or next to the pair itself."""
    return [gap for gap in range(1, n) if gap not in (first, first + 1, first + 2)]


def degrade_fluency(text, rng):
    """The fluency bad reference: two neighbouring words duplicated
    elsewhere in the string (never next to themselves, never first or last);
    None when the text is too short (under four words)."""
    units, joiner = _units(text)
    choices = [(first, gap) for first in range(len(units) - 1) for gap in fluency_gaps(len(units), first)]
    if not choices:
        return None
    first, gap = choices[rng.randrange(len(choices))]
    return joiner.join(units[:gap] + units[first:first + 2] + units[gap:])


def is_quality_position(position, share_percent, seed):
    """Whether the volunteer's item ``position`` should be a quality-control
    item (if one is due): drawn from the secret seed, so that about
    ``share_percent`` of the items are, at places nobody can predict."""
    return digest(f"{seed}:qc:{position}") % 100 < share_percent


def quality_kind(seed, original_position, has_reference):
    """The kind of quality-control item an original gets: bad references,
    repeats and references in equal shares, as in the seed's HIT (no
    reference items when the campaign has no references)."""
    kinds = KINDS if has_reference else KINDS[:2]
    return kinds[digest(f"{seed}:kind:{original_position}") % len(kinds)]


def shown_translation(kind, text, degraded, reference):
    """The translation an item of ``kind`` shows (None: a test item or a
    repeat): the system's ``text``, its bad reference, or the reference."""
    return {BAD_REFERENCE: degraded, REFERENCE: reference}.get(kind, text)


def due_original(position, originals, distance):
    """The original to pair now, or None: the earliest of ``originals``
    (positions of scored originals without a quality-control item yet) at
    least ``distance`` items before ``position``."""
    ready = [p for p in originals if p <= position - distance]
    return min(ready) if ready else None


def optimiser_reason(bad_pairs, scores, min_pairs, min_spread):
    """Why a volunteer is an aggressive optimiser, or None.

    ``bad_pairs``: (original score, bad-reference score) of each pair they
    completed; ``scores``: all their scores. Nothing is decided before
    ``min_pairs`` pairs. Then, as the seed recommends, only clear cases: bad
    references scored no lower than their originals on average, or scores
    whose standard deviation is under ``min_spread`` points.
    """
    if len(bad_pairs) < min_pairs or not bad_pairs:
        return None
    drop = statistics.fmean(original - bad for original, bad in bad_pairs)
    if drop <= 0:
        return NOT_LOWER
    if len(scores) > 1 and statistics.stdev(scores) < min_spread:
        return LOW_VARIATION
    return None
