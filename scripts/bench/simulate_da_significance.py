"""Simulated DA campaigns of 8 equal systems: how often the analysis prints
at least one "significantly better", uncorrected (WMT's matrix) and with
Holm over the system pairs (the default); and how wide the 95 % interval
of z is with the bootstrap of judges and sentences against the normal one.

    .venv/bin/python scripts/bench/simulate_da_significance.py [--campaigns 1000]
        [--judges 12] [--items 100] [--sentences 200] [--seed 1]

A campaign: --judges volunteers each score --items translations, each a
random system's translation of a random sentence (--sentences per system).
A score is 70 + the sentence's difficulty (sd 10) + the judge's leniency
(sd 10) + the judge's taste for the system (sd --taste) + noise (sd 15),
cut to 0-100 and rounded: no system is better than another, so every
significant pair is spurious.  Each campaign goes through the real
analysis (app.stats.da.analysis.analyse_da, defaults but the interval).
"""
import argparse
import time

import numpy as np
from scipy import stats

from harness import table

from app.stats.da.analysis import analyse_da
from app.stats.da.loader import DAScores

SYSTEMS = [f"system-{i}" for i in range(8)]


def campaign(rng, judges, items, sentences, taste):
    """One campaign's scores as a DAScores (system items only)."""
    n = judges * items
    judge = np.repeat(np.arange(judges), items)
    system = rng.integers(0, len(SYSTEMS), n)
    sentence = rng.integers(0, sentences, n)
    score = (70 + rng.normal(0, 10, sentences)[sentence] + rng.normal(0, 10, judges)[judge]
             + rng.normal(0, taste, (judges, len(SYSTEMS)))[judge, system] + rng.normal(0, 15, n))
    return DAScores(systems=SYSTEMS, sentences=[str(s) for s in range(sentences)],
                    judges=[f"j{j}" for j in range(judges)], system=system.astype(np.int32),
                    sentence=sentence.astype(np.int32), judge=judge.astype(np.int32),
                    kind=np.zeros(n, dtype=np.int8), score=np.clip(np.round(score), 0, 100),
                    original=np.full(n, -1, dtype=np.int64), source_format="simulated")


def share(count, n):
    """'4.1 % (2.9-5.6)': a proportion with its exact 95 % interval."""
    low, high = stats.binomtest(int(count), n).proportion_ci()
    return f"{100 * count / n:.1f} % ({100 * low:.1f}-{100 * high:.1f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--campaigns", type=int, default=1000)
    parser.add_argument("--judges", type=int, default=12)
    parser.add_argument("--items", type=int, default=100, help="scores per judge")
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--taste", type=float, default=0.0,
                        help="sd of a judge's liking for a system (what a judge bootstrap sees)")
    parser.add_argument("--bootstrap", type=int, default=200,
                        help="resamples for the interval (the analysis's default is 1000)")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    found = {"none": 0, "holm": 0}
    width = {"bootstrap": [], "normal": []}
    covered = {"bootstrap": 0, "normal": 0}
    for c in range(args.campaigns):
        data = campaign(rng, args.judges, args.items, args.sentences, args.taste)
        result = analyse_da(data, bootstrap=args.bootstrap, seed=c)
        normal = analyse_da(data, bootstrap=0)["systems"]
        for key, name in (("wilcoxon", "none"), ("wilcoxon_holm", "holm")):
            found[name] += any(p is not None and p < args.alpha
                               for row in result[key].values() for p in row.values())
        # every system's true z is the same: the interval of a system should
        # hold the mean of all systems' z 95 % of the time or more
        grand = np.mean([s["z"] for s in result["systems"]])
        for label, rows in (("bootstrap", result["systems"]), ("normal", normal)):
            width[label] += [s["z_ci_high"] - s["z_ci_low"] for s in rows]
            covered[label] += sum(s["z_ci_low"] <= grand <= s["z_ci_high"] for s in rows)
    n = args.campaigns
    print(f"### {n} campaigns, {len(SYSTEMS)} equal systems ({len(SYSTEMS) * 7 // 2} pairs), "
          f"{args.judges} judges x {args.items} scores, {args.sentences} sentences, judge taste "
          f"sd {args.taste}, alpha {args.alpha} ({time.perf_counter() - started:.0f} s)\n")
    table(["DA significance", "campaigns with at least one \"significantly better\""],
          [["uncorrected (WMT's matrix, --no-correction)", share(found["none"], n)],
           ["Holm over the system pairs (default)", share(found["holm"], n)]])
    ratio = np.mean(width["bootstrap"]) / np.mean(width["normal"])
    table(["95 % interval of z", "mean width", "holds the grand mean"],
          [[f"bootstrap of judges and sentences ({args.bootstrap} resamples)",
            f"{np.mean(width['bootstrap']):.3f} ({ratio:.2f}x)", share(covered["bootstrap"], n * 8)],
           ["normal over segments (z +- 1.96 sd / sqrt(N))", f"{np.mean(width['normal']):.3f}",
            share(covered["normal"], n * 8)]])


if __name__ == "__main__":
    main()
