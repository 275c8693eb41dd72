"""Pairwise control sentences (paper, section 3): where a volunteer meets
them, which of a pool they are served, how large a pool must be, and when
their answers end participation. Plain functions of values."""
import heapq
import math
import random
from fractions import Fraction

from ...services.quality import digest

# Stored reason codes (Participation.dismissed_reason; labels in choices.DISMISSAL_REASONS).
INITIAL_CONTROL_FAILED = "first_controls_failed"
CONTROL_FAILURE_RATE = "control_share_exceeded"


PLACEMENTS = ("fixed", "random")
# Where a pairwise campaign's controls come from (docs/campaign-format.md):
# made for each volunteer from the campaign's own outputs, or the imported pool.
GENERATED = "generated"
IMPORTED = "imported"
CONTROL_SOURCES = (GENERATED, IMPORTED)


def control_offset(seed, block, every):
    """Where the control sits (0 .. every-1) in the volunteer's ``block``-th
    block of ``every`` items after the first controls (random placement)."""
    return digest(f"{seed}:block:{block}") % every


def control_block(position, first, every, early_items=0, early_every=0):
    """The block of item ``position`` after the first controls, as (key,
    place in the block, block size): blocks of ``early_every`` items up to
    item ``early_items`` (a new volunteer's denser controls), then blocks of
    ``every``. Keys of the early blocks are their own, so no draw repeats."""
    early = max(0, early_items - first) if early_every else 0
    if position - first <= early:
        block, place = divmod(position - first - 1, early_every)
        return f"early:{block}", place, early_every
    block, place = divmod(position - first - early - 1, every)
    return block, place, every


def is_control_position(position, first=2, every=5, placement="fixed", seed="", early_items=0, early_every=0):
    """Whether item ``position`` of the volunteer with ``seed`` is a control.

    Items 1..first are controls. Up to item ``early_items`` one in
    ``early_every`` is (0: no early window), after that one in ``every``:
    "fixed" puts it last in each block (the paper's schedule, every
    ``every``-th item, when there is no early window); "random" puts it at a
    place drawn from the seed, so a volunteer cannot tell which item of the
    block it is.
    """
    if position < 1:
        raise ValueError("positions start at 1")
    if position <= first:
        return True
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown control placement {placement!r}")
    if placement == "fixed" and not (early_every and early_items > first):
        return position % every == 0
    key, place, size = control_block(position, first, every, early_items, early_every)
    if placement == "fixed":
        return place == size - 1
    return place == control_offset(seed, key, size)


def volunteer_controls(control_ids, per_volunteer, seed):
    """The controls a volunteer is served from, sorted: the whole pool when
    ``per_volunteer`` is 0 (or not below the pool), else the ``per_volunteer``
    with the smallest digest of seed and id, so throwaway accounts reveal
    only their own subsets."""
    if not per_volunteer or per_volunteer >= len(control_ids):
        return sorted(control_ids)
    return sorted(heapq.nsmallest(per_volunteer, control_ids, key=lambda cid: digest(f"{seed}:{cid}")))


# The importer's warning: how many accounts an attacker (or a ring of
# volunteers sharing answers) is assumed to have, and how much of another
# volunteer's controls they may know before the pool counts as small.
THROWAWAY_ACCOUNTS = 5
SHARING_ONE_IN = 100  # of the expected volunteers, one in this many shares what they saw
MAX_REVEALED = 0.5


def revealing_accounts(expected_volunteers):
    """Accounts assumed to pool what their controls were."""
    return max(THROWAWAY_ACCOUNTS, math.ceil(expected_volunteers / SHARING_ONE_IN))


def revealed_share(pool, per_volunteer, accounts):
    """Expected share of one volunteer's controls that ``accounts`` other
    accounts were served (each with its own independent subset)."""
    each = 1.0 if not per_volunteer or per_volunteer >= pool else per_volunteer / pool
    return 1 - (1 - each) ** accounts


def pool_size(per_volunteer, expected_volunteers):
    """The least pool from which ``revealing_accounts`` accounts know no more
    than ``MAX_REVEALED`` of a volunteer's ``per_volunteer`` controls."""
    accounts = revealing_accounts(expected_volunteers)
    return math.ceil(per_volunteer / (1 - (1 - MAX_REVEALED) ** (1 / accounts)))


def pool_warning(pool, per_volunteer, expected_volunteers):
    """Why the pool of ``pool`` controls is small for the expected number of
    volunteers, or None: ``revealing_accounts`` accounts would know more
    than ``MAX_REVEALED`` of any volunteer's controls (docs/campaign-format.md)."""
    accounts = revealing_accounts(expected_volunteers)
    share = revealed_share(pool, per_volunteer, accounts)
    if share <= MAX_REVEALED:
        return None
    if not per_volunteer or per_volunteer >= pool:
        return (
            f"every volunteer is served from the same {pool} controls: one account that has seen them "
            "reveals every answer; set controls_per_volunteer and give a larger pool"
        )
    enough = pool_size(per_volunteer, expected_volunteers)
    return (
        f"the pool of {pool} controls is small: {accounts} accounts would have seen about {share:.0%} of any "
        f"volunteer's {per_volunteer} controls (expected volunteers: {expected_volunteers}); "
        f"at least {enough} controls keep it to half"
    )


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


def may_dismiss(position, *, check_every):
    """Whether ``dismissal_reason`` can dismiss after item ``position``: only
    at a check. Elsewhere the results need not be read."""
    return position % check_every == 0


def dismissal_reason(position, results, *, first, check_every, cutoff, window=0):
    """Why the volunteer must stop after answering item ``position``, or None.

    ``results`` are the pass/fail outcomes of every control answered so far,
    oldest first. Nothing is decided between checks (every ``check_every``-th
    item, just before a raffle ticket would be given): failing any of the
    first ``first`` controls ends participation at the first check, with the
    same reason whichever failed, so the answer does not tell which item was
    a control (issue 28); then the failure share must not exceed ``cutoff``.
    """
    if position % check_every:
        return None
    if not all(results[:first]):
        return INITIAL_CONTROL_FAILED
    if failure_share(results, window) > Fraction(cutoff):
        return CONTROL_FAILURE_RATE
    return None


def control_draw(seed, position):
    """The random source a generated control at ``position`` is drawn from
    (its sentence, system, replaced words and side): the volunteer's secret
    seed, so each account gets its own controls and nobody can predict them."""
    return random.Random(digest(f"{seed}:control:{position}"))


def controls_needed(sentences, first=2, every=5, placement="fixed", early_items=0, early_every=0):
    """Controls a volunteer meets before judging ``sentences`` sentences (with
    random placement, at most: when each block's control comes first)."""
    position, judged, controls = 0, 0, 0
    while judged < sentences:
        position += 1
        if placement == "random" and position > first:
            control = control_block(position, first, every, early_items, early_every)[1] == 0
        else:
            control = is_control_position(position, first, every, early_items=early_items, early_every=early_every)
        controls += control
        judged += not control
    return controls


# A volunteer must be able to judge this many sentences (or all of them, if
# fewer) before any control has to be shown twice.
CONTROL_COVERAGE = 50


def coverage_controls(settings, sentences):
    """(sentences a volunteer must be able to judge before a control repeats,
    the controls they meet meanwhile): the least pool, and the least
    ``controls_per_volunteer`` other than 0, of an imported pool."""
    covered = min(sentences, CONTROL_COVERAGE)
    return covered, controls_needed(
        covered, settings["control_first"], settings["control_every"], settings["control_placement"],
        settings["early_control_items"], settings["early_control_every"],
    )
