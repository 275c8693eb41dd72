"""Unit tests of the control-sentence and raffle rules (pure functions)."""
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.protocols.pairwise import controls as control_rules
from app.protocols.pairwise.controls import controls_needed
from app.services import quality
from app.services.rewards import earns_ticket

RULES = dict(first=2, check_every=10, cutoff=Fraction(1, 3))


def test_control_positions_are_1_2_then_every_5th():
    positions = [p for p in range(1, 31) if control_rules.is_control_position(p)]
    assert positions == [1, 2, 5, 10, 15, 20, 25, 30]


def test_positions_start_at_one():
    with pytest.raises(ValueError):
        control_rules.is_control_position(0)


@pytest.mark.parametrize(
    "better_left, choice, passed",
    [(True, "left", True), (True, "right", False), (False, "right", True), (False, "left", False),
     (True, "equal", False), (False, "equal", False)],
)
def test_only_the_better_translation_passes(better_left, choice, passed):
    assert control_rules.control_passed(better_left, choice) is passed


def test_failing_a_first_control_dismisses_at_the_first_check_whichever_failed():
    # Nothing is said when the control is answered: the answer does not tell it was a control.
    assert control_rules.dismissal_reason(1, [False], **RULES) is None
    assert control_rules.dismissal_reason(2, [True, False], **RULES) is None
    # At the first check, the same reason whether the first or the second failed.
    for results in ([False, True, True], [True, False, True], [False, False, True]):
        assert control_rules.dismissal_reason(10, results, **RULES) == control_rules.INITIAL_CONTROL_FAILED
    assert control_rules.dismissal_reason(10, [True, True, True], **RULES) is None
    # Failing a first control weighs more than the share: 1 of 6 failed, still dismissed.
    assert control_rules.dismissal_reason(20, [False] + [True] * 5, **RULES) == control_rules.INITIAL_CONTROL_FAILED


def test_later_failures_are_only_checked_every_10th_item():
    # Third control (item 5) failed: 1 of 3 is not more than a third; and not a check point.
    assert control_rules.dismissal_reason(5, [True, True, False], **RULES) is None
    # Item 10, controls 1,2,5,10: two failures of four is more than a third.
    assert control_rules.dismissal_reason(10, [True, True, False, False], **RULES) == control_rules.CONTROL_FAILURE_RATE
    # Item 9 is no check point, even with a bad record.
    assert control_rules.dismissal_reason(9, [True, True, False, False], **RULES) is None


def test_exactly_one_third_is_allowed():
    results = [True, True, False, True, True, False]  # 2 of 6 failed
    assert control_rules.dismissal_reason(20, results, **RULES) is None
    assert control_rules.dismissal_reason(20, results + [False], **RULES) == control_rules.CONTROL_FAILURE_RATE


def test_rolling_window_counts_only_the_last_k_controls():
    results = [True, True] + [False] * 3 + [True] * 6  # old failures, recent passes
    assert control_rules.failure_share(results) == Fraction(3, 11)
    assert control_rules.failure_share(results, window=6) == 0
    bad_recent = [True] * 8 + [False, False, True]
    assert control_rules.dismissal_reason(50, bad_recent, window=3, **RULES) == control_rules.CONTROL_FAILURE_RATE
    assert control_rules.dismissal_reason(50, bad_recent, **RULES) is None


@given(st.lists(st.booleans(), min_size=3, max_size=60), st.integers(min_value=3, max_value=400))
def test_dismissal_exactly_when_the_rule_says(results, position):
    reason = control_rules.dismissal_reason(position, results, **RULES)
    failed = results.count(False)
    expected = position % 10 == 0 and (not all(results[:2]) or 3 * failed > len(results))
    assert (reason is not None) == expected
    if reason is not None:
        first_failed = not all(results[:2])
        assert reason == (control_rules.INITIAL_CONTROL_FAILED if first_failed else control_rules.CONTROL_FAILURE_RATE)


@given(st.lists(st.booleans(), min_size=1, max_size=40), st.integers(min_value=1, max_value=400),
       st.integers(min_value=0, max_value=10), st.integers(min_value=1, max_value=12))
def test_where_the_rule_cannot_dismiss_the_results_need_not_be_read(results, position, window, check_every):
    """``may_dismiss`` (which saves reading the results) is False only where
    ``dismissal_reason`` gives None whatever the results; between checks
    nothing is decided, so no answer is told apart by its feedback."""
    if not control_rules.may_dismiss(position, check_every=check_every):
        assert control_rules.dismissal_reason(position, results, first=2, check_every=check_every,
                                        cutoff=Fraction(1, 3), window=window) is None


@given(st.text(max_size=12), st.integers(1, 500))
def test_a_control_draw_is_the_volunteers_own(seed, position):
    first = control_rules.control_draw(seed, position).random()
    assert control_rules.control_draw(seed, position).random() == first  # made again the same
    others = {control_rules.control_draw(f"{seed}x{n}", position).random() for n in range(5)}
    assert len(others | {first}) == 6  # other volunteers, other draws


