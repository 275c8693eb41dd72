"""Simulated campaigns of 8 equal systems: how often each significance
setting finds a difference that is not there.

    .venv/bin/python scripts/bench/simulate_significance.py [--campaigns 2000] [--sentences 300]
        [--per-sentence 5] [--ties 0.2] [--icc 0 0.3] [--seed 1] [--icc-of FILE ...]

In each campaign every pair of the 8 systems is judged on the same source
sentences, --per-sentence judgments per sentence and pair.  A judgment is a
tie with probability --ties, otherwise it prefers the pair's first system
with probability p_s, the same for all judgments of one sentence and pair.
With --icc 0, p_s = 1/2: independent judgments.  Otherwise p_s ~ Beta(c, c)
with c = (1/icc - 1) / 2, so two decisive judgments of one sentence are
correlated by icc (0.15 to 0.39 in the WMT19 reference data).  On average no
system is better than another, so every significant pair and every ">" in
an ordering is spurious.  The judgments go through the real analysis:
winners.pair_tables, winners.significance, Bradley-Terry scores for the
tie-break, ordering.order_systems.

Also printed: the exact false-positive rate of each single test for every
number n of decisive units (no simulation), and with --icc-of the icc
measured in real judgment files.
"""
import argparse
import time

import numpy as np
from scipy import stats

from harness import table

from app.stats.bradley_terry import bradley_terry
from app.stats.loader import Judgments, load
from app.stats.ordering import beats_from_pairs, order_systems
from app.stats.winners import UNITS, pair_tables, sign_test, significance, z_test

SYSTEMS = [f"system-{i}" for i in range(8)]
# (label, test, correction, unit deciding the ordering)
SETTINGS = [
    ("old defaults: z-test, no correction, items", "z", "none", "items"),
    ("z-test, Holm, items", "z", "holm", "items"),
    ("sign test, no correction, items", "sign", "none", "items"),
    ("**new defaults: sign test, Holm, items**", "sign", "holm", "items"),
    ("sign test, no correction, judgments", "sign", "none", "judgments"),
    ("sign test, Holm, judgments", "sign", "holm", "judgments"),
]
# per-pair tests whose real false-positive rate is measured: label -> p
SINGLE_TESTS = {
    "z-test (paper, no continuity correction)": lambda a, b: z_test(a, b)[1],
    "z-test with continuity correction": lambda a, b: z_test(a, b, continuity=True)[1],
    "exact sign test": sign_test,
    "two-proportion z-test": lambda a, b: z_test(a, b, "two-proportion")[1],
}


def campaign(rng, sentences, per_sentence, ties, icc):
    """One campaign's judgments (canonical pairs, judges irrelevant here)."""
    k = len(SYSTEMS)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    cells = len(pairs) * sentences
    if icc > 0:
        c = (1.0 / icc - 1.0) / 2.0
        p_first = rng.beta(c, c, cells)
    else:
        p_first = np.full(cells, 0.5)
    p_first = np.repeat(p_first, per_sentence)
    tie = rng.random(p_first.size) < ties
    outcome = np.where(tie, 0, np.where(rng.random(p_first.size) < p_first, 1, -1))
    first = np.repeat(np.array([i for i, _ in pairs], dtype=np.int32), sentences * per_sentence)
    second = np.repeat(np.array([j for _, j in pairs], dtype=np.int32), sentences * per_sentence)
    sentence = np.tile(np.repeat(np.arange(sentences, dtype=np.int32), per_sentence), len(pairs))
    judge = np.tile(np.arange(per_sentence, dtype=np.int32), cells)
    return Judgments(systems=SYSTEMS, sentences=[str(s) for s in range(sentences)],
                     judges=[str(j) for j in range(per_sentence)], first=first, second=second,
                     outcome=outcome.astype(np.int8), sentence=sentence, judge=judge)


def simulate(args, icc):
    rng = np.random.default_rng(args.seed)
    significant = np.zeros((len(SETTINGS), args.campaigns))
    spurious_gt = np.zeros((len(SETTINGS), args.campaigns), dtype=bool)
    single = {(name, unit): 0 for name in SINGLE_TESTS for unit in UNITS}
    decisive = {unit: 0 for unit in UNITS}
    tests = 0
    for c in range(args.campaigns):
        data = campaign(rng, args.sentences, args.per_sentence, args.ties, icc)
        tables = pair_tables(data)
        scores = {r["system"]: r["score"] for r in bradley_terry(data, rounds=0)["scores"]}
        for s, (_, test, correction, unit) in enumerate(SETTINGS):
            pairs = significance(tables, alpha=args.alpha, test=test, correction=correction, unit=unit)
            significant[s, c] = sum(p["significant"] for p in pairs)
            spurious_gt[s, c] = ">" in order_systems(SYSTEMS, beats_from_pairs(pairs), scores)["ordering"]
        for t in tables:
            a_name, b_name = t["systems"]
            for unit, wins in (("items", t["sentence_wins"]), ("judgments", t["wins"])):
                a, b = wins[a_name], wins[b_name]
                decisive[unit] += a + b
                for name, p_value in SINGLE_TESTS.items():
                    single[(name, unit)] += p_value(a, b) < args.alpha
        tests += len(tables)
    return significant, spurious_gt, single, decisive, tests


