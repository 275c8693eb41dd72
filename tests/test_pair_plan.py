"""The sequential assignment's pair rules (issue 32), as plain values."""
import random

import numpy as np

from app.protocols.pairwise.plan import PairState, finished, next_pairs, plan, spread


def states(*rows):
    return [PairState(a, b, wa, wb, judged) for a, b, wa, wb, judged in rows]


def test_a_lopsided_pair_is_decided_and_retired_the_others_stay_open():
    pairs = states(("A", "B", 90, 10, 100), ("A", "C", 12, 10, 22), ("B", "C", 0, 0, 0))
    plans = plan(pairs)
    assert plans[0].decided and plans[0].better == "A" and not plans[0].open and plans[0].more is None
    assert [p.open for p in plans] == [False, True, True]
    assert plans[1].more is not None and plans[1].more > 0  # a slight lead: more needed
    assert plans[2].more is None  # no data: no direction to project
    assert not finished(plans)


def test_next_judgments_go_to_the_open_pair_with_the_fewest_ties_at_random():
    pairs = states(("A", "B", 90, 10, 100), ("A", "C", 5, 5, 10), ("B", "C", 2, 1, 3), ("A", "D", 1, 2, 3))
    plans = plan(pairs, estimate=False)
    firsts = {tuple(next_pairs(pairs, plans, random.Random(seed)))[:2] for seed in range(30)}
    assert firsts == {(2, 3), (3, 2)}  # both with 3 judgments, in either order; the decided pair never
    assert all(0 not in next_pairs(pairs, plans, random.Random(seed)) for seed in range(5))


def test_a_pair_that_loses_judgments_is_opened_again():
    decided = plan(states(("A", "B", 40, 5, 45), ("A", "C", 1, 1, 2)))
    assert decided[0].decided and not decided[0].open
    after_discarding = plan(states(("A", "B", 8, 5, 13), ("A", "C", 1, 1, 2)))
    assert not after_discarding[0].decided and after_discarding[0].open


def test_the_top_goal_retires_pairs_that_cannot_change_the_top():
    pairs = states(("A", "B", 60, 5, 65), ("A", "C", 60, 5, 65), ("B", "C", 3, 3, 6))
    assert [p.open for p in plan(pairs, goal="ordering")] == [False, False, True]
    top = plan(pairs, goal="top")
    assert [p.open for p in top] == [False, False, False] and finished(top)


def one_at_a_time(judged, room, budget):
    """The budget handed out one judgment at a time, each to the first pair (in the given
    order) with the fewest judgments that still has room: the judgments each pair gets."""
    counts, give = list(judged), [0] * len(judged)
    for _ in range(budget):
        open_pairs = [i for i in range(len(judged)) if give[i] < room[i]]
        if not open_pairs:
            break
        i = min(open_pairs, key=lambda index: counts[index])  # the first of the fewest
        counts[i] += 1
        give[i] += 1
    return give


def test_spread_gives_what_one_judgment_at_a_time_gives():
    assert spread([3, 1, 1], [99, 99, 99], 5).tolist() == [1, 2, 2]
    assert spread([0, 0, 0], [1, 99, 99], 7).tolist() == [1, 3, 3]
    assert spread([2, 2], [0, 1], 5).tolist() == [0, 1]  # no room left
    assert spread([0, 100], [0, 5], 5).tolist() == [0, 5]  # the fewest has no room
    assert spread([], [], 3).tolist() == []
    for seed in range(300):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(1, 9))
        judged = rng.integers(0, 3 if seed % 2 else 12, n)  # narrow: many equal counts
        room = rng.integers(0, 8, n) * (rng.random(n) > 0.25)  # about a quarter without room
        budget = int(rng.integers(0, int(room.sum()) + 6))  # at times more than all the room
        expected = one_at_a_time(judged.tolist(), room.tolist(), budget)
        assert spread(judged, room, budget).tolist() == expected, (seed, judged, room, budget)
