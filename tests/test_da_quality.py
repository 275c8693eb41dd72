"""The Direct Assessment quality-control rules (app/services/da_quality.py)."""
import random

from hypothesis import assume, given, strategies as st

from app.services import da_quality as qc

words = st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=6), min_size=0, max_size=60)
seeds = st.integers(min_value=0, max_value=2**32)


def test_words_deleted_follow_the_seed_table():
    expected = {1: 0, 2: 1, 3: 1, 4: 2, 5: 2, 6: 3, 8: 3, 9: 4, 15: 4, 16: 5, 20: 5, 21: 4, 25: 5, 40: 8, 101: 20}
    assert {n: qc.words_to_delete(n) for n in expected} == expected


@given(words, seeds)
def test_an_adequacy_bad_reference_omits_one_run_of_words(tokens, seed):
    assume(len(tokens) != 1)  # one word is read as characters: the next test
    text = " ".join(tokens)
    bad = qc.degrade_adequacy(text, random.Random(seed))
    k = qc.words_to_delete(len(tokens))
    if k == 0:
        assert bad is None
        return
    kept = bad.split()
    assert len(kept) == len(tokens) - k
    assert any(tokens[:start] + tokens[start + k:] == kept for start in range(len(tokens) - k + 1))


@given(words, seeds)
def test_a_fluency_bad_reference_repeats_a_pair_away_from_itself_and_the_ends(tokens, seed):
    assume(len(tokens) != 1)
    text = " ".join(tokens)
    bad = qc.degrade_fluency(text, random.Random(seed))
    if len(tokens) < 4:
        assert bad is None
        return
    out = bad.split()
    assert len(out) == len(tokens) + 2
    made = [
        (first, gap)
        for first in range(len(tokens) - 1)
        for gap in qc.fluency_gaps(len(tokens), first)
        if tokens[:gap] + tokens[first:first + 2] + tokens[gap:] == out
    ]
    assert made, "not one allowed duplication gives this text"
    assert all(1 <= gap <= len(tokens) - 1 and gap not in (f, f + 1, f + 2) for f, gap in made)


def test_a_text_without_spaces_is_degraded_by_characters():
    bad = qc.degrade_adequacy("ภาษาไทยไม่มีช่องว่าง", random.Random(1))
    assert bad is not None and " " not in bad
    assert len(bad) == len("ภาษาไทยไม่มีช่องว่าง") - qc.words_to_delete(len("ภาษาไทยไม่มีช่องว่าง"))


@given(st.integers(min_value=0, max_value=100), st.text(min_size=1, max_size=8))
def test_quality_positions_keep_their_share(share, seed):
    positions = range(1, 2001)
    drawn = sum(qc.is_quality_position(p, share, seed) for p in positions)
    assert abs(drawn / len(positions) - share / 100) < 0.05


def test_quality_kinds_come_in_equal_shares_and_reference_only_with_references():
    with_refs = [qc.quality_kind("s", p, True) for p in range(3000)]
    without = [qc.quality_kind("s", p, False) for p in range(3000)]
    assert all(abs(with_refs.count(kind) / 3000 - 1 / 3) < 0.03 for kind in qc.KINDS)
    assert qc.REFERENCE not in without
    assert abs(without.count(qc.REPEAT) / 3000 - 0.5) < 0.03


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
    assert qc.optimiser_reason(honest_pairs, honest_scores, min_pairs=5, min_spread=5) is None
    # Scoring every item 50 (bad references no lower) is caught; not before five pairs.
    flat = [(50, 50)] * 5
    assert qc.optimiser_reason(flat[:4], [50] * 8, min_pairs=5, min_spread=5) is None
    assert qc.optimiser_reason(flat, [50] * 10, min_pairs=5, min_spread=5) == qc.NOT_LOWER
    # Bad references a little lower, but every score within a point or two.
    narrow = [(52, 50)] * 5
    assert qc.optimiser_reason(narrow, [52, 50] * 5, min_pairs=5, min_spread=5) == qc.LOW_VARIATION
    # Bad references scored higher on average.
    worse = [(40, 80), (60, 50), (30, 70), (90, 85), (20, 60)]
    assert qc.optimiser_reason(worse, [s for p in worse for s in p], min_pairs=5, min_spread=5) == qc.NOT_LOWER