def exact_sizes(alpha, ranges=((10, 50), (51, 300), (301, 1500))):
    """Rows: for n decisive units in each range, each test's mean and
    largest real false-positive rate (which n), from the binomial."""
    rows = []
    for low, high in ranges:
        sizes = {name: [] for name in SINGLE_TESTS}
        for n in range(low, high + 1):
            pmf = stats.binom.pmf(np.arange(n + 1), n, 0.5)
            for name, p_value in SINGLE_TESTS.items():
                reject = [p_value(a, n - a) < alpha for a in range(n + 1)]
                sizes[name].append(pmf[reject].sum())
        rows.append([f"{low}-{high}"] + [
            f"{100 * np.mean(sizes[name]):.2f} % / {100 * max(sizes[name]):.2f} % "
            f"(n = {low + int(np.argmax(sizes[name]))})" for name in SINGLE_TESTS])
    return rows


def measured_icc(path):
    """Per system pair of a real file: the correlation of two decisive
    judgments of one sentence (moment estimate, as the Beta model has it)."""
    data = load(path)
    lo, hi = np.minimum(data.first, data.second), np.maximum(data.first, data.second)
    outcome = np.where(data.first <= data.second, data.outcome, -data.outcome)
    rows = []
    for i, j in sorted(set(zip(lo.tolist(), hi.tolist()))):
        mask = (lo == i) & (hi == j)
        s, o = data.sentence[mask], outcome[mask]
        a = np.bincount(s, weights=o == 1, minlength=len(data.sentences))
        m = a + np.bincount(s, weights=o == -1, minlength=len(data.sentences))
        keep = m >= 2
        a, m = a[keep], m[keep]
        p = a.sum() / m.sum()
        icc = ((a - m * p) ** 2 - m * p * (1 - p)).sum() / (m * (m - 1) * p * (1 - p)).sum()
        rows.append([path.rsplit("/", 1)[-1], f"{data.systems[i]} vs {data.systems[j]}",
                     int(keep.sum()), f"{m.mean():.1f}", f"{icc:.2f}"])
    return rows


def share(count, n):
    """'4.1 % (2.9-5.6)': a proportion with its exact 95 % interval."""
    low, high = stats.binomtest(int(count), n).proportion_ci()
    return f"{100 * count / n:.1f} % ({100 * low:.1f}-{100 * high:.1f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--campaigns", type=int, default=2000)
    parser.add_argument("--sentences", type=int, default=300)
    parser.add_argument("--per-sentence", type=int, default=5, help="judgments per sentence and pair")
    parser.add_argument("--ties", type=float, default=0.2, help="share of tie judgments")
    parser.add_argument("--icc", type=float, nargs="+", default=[0.0, 0.3],
                        help="correlation of the judgments of one sentence; one run each")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--icc-of", metavar="FILE", nargs="+", default=[],
                        help="also measure the icc in these judgment files")
    args = parser.parse_args()
    n_pairs = len(SYSTEMS) * (len(SYSTEMS) - 1) // 2
    for icc in args.icc:
        started = time.perf_counter()
        significant, spurious_gt, single, decisive, tests = simulate(args, icc)
        print(f"### {args.campaigns} campaigns, {len(SYSTEMS)} equal systems, {n_pairs} pairs, "
              f"{args.sentences} sentences x {args.per_sentence} judgments per pair, "
              f"{100 * args.ties:.0f} % ties, icc {icc}, alpha {args.alpha} "
              f"({time.perf_counter() - started:.0f} s)\n")
        print(f"Decisive per pair: {decisive['items'] / tests:.0f} sentences, "
              f"{decisive['judgments'] / tests:.0f} judgments.\n")
        table(["setting (test, correction, unit)", "spurious significant pairs per campaign",
               "campaigns with any (family-wise error)", "orderings with a spurious >"],
              [[label, f"{significant[s].mean():.2f}", share((significant[s] > 0).sum(), args.campaigns),
                share(spurious_gt[s].sum(), args.campaigns)] for s, (label, *_rest) in enumerate(SETTINGS)])
        table(["one pair, no correction: real false-positive rate", "items", "judgments"],
              [[name, share(single[(name, "items")], tests), share(single[(name, "judgments")], tests)]
               for name in SINGLE_TESTS])
    print(f"### Exact false-positive rate of one test at alpha {args.alpha}, "
          f"n decisive units: mean over n / largest (at which n)\n")
    table(["n"] + list(SINGLE_TESTS), exact_sizes(args.alpha))
    if args.icc_of:
        print("### icc measured in real judgments\n")
        table(["file", "pair", "sentences with 2+ decisive judgments", "mean decisive judgments",
               "icc"], [row for path in args.icc_of for row in measured_icc(path)])


if __name__ == "__main__":
    main()
