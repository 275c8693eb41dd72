"""The analysis (app.stats) on a synthetic export of 1,000,000 judgments.

    .venv/bin/python scripts/bench/bench_analysis.py [--rows 1000000] [--rounds 1000] [--keep FILE]
    .venv/bin/python scripts/bench/bench_analysis.py --da [--rows 1000000] [--rounds 1000]

Writes a Bozka CSV export (10 systems, 20,000 sentences, 2,000 judges;
outcomes from a Bradley-Terry model with 15 % ties), then in a fresh
process (so that the peak memory is the analysis's own) times reading it,
everything else but the bootstrap (agreement, winners, tests, ordering,
Bradley-Terry fit, text report, JSON), and the bootstrap. Targets: under
10 s without the bootstrap, under 30 s for it, under 1 GB of memory.

With --da: the DA analysis (app.stats.da) on 1,000,000 scores made in
memory (10 systems, 20,000 sentences, 2,000 judges), timed without and
with the bootstrap of judges and sentences for the z intervals.
"""
import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import time

from harness import scratch

HEADER = ["campaign", "judgment_id", "sentence_id", "system_a", "system_b", "shown_first", "choice", "volunteer",
          "age_group", "studies_level", "studies_field", "source_level", "target_level", "served_at",
          "answered_at", "seconds", "is_control", "control_passed", "discarded", "discard_reason"]


def generate(path, rows, n_systems=10, n_sentences=20_000, n_judges=2_000, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    names = [f"system-{i:02d}" for i in range(n_systems)]
    strength = np.linspace(1.0, -1.0, n_systems) + rng.normal(0, 0.1, n_systems)
    a = rng.integers(0, n_systems, rows)
    b = (a + rng.integers(1, n_systems, rows)) % n_systems
    p_a = 1.0 / (1.0 + np.exp(strength[b] - strength[a]))
    tie = rng.random(rows) < 0.15
    a_wins = ~tie & (rng.random(rows) < p_a)
    sentence = rng.integers(1, n_sentences + 1, rows)
    judge = rng.integers(0, n_judges, rows)
    a_first = rng.random(rows) < 0.5
    seconds = rng.gamma(4.0, 3.0, rows).round(1)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        for n in range(rows):
            sa, sb = names[a[n]], names[b[n]]
            writer.writerow(["bench", n + 1, sentence[n], sa, sb, sa if a_first[n] else sb,
                             "equal" if tie[n] else sa if a_wins[n] else sb, f"v-{judge[n]:06x}", "25-34",
                             "university", "languages", "C1", "native", "2024-05-01T10:00:00Z",
                             "2024-05-01T10:00:12Z", seconds[n], "false", "", "false", ""])


def measure(path, rounds):
    """Run in a fresh process: the figures as one JSON line."""
    from app.stats import analyse, load
    from app.stats import bradley_terry as bt
    from app.stats.output import clean_json
    from app.stats.pairwise.report import text_report

    t0 = time.perf_counter()
    data = load(path)
    t1 = time.perf_counter()
    result = analyse(data, rounds=0)
    text_report(result)
    json.dumps(clean_json(result), ensure_ascii=False)
    t2 = time.perf_counter()
    contributions = bt.sentence_contributions(data.first, data.second, data.outcome, data.sentence,
                                              len(data.systems), len(data.sentences))
    bt.rank_ranges(bt.bootstrap_scores(contributions, len(data.systems), rounds, 0))
    t3 = time.perf_counter()
    print(json.dumps({"read": t1 - t0, "rest": t2 - t1, "bootstrap": t3 - t2, "ordering": result["ordering"],
                      "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def measure_da(rows, rounds, n_systems=10, n_sentences=20_000, n_judges=2_000, seed=0):
    """DA analysis times on synthetic system scores, printed."""
    import numpy as np

    from app.stats.da.analysis import analyse_da
    from app.stats.da.loader import DAScores

    rng = np.random.default_rng(seed)
    judge = rng.integers(0, n_judges, rows)
    system = rng.integers(0, n_systems, rows)
    sentence = rng.integers(0, n_sentences, rows)
    score = np.clip(np.round(70 + 2 * system + rng.normal(0, 10, n_judges)[judge] + rng.normal(0, 15, rows)),
                    0, 100)
    data = DAScores(systems=[f"system-{i:02d}" for i in range(n_systems)],
                    sentences=[str(s) for s in range(n_sentences)], judges=[f"v-{j}" for j in range(n_judges)],
                    system=system.astype(np.int32), sentence=sentence.astype(np.int32),
                    judge=judge.astype(np.int32), kind=np.zeros(rows, dtype=np.int8), score=score,
                    original=np.full(rows, -1, dtype=np.int64), source_format="simulated")
    t0 = time.perf_counter()
    analyse_da(data, bootstrap=0)
    t1 = time.perf_counter()
    analyse_da(data, bootstrap=rounds)
    t2 = time.perf_counter()
    print(f"DA analysis of {rows:,} scores, no bootstrap   {t1 - t0:7.2f} s")
    print(f"DA analysis with {rounds} bootstrap resamples {t2 - t1:7.2f} s "
          f"(bootstrap {t2 - t1 - (t1 - t0):.2f} s)")
    print(f"peak memory (max RSS)               {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:7.0f} MB")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=1000, help="bootstrap rounds")
    parser.add_argument("--keep", metavar="FILE", help="write the synthetic CSV here and keep it")
    parser.add_argument("--measure", metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("--da", action="store_true", help="time the DA analysis instead")
    args = parser.parse_args()
    if args.da:
        return measure_da(args.rows, args.rounds)
    if args.measure:
        return measure(args.measure, args.rounds)
    with scratch() as workdir:
        path = args.keep or os.path.join(workdir, "judgments.csv")
        started = time.perf_counter()
        generate(path, args.rows)
        print(f"generated {args.rows:,} judgments: {os.path.getsize(path) / 1e6:.0f} MB of CSV in "
              f"{time.perf_counter() - started:.1f} s")
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--measure", path, "--rounds",
                              str(args.rounds)], check=True, capture_output=True, text=True).stdout
    f = json.loads(out.splitlines()[-1])
    for label, value, unit, target in (
            ("read CSV", f["read"], "s", ""), ("statistics, report and JSON", f["rest"], "s", ""),
            ("everything but the bootstrap", f["read"] + f["rest"], "s", "under 10 s"),
            (f"bootstrap, {args.rounds} rounds", f["bootstrap"], "s", "under 30 s"),
            ("peak memory (max RSS)", f["rss_mb"], "MB", "under 1,024 MB")):
        print((f"{label:<30} {value:7.2f} {unit:<3}" + (f" (target {target})" if target else "")).rstrip())
    print(f"ordering: {f['ordering']}")

if __name__ == "__main__":
    main()
