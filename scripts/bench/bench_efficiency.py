"""Replay of real published judgments through the assignment rules (issue 32): how many
judgments each rule needs to show the full data's ordering and to certify its top system,
and how often it shows a false significant pair.

    .venv/bin/python scripts/bench/bench_efficiency.py [--data FILE[+FILE...] ...] [--campaigns 100]
        [--quick] [--rules R,...] [--null-campaigns N | --no-null] [--jobs N] [--look-every N]
        [--horizon N] [--replan-every K] [--bootstrap N] [--campaign SLUG] [--seed 1]

Without --data: the WMT13 French-English five-way rankings (train + test, one set) and the
three WMT19 parity sets of Toral (2020), from ../shared/reference-data. --data takes any
file the analysis reads (app.stats.loader.load: WMT/Appraise CSV, WMT12-13 rankings expanded
into pairs, Bozka CSV or JSON Lines), once per set; FILE+FILE merges files into one set.

Replay model
    A judgment of the pair (a, b) on sentence s is drawn, with replacement, from the real
    judgments of (s, a, b) when the data has any, else from all real judgments of (a, b).
    Supply "fresh": unlimited new sentences, each (new sentence, pair) a bootstrap draw of
    one of the pair's real sentences. Supply "real": only the data's own sentences (each
    rule takes them in a random order); a (sentence, pair) cell is judged at most once by
    the sequential rule, at most ``target`` (5) times by Ebaluatoia. The per-sentence
    winner of a cell (app.stats.winners.sentence_categories) is what every test counts.

Rules (all from the project's code, not copies)
    ebaluatoia: the paper's rule as app/services/slots.py serves it: the fullest open
    sentence first, so sentences are filled one after another, each (sentence, pair) slot
    to ``target``; inside the one partly filled sentence the slots are taken by
    slots.choose_slot (the fewest judgments, ties at random), called at every look.
    Complete sentences are drawn vectorised (all their slots are full, the order inside
    does not matter). Its result at a look: the fixed analysis of what was collected,
    the exact sign test on per-sentence winners with Holm at 0.05 (winners.sign_test and
    winners.holm, with winners.significance's rule: adjusted p < 0.05 and unequal wins).
    sequential (goal "ordering") and top (goal "top"): app/services/pair_plan.py: plan()
    (the anytime-valid test per pair, Holm at pair_plan.SEQUENTIAL_ALPHA, decided pairs
    retired), next_pairs() (the open pair with the fewest judgments, ties at random) and
    finished(). Re-planning after every judgment is too slow in Python: the replay
    re-plans every K judgments (K = the number of pairs, one breadth-first round, or 1 %
    of the judgments so far if more, at most a look's spacing; --replan-every K fixes K),
    as the site coalesces its re-plan; between two plans each judgment goes to the open
    pair with the fewest judgments (ties in next_pairs' random order). A pair whose real
    sentences are used up gets no more. A campaign ends when finished() says so, when
    nothing is left to judge, or at the horizon. Its result at a look:
    sequential.final_analysis (the sequential decisions of the last plan, then one fixed
    look, the sign test with Holm at the remaining 0.04, on the undecided pairs), as if the
    campaign had stopped there.

Measures (100 campaigns per set and rule by default, 200 in the null replay)
    Truth: the full data's analysis (winners.pair_tables + winners.significance, unit
    "items", sign test, Holm, 0.05): its significant pairs and their directions. Its top
    system: the one ahead of every other in per-sentence wins (the analysis' ordering puts
    it first; none if there is no such system). The model's direction of a pair: the sign
    of the mean, over the sentences the supply draws from, of P(A wins the sentence) -
    P(B wins it), exact for the rule's judgments per cell (1 or ``target``).
    "Shows the ordering": every significant pair of the full data significant in the
    same direction, and no significant pair against the model's direction (a pair the
    full data leaves undecided may be decided in its direction: more sentences than the
    data has find more). "Exactly": the full data's significant pairs and no other (on
    WMT13, with 27 pairs the full data leaves undecided, no rule gets there).
    "Top": sequential.certified_top of the look's decisions (for the sequential rules: of
    final_analysis') is the full data's top system. B80 = the smallest look at which at
    least 80 % of the campaigns show it (a finished campaign keeps its last result).
    Saving = B80(ebaluatoia with the same supply) / B80(rule), 95 % interval by bootstrap
    over campaigns (2,000 resamples of each rule's campaigns); "> x" when Ebaluatoia does
    not get there within the horizon, "∞" when its campaigns end without getting there. FWER: share of campaigns with a significant pair
    against the model's direction, at the end and at any look (ebaluatoia: the fixed test
    at every look; sequential: the plan's decisions at every re-plan, and the final
    analysis at the end). Null replay: the same campaigns with the sides of every
    (sentence, pair) cell flipped at random (all the cell's judgments together, so they
    stay as correlated as in the model): every pair is null and any significant pair is
    false. Horizon: the data's sentences x pairs x target (all of Ebaluatoia's real
    supply) or ten times the data's judgments if more. Looks: every --look-every
    judgments, by default a round number near a 200th of the horizon (a 500th with 10
    pairs or fewer): 5,000 on WMT13, 50 on WMT19 de-en.

What the model makes of a set's cells: WMT13 has 1.9 judgments per judged (sentence,
pair) cell and 67 % of its cells hold one, so Ebaluatoia's five judgments of a fresh
sentence are mostly five copies of one (as correlated as judgments can be), while 70 %
of the real supply's cells are empty and draw five independent judgments from the
pair's pool (not correlated at all); the real correlation (0.15 to 0.39 in the WMT19
data) lies between, so Ebaluatoia-fresh is the baseline least favourable to Ebaluatoia
(the largest savings) and Ebaluatoia-real the most favourable (the smallest). The WMT19 sets have every cell judged 3 to 6 times by different
people: their replay keeps the real agreement.

Figures to compare (issue 32, a previous study on WMT13): B80 500,000 for Ebaluatoia,
115,000 sequential (fresh), 105,000 (real supply), top system 70,000 against 735,000;
WMT19 de-en 1,260 against 2,400; WMT19 en-ru, the reference certified better than MT:
8,250 at five judgments per (sentence, pair), 825 at one.
"""
import argparse
import math
import multiprocessing
import os
import random
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from harness import ROOT, fmt, log, machine_busy, markdown

