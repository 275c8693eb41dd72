"""The Direct Assessment quality-control rules (app/protocols/da/quality.py)."""
import random

from hypothesis import assume, given, strategies as st

from app.services import score_quality
from app.protocols.da import quality as qc
from app.services import degrade

words = st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=6), min_size=0, max_size=60)
seeds = st.integers(min_value=0, max_value=2**32)


def test_words_deleted_follow_the_seed_table():
    expected = {1: 0, 2: 1, 3: 1, 4: 2, 5: 2, 6: 3, 8: 3, 9: 4, 15: 4, 16: 5, 20: 5, 21: 4, 25: 5, 40: 8, 101: 20}
    assert {n: score_quality.words_to_delete(n) for n in expected} == expected


@given(words, words, seeds)
def test_an_adequacy_bad_reference_replaces_one_run_of_words_keeping_the_length(tokens, donor_tokens, seed):
    assume(len(tokens) != 1 and len(donor_tokens) != 1)  # one word is read as characters: the next test
    text, donor = " ".join(tokens), " ".join(donor_tokens)
    bad = score_quality.degrade_adequacy(text, random.Random(seed), donor)
    k = score_quality.words_to_delete(len(tokens))
    if bad is None:  # too short, a donor too short, or every try gave the same words back
        again = random.Random(seed)
        assert k == 0 or len(donor_tokens) < k or all(
            degrade.replace_span(text, donor, again) is None for _try in range(8))
        return
    out = bad.split()
    assert len(out) == len(tokens) and out != tokens  # the length says nothing (issue 28)
    assert any(out[:start] == tokens[:start] and out[start + k:] == tokens[start + k:]
               and " ".join(out[start:start + k]) in donor for start in range(len(tokens) - k + 1))


def test_an_adequacy_bad_reference_needs_a_donor():
    assert score_quality.degrade_adequacy("one two three four five", random.Random(1), None) is None


@given(words, seeds)
def test_a_fluency_bad_reference_copies_a_pair_over_two_words_away_from_itself_and_the_ends(tokens, seed):
    assume(len(tokens) != 1)
    text = " ".join(tokens)
    bad = qc.degrade_fluency(text, random.Random(seed))
    if len(tokens) < 6:
        assert bad is None
        return
    if bad is None:  # the pair copied over the same two words, every time
        return
    out = bad.split()
    assert len(out) == len(tokens) and out != tokens
    made = [
        (first, gap)
        for first in range(len(tokens) - 1)
        for gap in qc.fluency_gaps(len(tokens), first)
        if tokens[:gap] + tokens[first:first + 2] + tokens[gap + 2:] == out
    ]
    assert made, "not one allowed copy gives this text"
    assert all(1 <= gap and gap + 2 <= len(tokens) - 1 and (gap + 2 < f or gap > f + 2) for f, gap in made)


def test_a_text_without_spaces_is_degraded_by_characters():
    text = "ภาษาไทยไม่มีช่องว่าง"
    bad = score_quality.degrade_adequacy(text, random.Random(1), "คำอื่นจากประโยคอื่น")
    assert bad is not None and " " not in bad and bad != text
    assert len(bad) == len(text)


@given(st.integers(min_value=0, max_value=100), st.text(min_size=1, max_size=8))
def test_quality_positions_keep_their_share(share, seed):
    positions = range(1, 2001)
    drawn = sum(score_quality.is_quality_position(p, share, seed) for p in positions)
    assert abs(drawn / len(positions) - share / 100) < 0.05


def test_quality_kinds_come_in_equal_shares_and_reference_only_with_references():
    with_refs = [qc.quality_kind("s", p, True) for p in range(3000)]
    without = [qc.quality_kind("s", p, False) for p in range(3000)]
    assert all(abs(with_refs.count(kind) / 3000 - 1 / 3) < 0.03 for kind in qc.KINDS)
    assert qc.REFERENCE not in without
    assert abs(without.count(score_quality.REPEAT) / 3000 - 0.5) < 0.03


@given(st.integers(min_value=1, max_value=500), st.sets(st.integers(min_value=1, max_value=500)),
       st.integers(min_value=1, max_value=60))
def test_an_original_is_paired_only_after_the_distance_and_oldest_first(position, originals, distance):
    originals = {p for p in originals if p < position}
    chosen = qc.due_original(position, originals, distance)
    ready = [p for p in originals if position - p >= distance]
    assert chosen == (min(ready) if ready else None)


