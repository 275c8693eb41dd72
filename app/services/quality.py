"""Quality rules every protocol shares, as plain functions of values: the
secret a volunteer's checks are drawn from (``volunteer_seed``, ``digest``),
the reading floor, and who counts. A protocol's own checks are in its
package (pairwise's control sentences: ``protocols/pairwise/controls.py``;
DA's: ``protocols/da/quality.py``)."""
import hashlib


def volunteer_seed(salt, participation_id):
    """The secret a volunteer's controls and their places are drawn from:
    the campaign's (unpublished) salt and the participation's id."""
    return f"{salt}:{participation_id}"


def digest(text):
    """A number from the SHA-256 of ``text``: unpredictable without the salt."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def too_fast(seconds, words, seconds_per_word=0.0375, minimum=0.5):
    """Faster than anyone can read the item: ``words`` of the source and both
    translations (the campaign's reading floor). Such an answer is stored,
    marked, and counts toward no ticket or ranking place."""
    if not seconds_per_word:
        return False
    return seconds < max(minimum, words * seconds_per_word)


# Who counts (issue 29): the one rule of the dashboard's figures, the
# analysis and the raffle. Reason codes, in the order a volunteer with
# several is counted under.
DISMISSED = "dismissed"  # by a live rule (pairwise controls, DA's clear optimisers)
HELD = "held"  # held for review, until an organiser clears the hold
DROPPED = "dropped"  # left out by the analysis's judge test (DA quality control)
UNTESTED = "untested"  # pairwise: before the first check of their controls
WHO_COUNTS = (DISMISSED, HELD, DROPPED, UNTESTED)


def left_out_volunteer(*, dismissed, held, dropped=False, untested=False):
    """Why a volunteer's answers do not count in the dashboard's figures and
    the analysis, and their raffle tickets not in the draw, or None: they
    count. A DA judge the judge test cannot test yet is kept (WMT's rule),
    so DA passes ``untested`` False; pairwise passes whether their controls
    were checked yet."""
    for reason, flag in zip(WHO_COUNTS, (dismissed, held, dropped, untested)):
        if flag:
            return reason
    return None