def test_a_ticket_every_10_items():
    assert [p for p in range(1, 41) if earns_ticket(p)] == [10, 20, 30, 40]


def test_controls_needed_counts_controls_before_n_sentences():
    # Items 1,2 controls, 3,4 sentences, 5 control, 6-9 sentences, 10 control.
    assert controls_needed(0) == 0
    assert controls_needed(2) == 2
    assert controls_needed(3) == 3
    assert controls_needed(6) == 3
    assert controls_needed(7) == 4


# Per-volunteer controls and their placement (issue 18, item 4).

placements = st.sampled_from(control_rules.PLACEMENTS)


@given(first=st.integers(0, 4), every=st.integers(2, 9), seed=st.text(max_size=12), blocks=st.integers(1, 30))
def test_random_placement_keeps_one_control_in_each_block(first, every, seed, blocks):
    assert all(control_rules.is_control_position(p, first, every, "random", seed) for p in range(1, first + 1))
    for block in range(blocks):
        start = first + 1 + block * every
        inside = [p for p in range(start, start + every) if control_rules.is_control_position(p, first, every, "random", seed)]
        assert inside == [start + control_rules.control_offset(seed, block, every)]


def test_random_placement_differs_between_volunteers_and_the_default_is_the_papers():
    places = {
        tuple(p for p in range(3, 53) if control_rules.is_control_position(p, 2, 5, "random", f"salt:{pid}"))
        for pid in range(50)
    }
    assert len(places) > 45  # 5**10 schedules: volunteers rarely share one
    offsets = [control_rules.control_offset(f"salt:{pid}", 0, 5) for pid in range(2000)]
    assert all(offsets.count(n) > 300 for n in range(5))  # every place in the block, about equally
    assert [p for p in range(1, 31) if control_rules.is_control_position(p, 2, 5, "fixed", "any")] == [1, 2, 5, 10, 15, 20, 25, 30]
    with pytest.raises(ValueError):
        control_rules.is_control_position(3, 2, 5, "sometimes", "seed")


@given(sentences=st.integers(1, 80), first=st.integers(0, 3), every=st.integers(2, 7), seed=st.text(max_size=8),
       placement=placements)
def test_controls_needed_bounds_every_volunteers_schedule(sentences, first, every, seed, placement):
    position, judged, met = 0, 0, 0
    while judged < sentences:
        position += 1
        if control_rules.is_control_position(position, first, every, placement, seed):
            met += 1
        else:
            judged += 1
    assert met <= controls_needed(sentences, first, every, placement)
    if placement == "fixed":
        assert met == controls_needed(sentences, first, every, placement)


@given(pool=st.integers(1, 120), per=st.integers(0, 130), pid=st.integers(1, 10**6))
def test_a_volunteers_subset_has_k_distinct_controls_of_the_pool_and_is_stable(pool, per, pid):
    ids = list(range(1000, 1000 + pool))
    mine = control_rules.volunteer_controls(ids, per, f"salt:{pid}")
    assert len(set(mine)) == len(mine) == (per if 0 < per < pool else pool)
    assert set(mine) <= set(ids)
    assert mine == control_rules.volunteer_controls(list(reversed(ids)), per, f"salt:{pid}")


def test_subsets_differ_between_volunteers_and_campaigns():
    ids = list(range(1, 101))
    subsets = [frozenset(control_rules.volunteer_controls(ids, 14, quality.volunteer_seed("salt", pid))) for pid in range(200)]
    assert len(set(subsets)) == 200
    # Two volunteers share about 14 * 14 / 100 controls, far from all of them.
    shared = [len(a & b) for a, b in zip(subsets, subsets[1:])]
    assert max(shared) < 10 and 1 < sum(shared) / len(shared) < 3.5
    assert control_rules.volunteer_controls(ids, 14, "other:1") != control_rules.volunteer_controls(ids, 14, "salt:1")
    counts = [sum(cid in s for s in subsets) for cid in ids]
    assert min(counts) > 10  # every control of the pool gets used


def test_pool_warning_rule():
    # The whole pool for everyone: one account that has seen it reveals all.
    assert "same 20 controls" in control_rules.pool_warning(20, 0, 0)
    assert "same 300 controls" in control_rules.pool_warning(300, 300, 10)
    # 14 of 100: five accounts see about 53 % of anyone's controls.
    assert "at least 109 controls" in control_rules.pool_warning(100, 14, 0)
    assert control_rules.pool_warning(109, 14, 0) is None and control_rules.pool_warning(150, 14, 500) is None
    # More volunteers, more who may share: 1000 expected count as 10 accounts.
    assert control_rules.revealing_accounts(1000) == 10 and control_rules.revealing_accounts(40) == 5
    assert "at least 210 controls" in control_rules.pool_warning(150, 14, 1000)
    assert control_rules.pool_warning(210, 14, 1000) is None


