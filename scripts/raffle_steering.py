"""The attack of issue 28 replayed on the draw rule: an organiser who knows
the seed voids one other ticket before the close. How often does prize 1
then go to their own account (1 ticket of 101)? Standard library only:

    python scripts/raffle_steering.py
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from app.services.raffle_rules import draw_winners  # noqa: E402

rng = random.Random(28)
TRIALS = 400
old = new = base = 0
for trial in range(TRIALS):
    tickets = [(n, f"v-{rng.randrange(20)}") for n in range(1, 101)]  # 100 tickets, 20 volunteers
    tickets.append((101, "organiser"))  # the organiser's own account holds one ticket
    seed = f"seed-{trial}"
    others = [t for t in tickets if t[1] != "organiser"]
    base += draw_winners(seed, tickets, 1, f"beacon-{trial}")[0]["volunteer"] == "organiser"
    # Seed only (before issue 28): try each single void, keep one that makes the organiser win.
    old += any(draw_winners(seed, [t for t in tickets if t != v], 1)[0]["volunteer"] == "organiser" for v in others)
    # With the beacon: the organiser picks the void that wins for a guessed beacon value; the real one comes later.
    guess = next((v for v in others if draw_winners(seed, [t for t in tickets if t != v], 1, "guess")[0]["volunteer"]
                  == "organiser"), others[0])
    new += draw_winners(seed, [t for t in tickets if t != guess], 1, f"beacon-{trial}")[0]["volunteer"] == "organiser"
print(f"{TRIALS} raffles of 101 tickets (organiser holds 1): prize 1 to the organiser with no void {base}/{TRIALS}; "
      f"seed only, best single void {old}/{TRIALS}; with the beacon, void chosen before its value {new}/{TRIALS}")
