"""Repeat items of a pairwise campaign: a volunteer's earlier test item shown
to them again, so a campaign can measure intra-annotator agreement as WMT
does (the same judge's judgments of the same item; app/stats/agreement.py).
The rules are plain functions of values; ``protocol`` serves them.
"""
from ...services.quality import digest

REPEAT = "repeat"  # Item.qc_kind of a pairwise repeat (its original: Item.original_item_id)
# Never items 1-2: a new volunteer's first items are their first impression of the task.
FIRST_POSITION = 3


def is_repeat_position(position, share, seed, control=False):
    """Whether the volunteer's item at ``position`` is a repeat (when an
    original is due): never a control's place, never items 1-2, else about
    ``share`` in 100, drawn from the volunteer's secret ``seed`` so nobody
    can tell where theirs are."""
    if not share or control or position < FIRST_POSITION:
        return False
    return digest(f"{seed}:repeat:{position}") % 100 < share


def original_range(position, distance, drawn, window):
    """(earliest, latest): the repeat at ``position`` may show again the
    item at a position p with earliest < p <= latest, the latest first. ``drawn`` (0 .. distance) adds
    to the minimum ``distance`` so the gap is not always the same; ``window``
    bounds how far back is looked, so the look-up costs the same at any
    position."""
    latest = position - distance - drawn
    return latest - window, latest