@given(pool=st.integers(1, 400), per=st.integers(1, 60), expected=st.integers(0, 5000))
def test_the_pool_the_warning_asks_for_is_enough(pool, per, expected):
    warning = control_rules.pool_warning(pool, per, expected)
    share = control_rules.revealed_share(pool, per, control_rules.revealing_accounts(expected))
    assert (warning is None) == (share <= control_rules.MAX_REVEALED)
    if warning and per < pool:
        enough = int(warning.split("at least ")[1].split()[0])
        assert control_rules.pool_warning(enough, per, expected) is None
        assert enough == per or control_rules.pool_warning(enough - 1, per, expected) is not None


# The known-worse variant generated controls are made of (issue 28), shared with DA.

words = st.lists(st.text("abcdefgh", min_size=1, max_size=6), min_size=2, max_size=40)  # one word: characters


@given(words, words, st.integers(0, 2**32))
def test_a_replaced_span_keeps_the_length_and_changes_one_run(own, donor, seed):
    import random

    from app.services import degrade

    changed = degrade.replace_span(" ".join(own), " ".join(donor), random.Random(seed))
    k = degrade.span_length(len(own))
    if len(donor) < k:
        assert changed is None
        return
    if changed is None:  # only when the words put in were the very words taken out
        return
    new = changed.split()
    assert len(new) == len(own) and new != own
    # Outside one run of k words, nothing changed; the run is k consecutive words of the donor.
    assert any(new[:s] == own[:s] and new[s + k:] == own[s + k:] and
               any(new[s:s + k] == donor[d:d + k] for d in range(len(donor) - k + 1))
               for s in range(len(own) - k + 1))


def test_span_length_is_the_seeds_table():
    from app.services import degrade

    assert [degrade.span_length(n) for n in (1, 2, 3, 4, 5, 6, 8, 9, 15, 16, 20, 21, 40)] == [
        0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 4, 8]


def test_a_text_without_spaces_is_degraded_by_characters():
    import random

    from app.services import degrade

    changed = degrade.replace_span("これはテストの文です", "ほかの文からの言葉", random.Random(3))
    assert changed is not None and " " not in changed and len(changed) == len("これはテストの文です")


# A new volunteer's denser controls (issue 28: a guesser stopped within 40 answers).

@given(first=st.integers(0, 4), early_items=st.integers(0, 60), early_every=st.integers(2, 4), every=st.integers(2, 9),
       seed=st.text(max_size=12), placement=placements)
def test_early_window_has_one_control_in_each_of_its_blocks_then_the_usual_rate(first, early_items, early_every, every,
                                                                               seed, placement):
    window = dict(early_items=early_items, early_every=early_every)
    controls = [p for p in range(1, 301) if control_rules.is_control_position(p, first, every, placement, seed, **window)]
    assert controls[:first] == list(range(1, first + 1))
    early = max(0, early_items - first)
    for start in range(first + 1, first + early - early_every + 2, early_every):  # whole early blocks
        assert len([p for p in controls if start <= p < start + early_every]) == 1
    for start in range(first + early + 1, 300 - every, every):
        assert len([p for p in controls if start <= p < start + every]) == 1


def test_an_early_window_of_40_items_at_one_in_2_doubles_their_controls():
    window = dict(early_items=40, early_every=2)
    fixed = [p for p in range(1, 51) if control_rules.is_control_position(p, 2, 5, "fixed", "", **window)]
    assert fixed == [1, 2, *range(4, 41, 2), 45, 50]
    randomly = [p for p in range(1, 41) if control_rules.is_control_position(p, 2, 5, "random", "salt:7", **window)]
    assert len(randomly) == 21 and randomly != fixed[:21]
    # No window (0 items, or none past the first controls): the paper's schedule.
    for items in (0, 2):
        assert [p for p in range(1, 31) if control_rules.is_control_position(p, 2, 5, "fixed", "", items, 2)] == \
            [1, 2, 5, 10, 15, 20, 25, 30]


@given(sentences=st.integers(1, 80), first=st.integers(0, 3), every=st.integers(2, 7), early_items=st.integers(0, 50),
       early_every=st.integers(2, 4), seed=st.text(max_size=8), placement=placements)
def test_controls_needed_bounds_schedules_with_an_early_window(sentences, first, every, early_items, early_every, seed,
                                                               placement):
    window = dict(early_items=early_items, early_every=early_every)
    position, judged, met = 0, 0, 0
    while judged < sentences:
        position += 1
        if control_rules.is_control_position(position, first, every, placement, seed, **window):
            met += 1
        else:
            judged += 1
    assert met <= controls_needed(sentences, first, every, placement, early_items, early_every)
