"""The simulated campaigns of the replay benchmark (bench_efficiency.py, issue 32):
Ebaluatoia's rule and the sequential rules (goal "ordering" or "top") replayed on a
replay_data.ReplaySet, each judged at every look as bench_efficiency.py's docstring says.
"""
import math
import random
from dataclasses import dataclass

import numpy as np

from replay_data import ALPHA, TARGET, draw, fresh_cells, take

from app.protocols.pairwise import plan as pair_plan
from app.services.slots import choose_slot
from app.stats import sequential, winners


# ---------------------------------------------------------------------------
# the analyses at a look


def fixed_directions(wins_a, wins_b, alpha=ALPHA):
    """The fixed analysis of per-sentence wins: winners.sign_test per pair, winners.holm,
    significant when the adjusted p < alpha and the wins differ (winners.significance's
    rule for unit "items"); +1 A better, -1 B better, 0 not significant."""
    adjusted = np.array(winners.holm([winners.sign_test(int(a), int(b)) for a, b in zip(wins_a, wins_b)]))
    significant = (adjusted < alpha) & (wins_a != wins_b)
    return (np.sign(wins_a - wins_b) * significant).astype(np.int8)


def as_decisions(data, directions):
    return [{"decided": d != 0, "better": None if d == 0 else p[0] if d > 0 else p[1]}
            for p, d in zip(data.pairs, directions)]


def rows_of(data, wins_a, wins_b):
    return [(a, b, int(wa), int(wb)) for (a, b), wa, wb in zip(data.pairs, wins_a, wins_b)]


def judge_look(data, directions, rows, decisions, truth_direction):
    """(shows the ordering, shows exactly the ordering, certifies the top, a pair
    against the model's direction) of a look's decisions (``directions`` per pair)."""
    wrong = bool(np.any((directions != 0) & (directions != truth_direction)))
    significant = data.truth != 0
    ordering = bool(significant.any()) and bool(np.all(directions[significant] == data.truth[significant]))
    exact = ordering and bool(np.array_equal(directions, data.truth))
    top = data.top is not None and sequential.certified_top(rows, decisions) == data.top
    return ordering and not wrong, exact, top, wrong


@dataclass
class Campaign:
    ordering: np.ndarray  # bool per look
    exact: np.ndarray
    top: np.ndarray
    wrong_end: bool
    wrong_any: bool
    used: int  # judgments at the end


# ---------------------------------------------------------------------------
# Ebaluatoia


class _Slot:
    __slots__ = ("pending",)

    def __init__(self, pending):
        self.pending = pending


def partial_counts(n_pairs, judged, target, rng):
    """Judgments per slot of the sentence being filled after ``judged`` of its judgments:
    each one taken by slots.choose_slot among the open slots, as the site serves them
    (the first full rounds leave every slot at the same count, so only the last round's
    choices are made one by one)."""
    rounds, rest = divmod(judged, n_pairs)
    slots = [_Slot(rounds) for _ in range(n_pairs)]
    for _ in range(rest):
        choose_slot([s for s in slots if s.pending < target], rng).pending += 1
    return np.array([s.pending for s in slots])


def sentence_wins(outcomes, upto=None):
    """Per-sentence winners of cells (last axis: the cell's judgments; ``upto``: how many
    of them are collected), by winners.sentence_categories: (A won, B won)."""
    if upto is not None:
        collected = np.arange(outcomes.shape[-1]) < upto[..., None]
        outcomes = np.where(collected, outcomes, 0)
    categories = winners.sentence_categories((outcomes == 1).sum(-1), (outcomes == -1).sum(-1))
    return categories <= 1, categories >= 3


def ebaluatoia_campaign(data, supply, null, seed, looks, horizon, target=TARGET):
    rng = np.random.default_rng(seed)
    prng = random.Random(int(rng.integers(2 ** 63)))
    per_sentence = data.n_pairs * target
    n = math.ceil(horizon / per_sentence)
    if supply == "real":
        n = min(n, data.sentences)
    end = min(horizon, n * per_sentence)
    pair = np.broadcast_to(np.arange(data.n_pairs), (n, data.n_pairs))
    if supply == "fresh":
        cell = fresh_cells(data, rng, pair)
        start, count = data.cell_start[cell], data.cell_count[cell]
    else:
        sentence = rng.permutation(data.sentences)[:n, None]
        start, count = draw(data, pair, sentence)
    outcomes = take(data, rng, start[..., None], count[..., None], (n, data.n_pairs, target))
    if null:
        outcomes = outcomes * rng.choice(np.array([-1, 1], dtype=np.int8), (n, data.n_pairs, 1))
    won_a, won_b = sentence_wins(outcomes)
    cum_a = np.vstack([np.zeros(data.n_pairs, np.int64), np.cumsum(won_a, 0)])
    cum_b = np.vstack([np.zeros(data.n_pairs, np.int64), np.cumsum(won_b, 0)])
    truth_direction = np.zeros(data.n_pairs, np.int8) if null else data.direction[(supply, target)]

    def at(judged):
        full, rest = divmod(judged, per_sentence)
        wins_a, wins_b = cum_a[full].copy(), cum_b[full].copy()
        if rest:
            counts = partial_counts(data.n_pairs, rest, target, prng)
            part_a, part_b = sentence_wins(outcomes[full], counts)
            wins_a += part_a
            wins_b += part_b
        directions = fixed_directions(wins_a, wins_b)
        rows = rows_of(data, wins_a, wins_b)
        return judge_look(data, directions, rows, as_decisions(data, directions), truth_direction)

    shown = np.zeros((3, len(looks)), bool)
    wrong_any = False
    last = at(end)
    for i, judged in enumerate(looks):
        figures = at(judged) if judged < end else last
        shown[:, i] = figures[:3]
        wrong_any |= figures[3]
    return Campaign(*shown, last[3], wrong_any or last[3], end)


