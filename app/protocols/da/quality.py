"""Direct Assessment quality control (Graham et al., seed 000, sections
3.4-3.5), as plain functions of values.

A quality-control item pairs with an original the volunteer already scored:
a *bad reference* (the same translation, degraded), an *exact repeat*, or,
when the campaign has references, *the reference* shown as a translation.
"""
from ...services import degrade
from ...services.quality import digest
from ...services.score_quality import BAD_REFERENCE, REPEAT
from ...services.texts import same_output

REFERENCE = "reference"
KINDS = (BAD_REFERENCE, REPEAT, REFERENCE)


def fluency_gaps(n, first):
    """Where (index of the first of two overwritten words) the pair of words
    starting at ``first`` may be copied over two others: not string-initial
    or final, not over or next to the pair itself."""
    return [gap for gap in range(1, n - 2) if gap + 2 < first or gap > first + 2]


def degrade_fluency(text, rng):
    """The fluency bad reference: two neighbouring words copied elsewhere in
    the string (never next to themselves, never first or last), over two
    others, so the length stays the original's; None when the text is too
    short (under six words)."""
    units, joiner = degrade.units(text)
    choices = [(first, gap) for first in range(len(units) - 1) for gap in fluency_gaps(len(units), first)]
    if not choices:
        return None
    first, gap = choices[rng.randrange(len(choices))]
    changed = units[:gap] + units[first:first + 2] + units[gap + 2:]
    return joiner.join(changed) if changed != units else None

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


def reference_check_possible(reference, outputs):
    """Whether a sentence's reference may be shown as a reference check:
    there is one and it is none of the sentence's system ``outputs`` (spaces
    aside), or the "reference" would be a system's translation."""
    return reference is not None and not any(same_output(reference, text) for text in outputs)


def reference_warnings(references, outputs):
    """The importer's warning naming the lines whose reference is a
    system's output: those sentences get no reference checks."""
    same = [n for n, reference in enumerate(references, start=1)
            if not reference_check_possible(reference, [lines[n - 1] for lines in outputs.values()])]
    if not same:
        return []
    shown = ", ".join(map(str, same[:10])) + (", ..." if len(same) > 10 else "")
    return [f"{len(same)} of {len(references)} references are a system's output (lines {shown}): "
            "those sentences are never shown as reference checks"]


def due_original(position, originals, distance):
    """The original to pair now, or None: the earliest of ``originals``
    (positions of scored originals without a quality-control item yet) at
    least ``distance`` items before ``position``."""
    ready = [p for p in originals if p <= position - distance]
    return min(ready) if ready else None

# The first checks' schedule (issue 28): before a volunteer's first raffle
# ticket, a denser schedule of bad references, at a shorter distance.
EARLY_DISTANCE = 2  # items between an early pair's two members



def is_early(position, raffle_every):
    """Whether item ``position`` comes before the volunteer's first ticket."""
    return position <= raffle_every


def is_early_quality_position(position, raffle_every, seed):
    """Whether early item ``position`` is a quality-control item: half of
    the items up to the first ticket, at places drawn from the secret seed
    (a fixed count, so that enough pairs are complete by then)."""
    places = sorted(range(1, raffle_every + 1), key=lambda p: digest(f"{seed}:early:{p}"))
    return position in places[:raffle_every // 2]
