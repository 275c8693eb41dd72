"""Simulated campaigns of 8 systems, one of them better than another: how
often each significance setting finds the real difference.

    .venv/bin/python scripts/bench/simulate_power.py [--campaigns 1000] [--sentences 300]
        [--per-sentence 5] [--ties 0.2] [--split 0.55 0.57] [--icc 0 0.15 0.3 0.39] [--seed 1]

The campaigns of simulate_significance.py (28 pairs, the same sentences,
judgments per sentence and ties), except that system-0 wins --split of the
decisive judgments against system-1 on average; every other pair is even.
With icc > 0 the share of one sentence is drawn from a Beta with that mean
and the icc of the null simulation.  Printed per setting: the share of
campaigns in which system-0 is found significantly better than system-1
(power), found worse (a wrong direction), and in which any of the 27 even
pairs is found significant (family-wise error).
"""
import argparse
import time

import numpy as np

from harness import table
from simulate_significance import SETTINGS, campaign, share, verdicts

from app.stats.winners import pair_tables


def simulate(args, split, icc):
    rng = np.random.default_rng(args.seed)
    found = np.zeros(len(SETTINGS), dtype=int)
    wrong = np.zeros(len(SETTINGS), dtype=int)
    spurious = np.zeros(len(SETTINGS), dtype=int)
    for _ in range(args.campaigns):
        data = campaign(rng, args.sentences, args.per_sentence, args.ties, icc, split)
        tables = pair_tables(data)
        assert tables[0]["systems"] == ["system-0", "system-1"]
        for s, (_, better) in enumerate(verdicts(data, tables, args)):
            found[s] += better[0] == "system-0"
            wrong[s] += better[0] == "system-1"
            spurious[s] += any(b is not None for b in better[1:])
    return found, wrong, spurious


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--campaigns", type=int, default=1000)
    parser.add_argument("--sentences", type=int, default=300)
    parser.add_argument("--per-sentence", type=int, default=5, help="judgments per sentence and pair")
    parser.add_argument("--ties", type=float, default=0.2, help="share of tie judgments")
    parser.add_argument("--split", type=float, nargs="+", default=[0.55, 0.57],
                        help="system-0's share of the decisive judgments against system-1")
    parser.add_argument("--icc", type=float, nargs="+", default=[0.0, 0.15, 0.3, 0.39])
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for split in args.split:
        for icc in args.icc:
            started = time.perf_counter()
            found, wrong, spurious = simulate(args, split, icc)
            n = args.campaigns
            print(f"### {n} campaigns, system-0 wins {100 * split:.0f} % of the decisive judgments "
                  f"against system-1, 27 even pairs, {args.sentences} sentences x {args.per_sentence} "
                  f"judgments per pair, {100 * args.ties:.0f} % ties, icc {icc}, alpha {args.alpha} "
                  f"({time.perf_counter() - started:.0f} s)\n")
            table(["setting (test, correction, unit)", "power: system-0 found better",
                   "found worse", "any even pair significant"],
                  [[label, share(found[s], n), share(wrong[s], n), share(spurious[s], n)]
                   for s, (label, *_rest) in enumerate(SETTINGS)])


if __name__ == "__main__":
    main()
