"""The replay benchmark of issue 32 (scripts/bench/bench_efficiency.py, with replay_data.py and
replay_campaigns.py beside it) on a tiny synthetic data set: its fast look at the collected
counts agrees with the project's analysis, the Ebaluatoia slots are taken as
slots.choose_slot takes them, and the whole run (every rule, the null replay, the table)
works end to end. No efficiency figure is asserted beyond the obvious on clear-cut data."""
import os
import random

import numpy as np
import pytest

from stats_helpers import write_bozka_csv

from app.stats import winners
from app.stats.pairwise import loader

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                     "scripts", "bench")


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(BENCH)
    import bench_efficiency

    return bench_efficiency


@pytest.fixture
def replay_data(bench):
    import replay_data

    return replay_data


@pytest.fixture
def campaigns(bench):
    import replay_campaigns

    return replay_campaigns


def clear_cut_rows(sentences=40, seed=3):
    """A beats B beats C (decisive shares 0.8), two judgments per (sentence, pair), ties 10 %."""
    rng = random.Random(seed)
    rows = []
    for s in range(sentences):
        for a, b in (("A", "B"), ("B", "C"), ("A", "C")):
            for j in range(2):
                r = rng.random()
                choice = "equal" if r < 0.1 else a if r < 0.82 else b
                rows.append((f"s{s}", a, b, choice, f"v{j}"))
    return rows


def test_the_truth_is_the_analysis_of_all_judgments(replay_data):
    data = loader.from_records(clear_cut_rows())
    replay = replay_data.replay_set("tiny", data)
    assert replay.pairs == [("A", "B"), ("A", "C"), ("B", "C")]
    assert replay.truth.tolist() == [1, 1, 1] and replay.top == "A"
    assert replay.judgments == len(data) and replay.sentences == 40
    for key in (("fresh", 1), ("real", 1), ("fresh", 5), ("real", 5)):
        assert replay.direction[key].tolist() == [1, 1, 1]


def test_the_fast_look_is_the_projects_analysis(campaigns):
    """sentence_wins + fixed_directions on vote counts = winners.significance (unit items,
    sign test, Holm) of the same judgments built as records."""
    rng = np.random.default_rng(5)
    pairs = [("A", "B"), ("A", "C"), ("B", "C")]
    for trial in range(6):
        share = rng.uniform(0.3, 0.8, len(pairs))
        outcomes = np.where(rng.random((30, 3, 5)) < share[None, :, None], 1, -1)
        outcomes[rng.random((30, 3, 5)) < 0.15] = 0
        upto = rng.integers(1, 6, (30, 3))  # judgments collected per cell
        won_a, won_b = campaigns.sentence_wins(outcomes, upto)
        fast = campaigns.fixed_directions(won_a.sum(0), won_b.sum(0))
        records = [(f"s{s}", a, b, {1: a, -1: b, 0: "equal"}[int(outcomes[s, p, j])], f"v{j}")
                   for s in range(30) for p, (a, b) in enumerate(pairs) for j in range(upto[s, p])]
        tables = winners.pair_tables(loader.from_records(records))
        full = winners.significance(tables, test="sign", correction="holm", unit="items")
        expected = {tuple(e["systems"]): 0 if e["better"] is None else 1 if e["better"] == e["systems"][0] else -1
                    for e in full}
        assert fast.tolist() == [expected[p] for p in pairs], trial


def test_the_partly_filled_sentence_is_served_by_choose_slot(campaigns):
    rng = random.Random(1)
    for judged in (0, 1, 77, 78, 79, 200, 389):
        counts = campaigns.partial_counts(78, judged, 5, rng)
        assert counts.sum() == judged and counts.max() - counts.min() <= 1 and counts.max() <= 5


def test_every_rule_runs_and_the_sequential_one_needs_fewer(bench, replay_data, campaigns):
    replay = replay_data.replay_set("tiny", loader.from_records(clear_cut_rows()))
    looks = np.arange(10, 601, 10)
    ebaluatoia = [campaigns.ebaluatoia_campaign(replay, "fresh", False, seed, looks, 600) for seed in range(8)]
    seq = [campaigns.sequential_campaign(replay, "fresh", "ordering", False, seed, looks, 600) for seed in range(8)]
    top = [campaigns.sequential_campaign(replay, "real", "top", False, seed, looks, 600) for seed in range(4)]
    null = [campaigns.sequential_campaign(replay, "real", "ordering", True, seed, looks, 600) for seed in range(4)]
    first = [bench.b80(np.array([c.ordering for c in runs]), looks) for runs in (ebaluatoia, seq)]
    assert first[0] is not None and first[1] is not None and first[1] < first[0]
    assert all(c.used < 600 for c in seq)  # clear-cut: every pair decided, the campaign finished
    assert all(c.used <= 3 * 40 for c in top + null)  # the real supply: 40 sentences a pair, once each
    assert not any(c.wrong_any for c in seq + top)


def test_main_reads_a_bozka_export_and_prints_the_table(bench, tmp_path, capsys):
    path = write_bozka_csv(tmp_path / "tiny.csv", clear_cut_rows(sentences=25))
    about, rows = bench.main(["--data", path, "--campaigns", "3", "--jobs", "1", "--bootstrap", "50"])
    printed = capsys.readouterr().out
    assert [r[1] for r in rows] == list(bench.RULES)
    assert about[0][:3] == ["tiny", 3, 3] and "| tiny | sequential-fresh |" in printed
    assert "B80 ordering" in printed and "null FWER end / any look" in printed
