"""How soon the control rules stop a guesser, and how often they stop an
honest volunteer, for a control schedule (issue 28): exact binomial sums,
no simulation noise.

    .venv/bin/python scripts/bench/control_schedule.py [--horizon 200]

The schedule is the app's own (``control_rules.is_control_position``), the rule
its own (``control_rules.dismissal_reason``: the first controls must all pass, then
the failed share must not exceed the cutoff, at every ``check_every``-th
item). A guesser tosses a coin on every item, its first controls included;
an honest volunteer answers the first controls right and misses a share q of
the later ones, q spread evenly over 10-20 % (the scripted players' honest
volunteers, scripts/bench/players.py). Prints, for each schedule, the
controls among a new volunteer's first 40 items, their test answers in
the first 30 (the side and "equal" signs that hold a bot read at least
``hold_min_tests``, 20), the share of guessers still playing after 40
answers, and the share of honest volunteers dismissed within
``--horizon`` items.
"""
import argparse
import os
import sys
from fractions import Fraction

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from harness import table  # noqa: E402

from app.protocols.pairwise import controls as control_rules  # noqa: E402

RULES = dict(first=2, check_every=10, cutoff=Fraction(1, 3))
SCHEDULES = [  # (label, early_items, early_every)
    ("the paper's (default): 2 first, then 1 in 5", 0, 2),
    ("first 40 items 1 in 3", 40, 3),
    ("first 40 items 1 in 2", 40, 2),
]


def stopped(early_items, early_every, miss, horizon, first_right):
    """{item: probability of being dismissed at that check} for a volunteer
    missing each later control with probability ``miss``."""
    first, check_every, cutoff = RULES["first"], RULES["check_every"], RULES["cutoff"]
    controls = [0]
    for position in range(1, horizon + 1):
        controls.append(controls[-1] + control_rules.is_control_position(
            position, first, 5, "fixed", early_items=early_items, early_every=early_every))
    alive = 1.0 if first_right else (1 - miss) ** first  # failing a first control: dismissed at the first check
    failures = {0: 1.0}  # failed later controls -> probability, among those still playing
    counted, dismissed = first, {}
    for position in range(check_every, horizon + 1, check_every):
        for _ in range(controls[position] - counted):
            grown = {}
            for failed, p in failures.items():
                grown[failed] = grown.get(failed, 0.0) + p * (1 - miss)
                grown[failed + 1] = grown.get(failed + 1, 0.0) + p * miss
            failures = grown
        counted = controls[position]
        out = sum(p for failed, p in failures.items() if Fraction(failed, counted) > cutoff)
        failures = {failed: p for failed, p in failures.items() if Fraction(failed, counted) <= cutoff}
        dismissed[position] = out * alive
        if position == check_every and not first_right:
            dismissed[position] += 1 - alive
    return controls, dismissed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=200, help="items an honest volunteer answers")
    args = parser.parse_args()
    rows = []
    for label, early_items, early_every in SCHEDULES:
        controls, guesser = stopped(early_items, early_every, 0.5, 40, first_right=False)
        misses = [0.10 + 0.01 * step for step in range(11)]
        honest = sum(sum(stopped(early_items, early_every, miss, args.horizon, True)[1].values())
                     for miss in misses) / len(misses)
        rows.append([label, controls[40], 30 - controls[30], f"{1 - sum(guesser.values()):.1%}", f"{honest:.1%}"])
    table(["schedule", "controls in items 1-40", "test answers in items 1-30 (the signs read 20)",
           "guessers past 40 answers", f"honest dismissed within {args.horizon}"], rows)

if __name__ == "__main__":
    main()
