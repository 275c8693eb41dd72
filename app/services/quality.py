"""Control-sentence rules (paper, section 3), as plain functions of values."""
from fractions import Fraction

INITIAL_CONTROL_FAILED = "failed one of the first control sentences"
CONTROL_FAILURE_RATE = "failed more than the allowed share of control sentences"


def is_control_position(position, first=2, every=5):
    """Items 1..first are controls; after that every ``every``-th item."""
    if position < 1:
        raise ValueError("positions start at 1")
    return position <= first or position % every == 0


def control_passed(better_left, choice):
    """Only the known-better translation passes; "equal" is a failure."""
    return (choice == "left" and better_left) or (choice == "right" and not better_left)


def failure_share(results, window=0):
    """Share of failed controls among ``results`` (booleans, oldest first).

    ``window`` 0 means all controls so far, K > 0 the last K.
    """
    considered = results[-window:] if window else results
    if not considered:
        return Fraction(0)
    return Fraction(sum(1 for passed in considered if not passed), len(considered))


def may_dismiss(position, answered_control, controls_answered, *, first, check_every):
    """Whether ``dismissal_reason`` can dismiss after item ``position``: at a
    check, or for one of the first ``first`` controls (``controls_answered``
    counts this one). Elsewhere the results need not be read."""
    return position % check_every == 0 or (answered_control and controls_answered <= first)


def dismissal_reason(position, answered_control, results, *, first, check_every, cutoff, window=0):
    """Why the volunteer must stop after answering item ``position``, or None.

    ``results`` are the pass/fail outcomes of every control answered so far,
    including this item's when ``answered_control`` is true. Failing any of
    the first ``first`` controls ends participation at once; after that the
    failure share is checked only at every ``check_every``-th item, just
    before a raffle ticket would be given, and must not exceed ``cutoff``.
    """
    if answered_control and len(results) <= first and not results[-1]:
        return INITIAL_CONTROL_FAILED
    if position % check_every == 0 and failure_share(results, window) > Fraction(cutoff):
        return CONTROL_FAILURE_RATE
    return None


def too_fast(seconds, words, seconds_per_word=0.0375, minimum=0.5):
    """Faster than anyone can read the item: ``words`` of the source and both
    translations (the campaign's reading floor). Such an answer is stored,
    marked, and counts toward no ticket or ranking place."""
    if not seconds_per_word:
        return False
    return seconds < max(minimum, words * seconds_per_word)
