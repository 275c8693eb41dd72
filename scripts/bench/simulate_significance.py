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
tie-break, ordering.order_systems.  Two candidate tests that are not in the
analysis (a t-test and a Wilcoxon signed-rank test on each sentence's share
(votes(A) - votes(B)) / judgments) are computed here beside its own.

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
from app.stats.pairwise.loader import Judgments, load
from app.stats.ordering import beats_from_pairs, order_systems
from app.stats.winners import holm, pair_tables, sign_test, significance, z_test

SYSTEMS = [f"system-{i}" for i in range(8)]
UNITS = ("items", "judgments")
# (label, unit, p-value key in winners.significance's units, or a candidate's
# name; correction).  "shares" are the candidates computed here.
SETTINGS = [
    ("paper: z-test, no correction, items", "items", "p_z", "none"),
    ("z-test, Holm, items", "items", "p_z", "holm"),
    ("issue 19 default: sign test, Holm, items", "items", "p_sign", "holm"),
    ("**default: sign-flip test, Holm, margins**", "margins", "p_flip", "holm"),
    ("sign-flip test, no correction, margins", "margins", "p_flip", "none"),
    ("t-test, Holm, shares", "shares", "t", "holm"),
    ("Wilcoxon signed-rank, Holm, shares", "shares", "wilcoxon", "holm"),
    ("sign test, no correction, judgments (invalid)", "judgments", "p_sign", "none"),
    ("sign test, Holm, judgments (invalid)", "judgments", "p_sign", "holm"),
]
# per-pair tests whose real false-positive rate is measured: label -> p
SINGLE_TESTS = {
    "z-test (paper, no continuity correction)": lambda a, b: z_test(a, b)[1],
    "z-test with continuity correction": lambda a, b: z_test(a, b, continuity=True)[1],
    "exact sign test": sign_test,
    "two-proportion z-test": lambda a, b: z_test(a, b, "two-proportion")[1],
}


def campaign(rng, sentences, per_sentence, ties, icc, split=None):
    """One campaign's judgments (canonical pairs, judges irrelevant here).

    ``split``: the share of decisive judgments system-0 wins against
    system-1 on average (the power simulation); None: all pairs 1/2."""
    k = len(SYSTEMS)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    cells = len(pairs) * sentences
    mean = np.full(cells, 0.5)
    if split is not None:
        mean[:sentences] = split        # pair (0, 1) comes first
    if icc > 0:
        # Beta with this mean and a + b = 1/icc - 1: the same icc at any mean
        c = 1.0 / icc - 1.0
        p_first = rng.beta(c * mean, c * (1 - mean))
    else:
        p_first = mean
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


def share_tests(data, sentences, per_sentence):
    """Candidate p-values per pair (in pair_tables' order) from each
    sentence's share (votes(A) - votes(B)) / judgments."""
    shares = data.outcome.reshape(-1, sentences, per_sentence).sum(axis=2) / per_sentence
    with np.errstate(invalid="ignore", divide="ignore"):
        t = stats.ttest_1samp(shares, 0.0, axis=1).pvalue
        w = np.array([stats.wilcoxon(row, zero_method="wilcox", method="approx").pvalue
                      if row.any() else 1.0 for row in shares])
    return {"t": np.nan_to_num(t, nan=1.0), "wilcoxon": np.nan_to_num(w, nan=1.0)}


def verdicts(data, tables, args):
    """Per setting of SETTINGS: (p-values after its correction, winner
    names or None), one per pair."""
    pairs = significance(tables, alpha=args.alpha, test="sign", correction="none")
    candidates = share_tests(data, args.sentences, args.per_sentence)
    out = []
    for _, unit, key, correction in SETTINGS:
        if unit == "shares":
            p = candidates[key]
        else:
            p = np.array([e["units"][unit][key] for e in pairs])
        if correction == "holm":
            p = np.array(holm(p))
        margin = np.array([e["wins"][e["systems"][0]] - e["wins"][e["systems"][1]] for e in pairs])
        if unit == "items":
            margin = np.array([e["sentence_wins"][e["systems"][0]] - e["sentence_wins"][e["systems"][1]]
                               for e in pairs])
        better = [(e["systems"][0] if m > 0 else e["systems"][1]) if q < args.alpha and m else None
                  for e, q, m in zip(pairs, p, margin)]
        out.append((p, better))
    return out


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
        for s, (_, better) in enumerate(verdicts(data, tables, args)):
            pairs = [{"systems": t["systems"], "better": b} for t, b in zip(tables, better)]
            significant[s, c] = sum(b is not None for b in better)
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