from app.services import pair_plan
from app.services.slots import choose_slot
from app.stats import loader, sequential, winners
from app.stats.reading import Judgments

REFERENCE = os.path.join(ROOT, "..", "shared", "reference-data")
DEFAULT_SETS = (
    ("WMT13 fr-en", ("wmt13-fr-en-trueskill/wmt13-fr-en-train.csv", "wmt13-fr-en-trueskill/wmt13-fr-en-test.csv")),
    ("WMT19 de-en", ("wmt19-parity-toral2020/deen_001_020.csv",)),
    ("WMT19 en-de", ("wmt19-parity-toral2020/ende_001_020.csv",)),
    ("WMT19 en-ru", ("wmt19-parity-toral2020/enru_001_020.csv",)),
)
ALPHA = 0.05  # the fixed analysis and the final analysis' family level
TARGET = 5  # Ebaluatoia's judgments per (sentence, pair), as in the paper
# rule -> (kind, supply, goal)
RULES = {
    "ebaluatoia-fresh": ("ebaluatoia", "fresh", None),
    "ebaluatoia-real": ("ebaluatoia", "real", None),
    "sequential-fresh": ("sequential", "fresh", sequential.ORDERING),
    "sequential-real": ("sequential", "real", sequential.ORDERING),
    "top-fresh": ("sequential", "fresh", sequential.TOP),
    "top-real": ("sequential", "real", sequential.TOP),
}
LEGEND = (
    "B80: judgments until 80 % of the campaigns show the full data's significant pairs (ordering: with\n"
    "none against the model's direction; exactly: and no other) or certify its top system (the sequential\n"
    "rules: their final analysis). Saving: against Ebaluatoia with the same supply (95 % bootstrap\n"
    "interval). FWER: campaigns with a significant pair against the model's direction; null: every\n"
    "(sentence, pair) cell's sides flipped at random. '> N': not within the horizon N; never: not by\n"
    "the end of the campaigns (their goal reached or their real supply used up).")
