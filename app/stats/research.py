"""Which answers count for research: the one rule the exports, the
organisers' dashboard and ``scripts/analyse.py`` share (docs/export-format.md,
"Why an answer may not count").

An answer carries flags, each a column of the exports: ``is_control`` (a
pairwise control, not research data), ``discarded`` (its volunteer was
dismissed and the judgment marked so), ``dismissed`` (the volunteer is
dismissed), ``held`` (the volunteer is held for review), ``untested`` (the
volunteer has not yet answered enough quality checks to be judged) and
``too_fast`` (answered below the reading floor). An answer counts when none
is set; one that does not is counted under the first of ``REASONS`` it has,
so that every left-out answer is counted once, the same way everywhere.
"""

from __future__ import annotations

#: The reasons an answer may not count, in the order an answer with several
#: is counted under.
REASONS = ("control", "discarded", "dismissed", "held", "untested", "too_fast")
#: The column of the exports each reason is read from.
COLUMNS = {"control": "is_control", "discarded": "discarded", "dismissed": "dismissed",
           "held": "held", "untested": "untested", "too_fast": "too_fast"}
#: The exports' columns of flags after ``discard_reason`` (``left_out``: the
#: reason the answer does not count, empty when it counts).
FLAG_COLUMNS = ("too_fast", "dismissed", "held", "held_reason", "untested", "left_out")
#: The reasons ``--keep-flagged`` keeps (the volunteer's and the answer's
#: flags; controls and discarded judgments have options of their own).
FLAGGED = ("dismissed", "held", "untested", "too_fast")

#: The key of an analysis's ``input.counts`` for the rows left out for each reason.
SKIPPED = {reason: f"skipped_{reason}" for reason in REASONS} | {
    "control": "skipped_controls", "discarded": "skipped_discarded"}


def kept_reasons(include_controls=False, include_discarded=False, keep_flagged=False):
    """The reasons the analysis's options make no reason; the judgments of a
    dismissed volunteer are discarded, so ``include_discarded`` keeps both."""
    return (("control",) if include_controls else ()) + \
        (("discarded", "dismissed") if include_discarded else ()) + (FLAGGED if keep_flagged else ())


def left_out(flags, keep=()) -> str | None:
    """The reason the answer with ``flags`` (reason -> bool; a missing one is
    false) does not count for research, or None when it counts. Reasons in
    ``keep`` are not reasons."""
    for reason in REASONS:
        if flags.get(reason) and reason not in keep:
            return reason
    return None