def test_the_live_rule_waits_for_enough_pairs_then_catches_only_clear_optimisers():
    rng = random.Random(7)
    honest_pairs = [(s, max(0, s - rng.gauss(25, 15))) for s in (rng.uniform(40, 100) for _ in range(10))]
    honest_scores = [score for pair in honest_pairs for score in pair]
    assert score_quality.optimiser_reason(honest_pairs, honest_scores, min_pairs=5, min_spread=5) is None
    # Scoring every item 50 (bad references no lower) is caught; not before five pairs.
    flat = [(50, 50)] * 5
    assert score_quality.optimiser_reason(flat[:4], [50] * 8, min_pairs=5, min_spread=5) is None
    assert score_quality.optimiser_reason(flat, [50] * 10, min_pairs=5, min_spread=5) == score_quality.NOT_LOWER
    # Bad references a little lower, but every score within a point or two.
    narrow = [(52, 50)] * 5
    assert score_quality.optimiser_reason(narrow, [52, 50] * 5, min_pairs=5, min_spread=5) == score_quality.LOW_VARIATION
    # Bad references scored higher on average.
    worse = [(40, 80), (60, 50), (30, 70), (90, 85), (20, 60)]
    assert score_quality.optimiser_reason(worse, [s for p in worse for s in p], min_pairs=5, min_spread=5) == score_quality.NOT_LOWER


def test_the_order_of_a_pair_is_drawn_from_the_seed_half_and_half():
    drawn = [score_quality.bad_reference_first("s", p) for p in range(4000)]
    assert abs(sum(drawn) / 4000 - 0.5) < 0.03
    assert drawn != [score_quality.bad_reference_first("t", p) for p in range(4000)]


def test_the_early_window_ends_with_the_first_ticket():
    assert [qc.is_early(p, 10) for p in (1, 10, 11)] == [True, True, False]


def test_the_early_rule_holds_scores_that_do_not_move():
    assert score_quality.early_reason([], [50] * 4, min_spread=3) is None  # not before five scores
    assert score_quality.early_reason([], [50] * 5, min_spread=3) == score_quality.LOW_VARIATION
    assert score_quality.early_reason([], [70, 71, 69, 70, 72], min_spread=3) == score_quality.LOW_VARIATION
    assert score_quality.early_reason([], [70, 40, 90, 55, 20], min_spread=3) is None
    # Only the first five scores: varied ones later do not clear a flat start.
    assert score_quality.early_reason([], [50] * 5 + [0, 100], min_spread=3) == score_quality.LOW_VARIATION


def test_the_early_rule_holds_a_score_copied_from_the_same_source():
    varied = [10, 90, 40, 60, 80]
    assert score_quality.early_reason([(60, 60)], varied, min_spread=3) is None  # one pair decides nothing
    assert score_quality.early_reason([(60, 60), (35, 35)], varied, min_spread=3) == score_quality.NOT_LOWER
    assert score_quality.early_reason([(60, 62), (35, 34)], varied, min_spread=3) == score_quality.NOT_LOWER  # give or take 2
    assert score_quality.early_reason([(60, 61), (35, 20)], varied, min_spread=3) is None  # one of two missed
    assert score_quality.early_reason([(60, 70), (35, 45)], varied, min_spread=3) is None  # higher: a slip, not a copy
    # An original scored near 0 leaves no room below it: such pairs are not read.
    assert score_quality.early_reason([(2, 2), (60, 60), (0, 0), (35, 20)], varied, min_spread=3) is None
    # Only the first two pairs: a copier cannot pass by scoring lower later.
    assert score_quality.early_reason([(60, 60), (35, 35), (80, 10)], varied, min_spread=3) == score_quality.NOT_LOWER


def test_the_early_rule_holds_copies_and_clear_reversals_when_three_make_a_quarter_of_the_pairs():
    varied = [10, 90, 40, 60, 80]
    # The later of two translations scored 30 lower, whichever it was; the same score when both came after.
    guessed = [(80, 50), (40, 70), (90, 60), (30, 60), (50, 50), (60, 30)]
    assert score_quality.early_reason(guessed[:4], varied, min_spread=3) is None  # two are slips
    assert score_quality.early_reason(guessed[:5], varied, min_spread=3) == score_quality.NOT_LOWER
    assert score_quality.early_reason([(80, 50), (40, 59), (90, 60), (30, 49), (50, 20)], varied, min_spread=3) is None  # 19: not clear
    honest = [(80, 30)] * 9 + [(40, 65), (80, 79), (40, 65)]  # three suspect pairs in twelve
    assert score_quality.early_reason(honest, varied, min_spread=3) == score_quality.NOT_LOWER
    assert score_quality.early_reason([(80, 30)] + honest, varied, min_spread=3) is None  # in thirteen
    # Pairs at the floor are neither copies nor reversals.
    assert score_quality.early_reason([(80, 30), (2, 2), (0, 0), (1, 1), (80, 30)], varied, min_spread=3) is None


@given(st.lists(st.tuples(st.integers(30, 100), st.integers(0, 100)), max_size=40),
       st.lists(st.integers(0, 100), min_size=5, max_size=5))
def test_a_judge_whose_bad_references_are_all_clearly_lower_is_held_only_for_flat_scores(pairs, scores):
    lower = [(original, min(bad, original - score_quality.COPY_MARGIN - 1)) for original, bad in pairs]
    reason = score_quality.early_reason(lower, scores, min_spread=3)
    assert reason is None or (reason == score_quality.LOW_VARIATION and max(scores) - min(scores) < 10)
