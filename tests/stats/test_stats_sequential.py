"""Anytime-valid pair decisions, re-planning and the two-stage final analysis."""

import math

import numpy as np
import pytest

from app.stats.sequential import (TOP, anytime_p, certified_top, contenders,
                                  decide_pairs, e_value, final_analysis,
                                  log_e_value, more_needed, open_pairs,
                                  projected_counts)
from app.stats.winners import sign_test


def test_e_value_basic_properties():
    assert e_value(0, 0) == 1.0 and anytime_p(0, 0) == 1.0
    for w, l in [(3, 1), (40, 22), (700, 650)]:
        assert e_value(w, l) == pytest.approx(e_value(l, w), rel=1e-12)
    # a lopsided record grows E; an even one stays below 1
    assert e_value(20, 5) > e_value(15, 5) > e_value(10, 5) > 1.0
    assert e_value(50, 50) < 1.0
    for w, l in [(0, 0), (1, 0), (50, 50), (90, 10), (10, 90)]:
        assert 0.0 <= anytime_p(w, l) <= 1.0


def test_thousands_of_judgments_do_not_overflow():
    assert math.isfinite(log_e_value(60_000, 40_000))
    assert anytime_p(60_000, 40_000) == 0.0
    assert e_value(60_000, 40_000) == math.inf
    assert anytime_p(50_000, 50_000) == 1.0


def test_anytime_valid_under_the_null_looking_after_every_flip():
    rng = np.random.default_rng(20240532)
    flips = rng.integers(0, 2, size=(2000, 2000), dtype=np.int32)
    wins = np.cumsum(flips, axis=1)
    losses = np.arange(1, 2001) - wins
    ever = (log_e_value(wins, losses) >= math.log(1 / 0.05)).any(axis=1).mean()
    assert ever <= 0.05 + 0.01
    # the same looks with the fixed-sample sign test (its normal form) reject
    # far more often: the simulation can tell an invalid rule
    naive = (np.abs(wins - losses) / np.sqrt(wins + losses) > 1.96).any(axis=1).mean()
    assert naive > 0.2


def test_power_a_65_35_pair_is_decided_within_a_few_hundred():
    assert decide_pairs([("A", "B", 130, 70)])[0] == pytest.approx(
        {"decided": True, "better": "A", "p": anytime_p(130, 70),
         "p_holm": anytime_p(130, 70), "target": None})
    assert decide_pairs([("A", "B", 70, 130)])[0]["better"] == "B"
    rng = np.random.default_rng(7)
    wins = np.cumsum(rng.random((200, 1000)) < 0.65, axis=1)
    losses = np.arange(1, 1001) - wins
    crossed = log_e_value(wins, losses) >= math.log(100)
    assert crossed.any(axis=1).all()
    first = crossed.argmax(axis=1) + 1
    assert np.median(first) < 300 and np.quantile(first, 0.9) < 500


def test_holm_step_down_and_reopening_after_counts_shrink():
    strong = ("A", "B", 300, 150)
    # p between alpha/2 and alpha: decided only once the other pair is
    middle = ("A", "C", 133, 80)
    assert 0.005 < anytime_p(133, 80) <= 0.01
    assert decide_pairs([middle, ("B", "C", 50, 50)])[0]["decided"] is False
    both = decide_pairs([strong, middle])
    assert [d["decided"] for d in both] == [True, True]
    assert [d["better"] for d in both] == ["A", "A"]
    # a dismissed volunteer's judgments discarded: the strong pair shrinks
    shrunk = decide_pairs([("A", "B", 60, 40), middle])
    assert [d["decided"] for d in shrunk] == [False, False]
    assert shrunk[0]["target"] == shrunk[1]["target"] == 2 / 0.01
    assert decide_pairs([strong, ("B", "C", 60, 40)])[1]["target"] == 1 / 0.01


def _square(wins):
    """Pairs of four systems from a dict {(x, y): (wins_x, wins_y)}."""
    return [(x, y, w, l) for (x, y), (w, l) in wins.items()]


def test_top_system_retires_pairs_that_cannot_change_the_top():
    pairs = _square({("A", "B"): (300, 150), ("A", "C"): (52, 48),
                     ("A", "D"): (55, 45), ("B", "C"): (50, 55),
                     ("B", "D"): (60, 52), ("C", "D"): (400, 150)})
    decisions = decide_pairs(pairs)
    assert [d["decided"] for d in decisions] == [True, False, False, False, False, True]
    # B lost to A, D lost to C: they are out, so B-D no longer matters
    assert contenders(pairs, decisions) == {"A", "C"}
    assert open_pairs(pairs, decisions, TOP) == [False, True, True, True, False, False]
    assert open_pairs(pairs, decisions) == [False, True, True, True, True, False]
    assert certified_top(pairs, decisions) is None
    with pytest.raises(ValueError):
        open_pairs(pairs, decisions, "fastest")
    # A beats C and D too: A is certified and every pair is retired
    done = _square({("A", "B"): (300, 150), ("A", "C"): (300, 150),
                    ("A", "D"): (300, 150), ("B", "C"): (50, 55),
                    ("B", "D"): (60, 52), ("C", "D"): (400, 150)})
    decisions = decide_pairs(done)
    assert certified_top(done, decisions) == "A"
    assert not any(open_pairs(done, decisions, TOP))


