"""Unit tests of the control-sentence and raffle rules (pure functions)."""
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.services import quality
from app.services.importer import controls_needed
from app.services.rewards import earns_ticket

RULES = dict(first=2, check_every=10, cutoff=Fraction(1, 3))


def test_control_positions_are_1_2_then_every_5th():
    positions = [p for p in range(1, 31) if quality.is_control_position(p)]
    assert positions == [1, 2, 5, 10, 15, 20, 25, 30]


def test_positions_start_at_one():
    with pytest.raises(ValueError):
        quality.is_control_position(0)


@pytest.mark.parametrize(
    "better_left, choice, passed",
    [(True, "left", True), (True, "right", False), (False, "right", True), (False, "left", False),
     (True, "equal", False), (False, "equal", False)],
)
def test_only_the_better_translation_passes(better_left, choice, passed):
    assert quality.control_passed(better_left, choice) is passed


def test_failing_a_first_control_dismisses_at_once():
    assert quality.dismissal_reason(1, True, [False], **RULES) == quality.INITIAL_CONTROL_FAILED
    assert quality.dismissal_reason(2, True, [True, False], **RULES) == quality.INITIAL_CONTROL_FAILED
    assert quality.dismissal_reason(2, True, [True, True], **RULES) is None


def test_later_failures_are_only_checked_every_10th_item():
    # Third control (item 5) failed: 1 of 3 is not more than a third; and not a check point.
    assert quality.dismissal_reason(5, True, [True, True, False], **RULES) is None
    # Item 10, controls 1,2,5,10: two failures of four is more than a third.
    assert quality.dismissal_reason(10, True, [True, True, False, False], **RULES) == quality.CONTROL_FAILURE_RATE
    # Item 9 is no check point, even with a bad record.
    assert quality.dismissal_reason(9, False, [True, True, False, False], **RULES) is None


def test_exactly_one_third_is_allowed():
    results = [True, True, False, True, True, False]  # 2 of 6 failed
    assert quality.dismissal_reason(20, False, results, **RULES) is None
    assert quality.dismissal_reason(20, False, results + [False], **RULES) == quality.CONTROL_FAILURE_RATE


def test_rolling_window_counts_only_the_last_k_controls():
    results = [True, True] + [False] * 3 + [True] * 6  # old failures, recent passes
    assert quality.failure_share(results) == Fraction(3, 11)
    assert quality.failure_share(results, window=6) == 0
    bad_recent = [True] * 8 + [False, False, True]
    assert quality.dismissal_reason(50, False, bad_recent, window=3, **RULES) == quality.CONTROL_FAILURE_RATE
    assert quality.dismissal_reason(50, False, bad_recent, **RULES) is None


@given(st.lists(st.booleans(), min_size=3, max_size=60), st.integers(min_value=3, max_value=400))
def test_dismissal_exactly_when_the_rule_says(results, position):
    reason = quality.dismissal_reason(position, False, results, **RULES)
    failed = results.count(False)
    expected = position % 10 == 0 and 3 * failed > len(results)
    assert (reason is not None) == expected


@given(st.lists(st.booleans(), min_size=1, max_size=40), st.integers(min_value=1, max_value=400), st.booleans(),
       st.integers(min_value=0, max_value=10))
def test_where_the_rule_cannot_dismiss_the_results_need_not_be_read(results, position, control, window):
    """``may_dismiss`` (which saves reading the results) is False only where
    ``dismissal_reason`` gives None whatever the results."""
    rules = dict(first=2, check_every=10)
    if not quality.may_dismiss(position, control, len(results), **rules):
        assert quality.dismissal_reason(position, control, results, cutoff=Fraction(1, 3), window=window, **rules) is None


def test_a_ticket_every_10_items():
    assert [p for p in range(1, 41) if earns_ticket(p)] == [10, 20, 30, 40]


def test_controls_needed_counts_controls_before_n_sentences():
    # Items 1,2 controls, 3,4 sentences, 5 control, 6-9 sentences, 10 control.
    assert controls_needed(0) == 0
    assert controls_needed(2) == 2
    assert controls_needed(3) == 3
    assert controls_needed(6) == 3
    assert controls_needed(7) == 4
