"""DA judge quality control: how often the paired test drops an honest judge
and catches a random clicker, by the number of bad-reference pairs the judge
has (the default of ``--judge-min-pairs`` is the smallest number that keeps
honest judges at most 5 % dropped; docs/analysis.md).

    nice .venv/bin/python scripts/bench/simulate_da_qc.py [--judges 2000] [--seed 1]
        [--pairs 2 16]

Each simulated judge scores n bad references and their originals (0-100
integers) and goes through app.stats.da.quality.paired_test, both tests.

* Honest judge: an original's quality q ~ U(40, 100) (modern systems score
  high: WMT21 hi-bn's system means are 73-95); the judge's score is q plus
  noise N(0, s_j), s_j ~ U(5, 15) per judge; a bad reference is the same
  translation with damage the judge sees as D ~ N(m_j, 15) points, where the
  judge's mean drop m_j ~ U(m - 10, m + 10).  Central model m = 30; the table
  also shows m = 20 (a lenient judge) and m = 40.
* Random clicker: every score uniform on 0-100, independent.

A quality-control item is a bad reference, a repeat or a reference in equal
shares in a Bozka campaign with references (issue 20), so n bad-reference
pairs come with about 3n quality-control items.
"""
import argparse
import time

import numpy as np

from harness import table

from app.stats.da.quality import THRESHOLD, paired_test

MODELS = (30, 20, 40)        # mean drop m of the honest judges; the first is the central one


def honest(rng, n, mean_drop):
    """(bad, original) scores of one honest judge's n pairs."""
    noise = rng.uniform(5, 15)
    drop = rng.uniform(mean_drop - 10, mean_drop + 10)
    q = rng.uniform(40, 100, n)
    original = q + rng.normal(0, noise, n)
    bad = q - rng.normal(drop, 15, n) + rng.normal(0, noise, n)
    return np.clip(np.rint(bad), 0, 100), np.clip(np.rint(original), 0, 100)


def clicker(rng, n):
    return rng.integers(0, 101, n), rng.integers(0, 101, n)


def passes(bad, original, test):
    p = paired_test(bad, original, test)[1]
    return p is not None and p <= THRESHOLD


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--judges", type=int, default=2000, help="simulated judges per cell")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pairs", type=int, nargs=2, default=(2, 16), metavar=("FROM", "TO"))
    args = parser.parse_args()
    start = time.time()
    rng = np.random.default_rng(args.seed)
    header = ["pairs", "QC items"]
    for test in ("t", "wilcoxon"):
        header += [f"{test}: honest dropped (m={m})" for m in MODELS] + [f"{test}: clicker caught"]
    rows, first = [], {}
    for n in range(args.pairs[0], args.pairs[1] + 1):
        row = [n, 3 * n]
        for test in ("t", "wilcoxon"):
            for m in MODELS:
                dropped = np.mean([not passes(*honest(rng, n, m), test) for _ in range(args.judges)])
                row.append(f"{100 * dropped:.1f} %")
                if m == MODELS[0] and dropped <= 0.05:
                    first.setdefault(test, n)
            caught = np.mean([not passes(*clicker(rng, n), test) for _ in range(args.judges)])
            row.append(f"{100 * caught:.1f} %")
        rows.append(row)
    table(header, rows)
    for test, n in first.items():
        print(f"{test}: fewest pairs with honest judges (m={MODELS[0]}) dropped at most 5 %: {n}")
    print(f"{args.judges} judges per cell, seed {args.seed}, {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
