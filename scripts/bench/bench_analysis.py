#!/usr/bin/env python3
"""Benchmark of the analysis (app.stats) on synthetic judgments.

    python scripts/bench/bench_analysis.py [--rows 1000000] [--systems 10]
        [--sentences 20000] [--judges 2000] [--rounds 1000] [--seed 0]

1. Writes a synthetic Bozka export (CSV) to a temporary folder, in a child
   process: ``--rows`` judgments of random system pairs on random sentences
   by random judges, outcomes drawn from a Bradley-Terry model with 15 %
   ties.
2. In a fresh child process (so that peak memory is the analysis's own):
   times reading the CSV, then everything else except the bootstrap
   (agreement, winners, significance, ordering, Bradley-Terry fit, text
   report, JSON), then the bootstrap with ``--rounds`` rounds; reports the
   peak resident memory of that process.

It prints the figures; it asserts nothing (targets on the 2-core reference
machine: everything but the bootstrap under 10 s, the bootstrap under 30 s,
peak memory under 1 GB).  Results are recorded in docs/benchmarks.md.
"""

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

HEADER = ["campaign", "judgment_id", "sentence_id", "system_a", "system_b",
          "shown_first", "choice", "volunteer", "age_group", "studies_level",
          "studies_field", "source_level", "target_level", "served_at",
          "answered_at", "seconds", "is_control", "control_passed", "discarded",
          "discard_reason"]


def generate(path, rows, n_systems, n_sentences, n_judges, seed):
    import numpy as np

    rng = np.random.default_rng(seed)
    names = [f"system-{i:02d}" for i in range(n_systems)]
    strength = np.linspace(1.0, -1.0, n_systems) + rng.normal(0, 0.1, n_systems)
    a = rng.integers(0, n_systems, rows)
    b = (a + rng.integers(1, n_systems, rows)) % n_systems      # b != a
    p_a = 1.0 / (1.0 + np.exp(strength[b] - strength[a]))
    u = rng.random(rows)
    tie = u < 0.15
    a_wins = ~tie & (rng.random(rows) < p_a)
    sentence = rng.integers(1, n_sentences + 1, rows)
    judge = rng.integers(0, n_judges, rows)
    shown_a_first = rng.random(rows) < 0.5
    seconds = rng.gamma(4.0, 3.0, rows).round(1)
    judges = [f"v-{j:06x}" for j in range(n_judges)]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(HEADER)
        for n in range(rows):
            sa, sb = names[a[n]], names[b[n]]
            choice = "equal" if tie[n] else (sa if a_wins[n] else sb)
            writer.writerow([
                "bench", n + 1, sentence[n], sa, sb,
                sa if shown_a_first[n] else sb, choice, judges[judge[n]],
                "25-34", "university", "languages", "C1", "native",
                "2024-05-01T10:00:00Z", "2024-05-01T10:00:12Z", seconds[n],
                "false", "", "false", ""])


def measure(path, rounds, seed):
    from app.stats import analyse, load
    from app.stats import bradley_terry as bt
    from app.stats.report import clean_json, text_report

    figures = {}
    t0 = time.perf_counter()
    data = load(path)
    t1 = time.perf_counter()
    result = analyse(data, rounds=0)
    text = text_report(result)
    json.dumps(clean_json(result), ensure_ascii=False)
    t2 = time.perf_counter()
    contrib = bt.sentence_contributions(data.first, data.second, data.outcome,
                                        data.sentence, len(data.systems),
                                        len(data.sentences))
    samples = bt.bootstrap_scores(contrib, len(data.systems), rounds, seed)
    bt.rank_ranges(samples)
    t3 = time.perf_counter()
    figures.update({
        "judgments": len(data), "systems": len(data.systems),
        "sentences": len(data.sentences), "judges": len(data.judges),
        "read_csv_s": round(t1 - t0, 2),
        "statistics_s": round(t2 - t1, 2),
        "all_but_bootstrap_s": round(t2 - t0, 2),
        "bootstrap_rounds": rounds,
        "bootstrap_s": round(t3 - t2, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "kappa": round(result["agreement"]["inter"]["kappa"], 4),
        "ordering": result["ordering"],
        "report_lines": text.count("\n"),
    })
    print(json.dumps(figures, ensure_ascii=False))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--systems", type=int, default=10)
    p.add_argument("--sentences", type=int, default=20_000)
    p.add_argument("--judges", type=int, default=2_000)
    p.add_argument("--rounds", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--keep", metavar="FILE",
                   help="write the synthetic CSV here and keep it")
    p.add_argument("--generate", metavar="FILE", help=argparse.SUPPRESS)
    p.add_argument("--measure", metavar="FILE", help=argparse.SUPPRESS)
    args = p.parse_args()

    if args.generate:
        generate(args.generate, args.rows, args.systems, args.sentences,
                 args.judges, args.seed)
        return
    if args.measure:
        measure(args.measure, args.rounds, args.seed)
        return

    me = [sys.executable, os.path.abspath(__file__)]
    common = ["--rows", str(args.rows), "--systems", str(args.systems),
              "--sentences", str(args.sentences), "--judges", str(args.judges),
              "--seed", str(args.seed), "--rounds", str(args.rounds)]
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or os.path.join(tmp, "judgments.csv")
        t0 = time.perf_counter()
        subprocess.run(me + common + ["--generate", path], check=True)
        gen = time.perf_counter() - t0
        size = os.path.getsize(path) / 1e6
        print(f"generated {args.rows:,} judgments ({args.systems} systems, "
              f"{args.sentences:,} sentences, {args.judges:,} judges): "
              f"{size:.0f} MB CSV in {gen:.1f} s")
        out = subprocess.run(me + common + ["--measure", path], check=True,
                             capture_output=True, text=True).stdout
    f = json.loads(out.strip().splitlines()[-1])
    print(f"read CSV                       {f['read_csv_s']:6.2f} s")
    print(f"statistics, report and JSON    {f['statistics_s']:6.2f} s")
    print(f"everything but the bootstrap   {f['all_but_bootstrap_s']:6.2f} s   (target < 10 s)")
    print(f"bootstrap, {f['bootstrap_rounds']} rounds          {f['bootstrap_s']:6.2f} s   (target < 30 s)")
    print(f"peak memory (max RSS)          {f['peak_rss_mb']:6d} MB  (target < 1024 MB)")
    print(f"kappa {f['kappa']}; ordering: {f['ordering']}")
    print("json: " + json.dumps(f, ensure_ascii=False))


if __name__ == "__main__":
    main()