def test_more_needed_none_when_even_or_unreachable():
    assert more_needed(0, 0, 100) is None
    assert more_needed(40, 40, 100) is None
    assert more_needed(501, 500, 100, cap=1000) is None
    assert more_needed(130, 70, 100) == 0


@pytest.mark.parametrize("wins_a, wins_b, others", [
    (12, 5, []), (5, 12, [("B", "C", 300, 150)]), (33, 27, [("B", "C", 70, 60)]),
    (3, 0, [("B", "C", 10, 12), ("A", "C", 600, 400)]), (260, 240, [])])
def test_more_needed_then_the_projected_future_decides(wins_a, wins_b, others):
    pairs = [("A", "B", wins_a, wins_b)] + others
    decision = decide_pairs(pairs)[0]
    assert decision["decided"] is False
    n = more_needed(wins_a, wins_b, decision["target"])
    assert n is not None and n > 0
    wa, wb = (int(c) for c in projected_counts(wins_a, wins_b, n))
    assert wa + wb == wins_a + wins_b + n
    after = decide_pairs([("A", "B", wa, wb)] + others)[0]
    assert after["decided"] and after["better"] == ("A" if wins_a > wins_b else "B")
    # and it is the smallest such count
    wa, wb = (int(c) for c in projected_counts(wins_a, wins_b, n - 1))
    assert not decide_pairs([("A", "B", wa, wb)] + others)[0]["decided"]


def test_more_needed_shrinks_towards_one_half():
    wa, wb = projected_counts(3, 0, 100)
    assert int(wa) == 3 + 80 and int(wb) == 20    # rate (3+1)/(3+2) = 0.8, not 1


def test_final_analysis_stages_and_text():
    pairs = [("A", "B", 300, 150), ("A", "C", 140, 95), ("B", "C", 52, 48),
             ("C", "D", 80, 120)]
    result = final_analysis(pairs, ["A", None, None, None])
    rows = result["pairs"]
    assert [r["stage"] for r in rows] == ["sequential", "final", None, "final"]
    assert [r["better"] for r in rows] == ["A", "A", None, "D"]
    assert rows[1]["p"] == pytest.approx(3 * sign_test(140, 95))
    assert result["final_alpha"] == pytest.approx(0.04)
    assert "1 of 4 pairs" in result["text"] and "remaining 4%" in result["text"]
    assert "at most 5%" in result["text"]
    # the final look spends only what the sequential stage left: 4 %, not 5 %
    assert 0.04 < sign_test(115, 85) < 0.05 and sign_test(116, 84) < 0.04
    assert final_analysis([("A", "B", 115, 85)], [None])["pairs"][0]["decided"] is False
    assert final_analysis([("A", "B", 116, 84)], [None])["pairs"][0]["stage"] == "final"
    with pytest.raises(ValueError):
        final_analysis(pairs, ["C", None, None, None])
    with pytest.raises(ValueError):
        final_analysis(pairs, [None] * 4, sequential_alpha=0.05)


def test_final_analysis_fwer_under_the_global_null():
    """Four equal systems, six pairs: sequential looks after every outcome
    at 1 %, then the final look at 4 %; any decision is a false one."""
    rng = np.random.default_rng(32)
    campaigns, m, n = 2000, 6, 400
    wins = np.cumsum(rng.integers(0, 2, size=(campaigns, m, n)), axis=2)
    losses = np.arange(1, n + 1) - wins
    # Holm's first decision needs some pair's anytime p <= alpha / m
    crossed = (log_e_value(wins, losses) >= math.log(m / 0.01)).any(axis=2)
    names = [("A", "B"), ("A", "C"), ("A", "D"), ("B", "C"), ("B", "D"), ("C", "D")]
    false, stages = 0, set()
    for c in range(campaigns):
        if crossed[c].any():
            # the look where it crossed decides that pair
            first = int(np.argmax((log_e_value(wins[c], losses[c])
                                   >= math.log(m / 0.01)).any(axis=0)))
            now = [(a, b, int(wins[c, i, first]), int(losses[c, i, first]))
                   for i, (a, b) in enumerate(names)]
            assert any(d["decided"] for d in decide_pairs(now))
            false += 1
            stages.add("sequential")
            continue
        final = [(a, b, int(wins[c, i, -1]), int(losses[c, i, -1]))
                 for i, (a, b) in enumerate(names)]
        rows = final_analysis(final, [None] * m)["pairs"]
        if any(r["decided"] for r in rows):
            false += 1
            stages.update(r["stage"] for r in rows if r["decided"])
    assert false / campaigns <= 0.05 + 0.015
    assert stages <= {"sequential", "final"}
