"""Smoke test of the scale benchmark (scripts/bench/bench_scale.py): its --quick --only path builds tiny
states, times a couple of operations and prints the table. No figure is asserted."""
import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", "bench")


@pytest.fixture
def bench_scale(monkeypatch):
    monkeypatch.syspath_prepend(BENCH)
    import bench_scale

    # Tiny sizes (--quick divides them by 10): a few volunteers and reservations.
    monkeypatch.setitem(bench_scale.FULL, "participants", (100, 150, 200))
    monkeypatch.setitem(bench_scale.FULL, "expired", (50, 100, 150))
    yield bench_scale
    from app import realtime

    realtime.reset()


def test_quick_only_prints_a_table(bench_scale, capsys):
    bench_scale.main(["--quick", "--only", "ranking-build,release-expired", "--reps", "1"])
    printed = capsys.readouterr().out
    rows = [line for line in printed.splitlines() if line.startswith("| ranking-build") or
            line.startswith("| release-expired")]
    assert len(rows) == 2, printed
    assert all(("MET" in row) != ("MISSED" in row) for row in rows), rows
    assert "participants: 10 / 15 / 20" in rows[0] and "expired: 5 / 10 / 15" in rows[1]


def test_unknown_operations_are_refused(bench_scale):
    with pytest.raises(SystemExit):
        bench_scale.main(["--quick", "--only", "nothing-such"])


def test_national_tiny_prints_both_tables(bench_scale, capsys):
    """The national part at its tiny size: served, judged, a dashboard open, pages connected; two tables."""
    bench_scale.main(["--national", "--no-table", "--national-size", "tiny"])
    printed = capsys.readouterr().out
    assert "National campaign, pairwise" in printed and "National campaign, da" in printed, printed
    assert printed.count("| judgment p50 / p95 / p99 |") == 2, printed
    delays = [line for line in printed.splitlines() if line.startswith("| ranking update's delay")]
    assert len(delays) == 2 and all("10 pages" in line for line in delays), printed
