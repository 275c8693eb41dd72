"""Sequential assignment (issue 32): which system pair the next judgment goes to.

Plain functions of the pairs' counters, shared by the site and by the replay
benchmark (``scripts/bench/bench_efficiency.py``), so that what the benchmark
measures is what the site does. A campaign with ``assignment = "sequential"``
re-plans from its pairs' per-sentence wins and losses: every pair gets an
anytime-valid test (``app.stats.sequential``), pairs that Holm decides at
``SEQUENTIAL_ALPHA`` are retired (and re-opened if discarded judgments take
their decision away), and the next judgment goes to the open pair with the
fewest judgments, breadth first. With the goal "top", pairs that cannot change
which system is on top are retired too. ``"ebaluatoia"`` keeps the paper's
rule (the fullest sentence first, each pair to the campaign's target).
"""
from dataclasses import dataclass

import numpy as np

from ...stats import sequential

SEQUENTIAL, EBALUATOIA = "sequential", "ebaluatoia"
ASSIGNMENTS = (SEQUENTIAL, EBALUATOIA)
GOALS = sequential.GOALS
ORDERING, TOP = sequential.ORDERING, sequential.TOP
SEQUENTIAL_ALPHA = sequential.SEQUENTIAL_ALPHA


@dataclass(frozen=True)
class PairState:
    """One system pair's counters: per-sentence wins of each side (ties and
    equal answers left out, as the analysis does) and the judgments it was
    given or has reserved (what breadth first balances)."""

    system_a: object
    system_b: object
    wins_a: int
    wins_b: int
    judged: int


@dataclass(frozen=True)
class PairPlan:
    decided: bool
    better: object  # the system decided better, or None
    open: bool  # still gets judgments
    p: float  # the anytime-valid p, Holm-adjusted over the campaign's pairs
    more: object  # about how many more decisive judgments until decided, or None


def plan(states, goal=ORDERING, alpha=SEQUENTIAL_ALPHA, estimate=True):
    """The decision and the openness of every pair, from ``states`` (a list of
    ``PairState``). ``estimate``: also say about how many more judgments each
    open pair needs (the dashboard does; the serving path need not)."""
    rows = [(s.system_a, s.system_b, s.wins_a, s.wins_b) for s in states]
    decisions = sequential.decide_pairs(rows, alpha)
    opened = sequential.open_pairs(rows, decisions, goal)
    plans = []
    for state, decision, is_open in zip(states, decisions, opened):
        more = None
        if estimate and is_open:
            more = sequential.more_needed(state.wins_a, state.wins_b, decision["target"])
        plans.append(PairPlan(decision["decided"], decision["better"], is_open, decision["p_holm"], more))
    return plans


def next_pairs(states, plans, rng):
    """The open pairs' indices in the order to try them: fewest judgments
    first, ties in random order (a volunteer who has seen every sentence
    a pair has left moves on to the next)."""
    opened = [index for index, p in enumerate(plans) if p.open]
    return [opened[i] for i in fewest_first([states[index].judged for index in opened], rng)]


def fewest_first(judged, rng):
    """Indices of ``judged`` (judgments per pair), fewest first, ties at random."""
    return [index for _judged, _tie, index in sorted((n, rng.random(), index) for index, n in enumerate(judged))]


def spread(judged, room, budget):
    """What ``fewest_first`` gives over ``budget`` successive judgments, computed at once,
    so that the replay benchmark runs the site's rule in batch: each judgment to the open
    pair with the fewest (``judged``, judgments per pair, counting those already given),
    none past its ``room``, ties in the given order (next_pairs' order). Returns the
    judgments each pair gets (fewer than ``budget`` in all when the rooms run out)."""
    judged = np.asarray(judged, np.int64)
    room = np.asarray(room, np.int64)
    budget = min(budget, int(room.sum()))
    if budget <= 0:
        return np.zeros_like(judged)
    # the level all are raised to: the highest whose judgments fit the budget (none
    # above judged + room, the level at which every pair is full)
    low, high = int(judged.min()), int((judged + room).max())
    while low < high:
        mid = (low + high + 1) // 2
        if np.minimum(np.maximum(mid - judged, 0), room).sum() <= budget:
            low = mid
        else:
            high = mid - 1
    give = np.minimum(np.maximum(low - judged, 0), room)
    rest = budget - int(give.sum())
    if rest:  # one more each to pairs at the level with room, in the given order
        can = np.flatnonzero((judged + give == low) & (give < room))[:rest]
        give[can] += 1
    return give


def finished(plans):
    """Whether the campaign's goal is reached: no pair left open."""
    return not any(p.open for p in plans)
