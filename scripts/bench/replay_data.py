"""The data of the replay benchmark (bench_efficiency.py, issue 32): real judgments loaded
into arrays sorted by (pair, sentence), what the full data's analysis says of them (the
truth, the top system, the model's direction of every pair), and the draws of replayed
judgments from them (the replay model is described in bench_efficiency.py's docstring).
"""
import os
import sys
from dataclasses import dataclass, field

import numpy as np

from harness import ROOT

from app.stats import winners
from app.stats.pairwise import loader
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