SHOW = 0.8  # B80: the share of campaigns that must show the result
BOOTSTRAP = 2000


# ---------------------------------------------------------------------------
# the data


def merge(parts):
    """One Judgments of several files (names matched: systems, sentences, judges)."""
    if len(parts) == 1:
        return parts[0]
    systems = sorted({name for part in parts for name in part.systems})
    sentences = list(dict.fromkeys(name for part in parts for name in part.sentences))
    judges = list(dict.fromkeys(name for part in parts for name in part.judges))
    index = [{name: i for i, name in enumerate(names)} for names in (systems, sentences, judges)]

    def codes(part, attribute, names, table):
        remap = np.array([table[name] for name in names], dtype=np.int32)
        return remap[getattr(part, attribute)]

    return Judgments(
        systems=systems, sentences=sentences, judges=judges,
        first=np.concatenate([codes(p, "first", p.systems, index[0]) for p in parts]),
        second=np.concatenate([codes(p, "second", p.systems, index[0]) for p in parts]),
        outcome=np.concatenate([p.outcome for p in parts]),
        sentence=np.concatenate([codes(p, "sentence", p.sentences, index[1]) for p in parts]),
        judge=np.concatenate([codes(p, "judge", p.judges, index[2]) for p in parts]),
        source_format=parts[0].source_format, path="+".join(p.path for p in parts))


def cell_margin(plus, zero, minus, votes):
    """P(A wins the sentence) - P(B wins it) for ``votes`` iid judgments of a cell whose
    judgments prefer A, neither, B with probabilities plus, zero, minus (arrays):
    the distribution of votes(A) - votes(B), summed as sentence_categories reads it."""
    reach = votes
    dist = np.zeros((np.size(plus), 2 * reach + 1))
    dist[:, reach] = 1.0
    for _ in range(votes):
        new = dist * np.asarray(zero)[:, None]
        new[:, 1:] += dist[:, :-1] * np.asarray(plus)[:, None]
        new[:, :-1] += dist[:, 1:] * np.asarray(minus)[:, None]
        dist = new
    d = np.arange(-reach, reach + 1)
    categories = winners.sentence_categories(np.maximum(d, 0), np.maximum(-d, 0))
    a_wins, b_wins = categories <= 1, categories >= 3
    return dist[:, a_wins].sum(1) - dist[:, b_wins].sum(1)


@dataclass
class ReplaySet:
    """A data set ready to replay: its judgments sorted by (pair, sentence) and what
    the full data's analysis says. Pairs are canonical (the system whose name sorts
    first is A); outcomes are +1 A better, 0 tie, -1 B better."""

    name: str
    systems: list
    pairs: list  # (name_a, name_b)
    sentences: int
    judgments: int
    outcome: np.ndarray  # int8, sorted by cell
    cell_key: np.ndarray  # pair * sentences + sentence, sorted
    cell_start: np.ndarray
    cell_count: np.ndarray
    pair_cells: np.ndarray  # cells of pair p: pair_cells[p] .. pair_cells[p + 1]
    pair_start: np.ndarray  # judgments of pair p: pair_start[p] .. + pair_count[p]
    pair_count: np.ndarray
    truth: np.ndarray  # int8 per pair: +1 A significantly better, -1 B, 0 not significant
    top: object  # the full data's top system (ahead of every other in per-sentence wins), or None
    direction: dict = field(default_factory=dict)  # (supply, votes) -> int8 per pair

    @property
    def n_pairs(self):
        return len(self.pairs)