# ---------------------------------------------------------------------------
# the sequential rules


def sequential_campaign(data, supply, goal, null, seed, looks, horizon, replan_every=0, step=None):
    rng = np.random.default_rng(seed)
    prng = random.Random(int(rng.integers(2 ** 63)))
    P = data.n_pairs
    names_a = [a for a, _ in data.pairs]
    names_b = [b for _, b in data.pairs]
    wins_a = np.zeros(P, np.int64)
    wins_b = np.zeros(P, np.int64)
    judged = np.zeros(P, np.int64)
    if supply == "real":  # each pair's own random order of the data's sentences
        order = rng.permuted(np.broadcast_to(np.arange(data.sentences), (P, data.sentences)), axis=1)
        room_of = lambda: data.sentences - judged  # noqa: E731
    else:
        room_of = lambda: np.full(P, horizon, np.int64)  # noqa: E731
    truth_direction = np.zeros(P, np.int8) if null else data.direction[(supply, 1)]
    step = step or (looks[0] if len(looks) else horizon)
    shown = np.zeros((3, len(looks)), bool)
    look = 0
    wrong_any = False
    total = 0
    figures = None
    while True:
        states = [pair_plan.PairState(names_a[i], names_b[i], int(wins_a[i]), int(wins_b[i]), int(judged[i]))
                  for i in range(P)]
        plans = pair_plan.plan(states, goal, pair_plan.SEQUENTIAL_ALPHA, estimate=False)
        decided = np.array([0 if not p.decided else 1 if p.better == names_a[i] else -1
                            for i, p in enumerate(plans)], np.int8)
        wrong_any |= bool(np.any((decided != 0) & (decided != truth_direction)))
        room = room_of()
        candidates = [i for i in pair_plan.next_pairs(states, plans, prng) if room[i] > 0]
        at_look = look < len(looks) and total == looks[look]
        done = pair_plan.finished(plans) or not candidates or total >= horizon
        if done or (at_look and not null):
            rows = rows_of(data, wins_a, wins_b)
            final = sequential.final_analysis(rows, [p.better if p.decided else None for p in plans],
                                              alpha=ALPHA, sequential_alpha=pair_plan.SEQUENTIAL_ALPHA)
            directions = np.array([0 if not r["decided"] else 1 if r["better"] == names_a[i] else -1
                                   for i, r in enumerate(final["pairs"])], np.int8)
            figures = judge_look(data, directions, rows, final["pairs"], truth_direction)
        if at_look:
            if not null:
                shown[:, look] = figures[:3]
            look += 1
        if done:
            break
        k = replan_every or min(max(P, math.ceil(total / 100)), step)
        budget = min(k, horizon - total, (looks[look] - total) if look < len(looks) else horizon)
        candidates = np.array(candidates)
        give = np.zeros(P, np.int64)
        give[candidates] = pair_plan.spread(judged[candidates], room[candidates], budget)
        pair = np.repeat(np.arange(P), give)
        if supply == "fresh":
            cell = fresh_cells(data, rng, pair)
            start, count = data.cell_start[cell], data.cell_count[cell]
        else:
            within = np.arange(pair.size) - np.repeat(np.cumsum(give) - give, give)
            start, count = draw(data, pair, order[pair, judged[pair] + within])
        outcomes = take(data, rng, start, count, pair.shape)
        if null:
            outcomes = outcomes * rng.choice(np.array([-1, 1], dtype=np.int8), pair.shape)
        wins_a += np.bincount(pair, weights=outcomes == 1, minlength=P).astype(np.int64)
        wins_b += np.bincount(pair, weights=outcomes == -1, minlength=P).astype(np.int64)
        judged += give
        total += int(give.sum())
    if not null:
        shown[:, look:] = np.array(figures[:3])[:, None]  # a finished campaign keeps its result
    return Campaign(*shown, figures[3], wrong_any or figures[3], total)