def replay_set(name, data):
    """A ReplaySet of a loader.Judgments (pairs never compared in the data are left out)."""
    k = len(data.systems)
    first, second = data.first.astype(np.int64), data.second.astype(np.int64)
    lo, hi = np.minimum(first, second), np.maximum(first, second)
    outcome = np.where(first <= second, data.outcome, -data.outcome).astype(np.int8)
    keep = lo != hi
    lo, hi, outcome, sentence = lo[keep], hi[keep], outcome[keep], data.sentence[keep].astype(np.int64)
    codes, pair = np.unique(lo * k + hi, return_inverse=True)
    pair = pair.ravel()
    pairs = [(data.systems[c // k], data.systems[c % k]) for c in codes]
    n_sentences = len(data.sentences)
    key = pair * n_sentences + sentence
    order = np.argsort(key, kind="stable")
    cell_key, cell_start, cell_count = np.unique(key[order], return_index=True, return_counts=True)
    pair_cells = np.searchsorted(cell_key // n_sentences, np.arange(len(pairs) + 1))
    pair_count = np.bincount(pair, minlength=len(pairs))
    pair_start = np.concatenate([[0], np.cumsum(pair_count)[:-1]])

    # the truth: the project's analysis of every real judgment
    tables = winners.pair_tables(data)
    significance = winners.significance(tables, alpha=ALPHA, test="sign", correction="holm", unit="items")
    by_pair = {tuple(entry["systems"]): entry for entry in significance}
    truth = np.array([0 if by_pair[p]["better"] is None else 1 if by_pair[p]["better"] == p[0] else -1
                      for p in pairs], dtype=np.int8)
    ahead = {}  # system -> pairs in which it won more sentences than the other
    for a, b in pairs:
        wins = by_pair[(a, b)]["sentence_wins"]
        if wins[a] != wins[b]:
            winner = a if wins[a] > wins[b] else b
            ahead[winner] = ahead.get(winner, 0) + 1
    top = next((s for s, n in ahead.items() if n == len(data.systems) - 1), None)
    if len(pairs) < len(data.systems) * (len(data.systems) - 1) // 2:
        top = None  # some pair never compared: no system is known to be ahead of all
    out = ReplaySet(name, list(data.systems), pairs, n_sentences, int(keep.sum()), outcome[order], cell_key,
                    cell_start, cell_count, pair_cells, pair_start, pair_count, truth, top)
    for votes in {1, TARGET}:
        for supply in ("fresh", "real"):
            out.direction[(supply, votes)] = model_direction(out, supply, votes)
    return out


def model_direction(data, supply, votes):
    """The sign per pair of the model's P(A wins a sentence) - P(B wins it), ``votes``
    judgments per (sentence, pair), over the sentences ``supply`` draws from."""
    o = data.outcome.astype(np.int64)

    def shares(starts, counts):
        plus = np.add.reduceat((o == 1).astype(np.int64), starts) / counts
        minus = np.add.reduceat((o == -1).astype(np.int64), starts) / counts
        return plus, 1.0 - plus - minus, minus

    cells = cell_margin(*shares(data.cell_start, data.cell_count), votes)
    cell_pair = data.cell_key // data.sentences
    per_pair_cells = np.bincount(cell_pair, weights=cells, minlength=data.n_pairs)
    n_cells = np.diff(data.pair_cells)
    if supply == "fresh":
        mean = per_pair_cells / n_cells
    else:  # every data sentence: its cell, or the pair's pool when the pair has none there
        pool = cell_margin(*shares(data.pair_start, data.pair_count), votes)
        mean = (per_pair_cells + (data.sentences - n_cells) * pool) / data.sentences
    return np.sign(np.round(mean, 12)).astype(np.int8)


def load_sets(args):
    specs = args.data or []
    if not specs:
        if not os.path.isdir(REFERENCE):
            sys.exit(f"no --data and no reference data at {os.path.normpath(REFERENCE)}")
        specs = [(name, [os.path.join(REFERENCE, f) for f in files]) for name, files in DEFAULT_SETS]
    else:
        specs = [[s] if os.path.exists(s) else s.split("+") for s in specs]
        specs = [("+".join(os.path.splitext(os.path.basename(f))[0] for f in files), files) for files in specs]
    sets = []
    for name, files in specs:
        try:
            data = merge([loader.load(f, campaign=args.campaign) for f in files])
        except loader.InputError as exc:
            sys.exit(str(exc))
        sets.append(replay_set(name, data))
    return sets


# ---------------------------------------------------------------------------
# drawing judgments


def draw(data, pair, sentence):
    """Where judgments of ``pair`` on the data's ``sentence`` (arrays) are drawn from:
    (start, count) of the real cell's judgments, or of all the pair's judgments when
    the data has none of that pair on that sentence."""
    key = pair * data.sentences + sentence
    at = np.minimum(np.searchsorted(data.cell_key, key), len(data.cell_key) - 1)
    found = data.cell_key[at] == key
    start = np.where(found, data.cell_start[at], data.pair_start[pair])
    count = np.where(found, data.cell_count[at], data.pair_count[pair])
    return start, count


def fresh_cells(data, rng, pair):
    """A bootstrap draw of one of each pair's real sentences (cell indices)."""
    first, n = data.pair_cells[pair], np.diff(data.pair_cells)[pair]
    return first + (rng.random(np.shape(pair)) * n).astype(np.int64)


def take(data, rng, start, count, shape):
    """Judgments drawn with replacement from the ranges start .. start + count."""
    picks = start + (rng.random(shape) * count).astype(np.int64)
    return data.outcome[picks]


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


def waterfill(judged, room, budget):
    """Each of ``budget`` judgments to the pair with the fewest judgments (``judged``, in
    the order next_pairs gave, which breaks ties), no pair past its ``room``: the
    judgments each pair gets."""
    judged = np.asarray(judged, np.int64)
    room = np.asarray(room, np.int64)
    budget = min(budget, int(room.sum()))
    if budget <= 0:
        return np.zeros_like(judged)
    low, high = int(judged.min()), int(judged.min()) + budget  # the level all are raised to
    while low < high:
        mid = (low + high + 1) // 2
        if np.minimum(np.maximum(mid - judged, 0), room).sum() <= budget:
            low = mid
        else:
            high = mid - 1
    give = np.minimum(np.maximum(low - judged, 0), room)
    rest = budget - int(give.sum())
    if rest:  # one more each to pairs at the level with room, in next_pairs' order
        can = np.flatnonzero((judged + give == low) & (give < room))[:rest]
        give[can] += 1
    return give


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
        give[candidates] = waterfill(judged[candidates], room[candidates], budget)
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


# ---------------------------------------------------------------------------
# running and summing up


_SETS = []  # the workers' copy (forked)


def run_chunk(task):
    set_index, rule, null, campaigns, seed, looks, horizon, replan_every, step = task
    data = _SETS[set_index]
    kind, supply, goal = RULES[rule]
    out = []
    for number in campaigns:
        sequence = np.random.SeedSequence(seed, spawn_key=(set_index, list(RULES).index(rule), int(null), number))
        campaign_seed = int(sequence.generate_state(1, np.uint64)[0])
        if kind == "ebaluatoia":
            out.append(ebaluatoia_campaign(data, supply, null, campaign_seed, looks, horizon))
        else:
            out.append(sequential_campaign(data, supply, goal, null, campaign_seed, looks, horizon,
                                           replan_every, step))
    return set_index, rule, null, out


def b80(shown, looks):
    """The smallest look at which at least 80 % of the campaigns (rows) show it, or None."""
    hit = np.flatnonzero(shown.mean(0) >= SHOW - 1e-12)
    return int(looks[hit[0]]) if hit.size else None


def bootstrap_b80(shown, looks, rng, resamples):
    """B80 of ``resamples`` resamples of the campaigns (inf when not reached)."""
    n = shown.shape[0]
    weights = np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(resamples)])
    share = weights @ shown.astype(np.float64) / n
    reached = share >= SHOW - 1e-12
    first = np.where(reached.any(1), reached.argmax(1), -1)
    return np.where(first >= 0, np.asarray(looks, np.float64)[np.maximum(first, 0)], np.inf)


def saving(base, rule, looks, seed, resamples, horizon):
    """(B80 base / B80 rule, low, high) with a 95 % bootstrap interval; (bound, None,
    None) when only the base does not get there within the horizon (the saving is above
    horizon / B80 rule; ``horizon`` None: the base never gets there); None when the rule
    does not."""
    b, r = b80(base, looks), b80(rule, looks)
    if r is None:
        return None
    if b is None:
        return (math.inf if horizon is None else horizon / r), None, None
    rng = np.random.default_rng(seed)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = bootstrap_b80(base, looks, rng, resamples) / bootstrap_b80(rule, looks, rng, resamples)
    ratios = np.where(np.isnan(ratios), np.inf, ratios)
    low, high = np.quantile(ratios, [0.025, 0.975], method="inverted_cdf")
    return b / r, low, high


def fmt_saving(figures):
    if figures is None:
        return "-"
    value, low, high = figures
    if low is None:
        return "∞ (Ebaluatoia never)" if math.isinf(value) else f"> {value:.1f}x"
    text = lambda x: "∞" if math.isinf(x) else f"{x:.1f}"  # noqa: E731
    return f"{value:.1f}x ({text(low)}-{text(high)})"


def fmt_b80(value, horizon, campaigns):
    """B80, or why there is none: "never" when every campaign ended before the horizon
    (its goal reached, or its real supply used up), else "> horizon"."""
    if value is not None:
        return fmt(value)
    return "never" if ended_early(campaigns, horizon) else f"> {fmt(horizon)}"


def ended_early(campaigns, horizon):
    return max(c.used for c in campaigns) < horizon


def percent(flags):
    return f"{100 * np.mean(flags):.0f} %"


def auto_step(horizon, pairs):
    """A round number (1, 2, 2.5 or 5 times a power of 10) near a 200th of the horizon,
    a 500th with 10 pairs or fewer (their looks are cheap)."""
    aim = max(1.0, horizon / (200 if pairs > 10 else 500))
    power = 10 ** math.floor(math.log10(aim))
    return int(max(m * power for m in (1, 2, 2.5, 5) if m * power <= aim and (m * power) % 1 == 0))


def plan_of(data, args):
    horizon = args.horizon or max(data.sentences * data.n_pairs * TARGET, 10 * data.judgments)
    step = args.look_every or auto_step(horizon, data.n_pairs)
    looks = np.arange(step, horizon + 1, step)
    return horizon, step, looks


def simulate(sets, rules, args):
    """{(set index, rule, null): [Campaign]}, the campaigns run in ``args.jobs`` processes."""
    tasks = []
    chunk = max(1, min(10, args.campaigns // max(1, args.jobs)))
    for s, data in enumerate(sets):
        horizon, step, looks = plan_of(data, args)
        for rule in rules:
            for null in (False,) if args.no_null else (False, True):
                count = args.null_campaigns if null else args.campaigns
                for first in range(0, count, chunk):
                    numbers = list(range(first, min(count, first + chunk)))
                    tasks.append((s, rule, null, numbers, args.seed, looks, horizon, args.replan_every, step))
    # the slow ones first: WMT13's sequential rules
    tasks.sort(key=lambda t: -sets[t[0]].n_pairs * (3 if RULES[t[1]][0] == "sequential" else 1))
    results = {}
    _SETS[:] = sets
    if args.jobs > 1:
        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            done = pool.imap_unordered(run_chunk, tasks)
            for number, (s, rule, null, out) in enumerate(done, 1):
                results.setdefault((s, rule, null), []).extend(out)
                if number % max(1, len(tasks) // 20) == 0:
                    log(f"  {number}/{len(tasks)} chunks")
    else:
        for s, rule, null, out in map(run_chunk, tasks):
            results.setdefault((s, rule, null), []).extend(out)
    return results


def summary(sets, rules, results, args):
    rows, about = [], []
    for s, data in enumerate(sets):
        horizon, step, looks = plan_of(data, args)
        about.append([data.name, len(data.systems), data.n_pairs, fmt(data.judgments), fmt(data.sentences),
                      f"{int(np.count_nonzero(data.truth))} of {data.n_pairs}", data.top or "none",
                      fmt(horizon), fmt(step)])
        for rule in rules:
            kind, supply, _goal = RULES[rule]
            model, null = results[(s, rule, False)], results.get((s, rule, True), [])
            ordering = np.array([c.ordering for c in model])
            exact = np.array([c.exact for c in model])
            top = np.array([c.top for c in model])
            base_rule = f"ebaluatoia-{supply}"
            base = results.get((s, base_rule, False))
            seed = args.seed + 7919 * s
            if base is None or base_rule == rule:
                save_order = save_top = None
            else:
                reach = None if ended_early(base, horizon) else horizon
                save_order = saving(np.array([c.ordering for c in base]), ordering, looks, seed, args.bootstrap, reach)
                save_top = saving(np.array([c.top for c in base]), top, looks, seed + 1, args.bootstrap, reach)
            no_order = not data.truth.any()
            rows.append([
                data.name, rule,
                "n/a" if no_order else fmt_b80(b80(ordering, looks), horizon, model),
                "1x" if base_rule == rule and b80(ordering, looks) and not no_order else fmt_saving(save_order),
                "n/a" if no_order else fmt_b80(b80(exact, looks), horizon, model),
                "n/a" if data.top is None else fmt_b80(b80(top, looks), horizon, model),
                "1x" if base_rule == rule and b80(top, looks) and data.top is not None else fmt_saving(save_top),
                f"{percent([c.wrong_end for c in model])} / {percent([c.wrong_any for c in model])}",
                f"{percent([c.wrong_end for c in null])} / {percent([c.wrong_any for c in null])}" if null else "-",
                fmt(np.median([c.used for c in model])),
            ])
    return about, rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", action="append", metavar="FILE[+FILE...]",
                        help="a judgments file the analysis reads (repeat for several sets; "
                             "FILE+FILE: one set of several files); default: the reference sets")
    parser.add_argument("--campaign", metavar="SLUG", help="the campaign (language pair) to keep of a file with several")
    parser.add_argument("--campaigns", type=int, default=None, help="simulated campaigns per set and rule (100)")
    parser.add_argument("--quick", action="store_true", help="20 campaigns, 500 bootstrap resamples")
    parser.add_argument("--rules", default=",".join(RULES), help=f"of {', '.join(RULES)}")
    parser.add_argument("--null-campaigns", type=int, default=None,
                        help="campaigns of the null replay (twice --campaigns: it is the error-rate check)")
    parser.add_argument("--no-null", action="store_true", help="skip the null replay")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--look-every", type=int, default=0, help="judgments between looks (auto)")
    parser.add_argument("--horizon", type=int, default=0, help="judgments at most (sentences x pairs x 5)")
    parser.add_argument("--replan-every", type=int, default=0,
                        help="judgments between re-plans (default: the pairs, or 1 %% of the judgments so far)")
    parser.add_argument("--bootstrap", type=int, default=None, help=f"resamples ({BOOTSTRAP})")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    args.campaigns = args.campaigns or (20 if args.quick else 100)
    args.bootstrap = args.bootstrap or (500 if args.quick else BOOTSTRAP)
    args.null_campaigns = args.null_campaigns or 2 * args.campaigns
    rules = [r.strip() for r in args.rules.split(",") if r.strip()]
    unknown = [r for r in rules if r not in RULES]
    if unknown:
        parser.error(f"unknown rules {', '.join(unknown)}; known: {', '.join(RULES)}")
    command = "python scripts/bench/bench_efficiency.py" + "".join(f" {a}" for a in (argv if argv is not None
                                                                                        else sys.argv[1:]))
    log(f"machine busy before the run: {machine_busy():.0f} %")
    started = time.perf_counter()
    sets = load_sets(args)
    for data in sets:
        disagree = int(np.count_nonzero((data.truth != 0) & (data.truth != data.direction[("fresh", 1)])))
        if disagree:
            log(f"  {data.name}: {disagree} significant pairs whose model direction differs")
    results = simulate(sets, rules, args)
    about, rows = summary(sets, rules, results, args)
    seconds = time.perf_counter() - started
    nulls = "" if args.no_null or args.null_campaigns == args.campaigns else f" ({args.null_campaigns} null)"
    print(f"`{command}`: {args.campaigns} campaigns per set and rule{nulls}, {fmt(seconds)} s on "
          f"{args.jobs} process{'es' if args.jobs > 1 else ''}\n")
    print(markdown(["set", "systems", "pairs", "judgments", "sentences", "significant pairs (full data)",
                    "top system", "horizon", "looks every"], about))
    print(markdown(["set", "rule", "B80 ordering", "saving (95 % CI)", "B80 exactly", "B80 top", "saving (95 % CI)",
                    "FWER end / any look", "null FWER end / any look", "judgments at the end (median)"], rows))
    print(LEGEND)
    return about, rows


if __name__ == "__main__":
    main()
