"""Scripted Direct Assessment players against the running site (issue 28):
"always 50", one score copied to every item and the score copied from the
same source are held on the demo campaign, nearly always before their first
ticket (the 10th answer) and always by their 20th, so none of their tickets
is ever published; honest volunteers keep theirs. (The bot copying the
score of the same source needs two completed bad-reference pairs: 15 of 360
such bots had fewer by their 10th answer, none by their 20th, in-process on
the demo campaign; so "before the first ticket" is not asserted here.)
The same players as scripts/bench/bench_da_cheaters.py, fewer and at once
(the live test site has the reading floor off)."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "bench"))
from players import play_all, published_tickets  # noqa: E402
from players_da import DEMO_QUALITY, Player, read_campaign  # noqa: E402

SLUG = "demo-en-eu-da"


def test_da_bots_are_held_before_their_first_ticket_and_honest_volunteers_keep_theirs(live_server, server_log):
    texts = read_campaign(os.path.join(ROOT, "app", "demo", "en-eu-da"), DEMO_QUALITY)
    bots = [Player(f"da-{kind}", kind, (0, 0), 20) for kind in ("always50", "copy", "source")]
    honest = [Player(f"da-honest{n}", "honest", (0, 0), 12) for n in range(2)]
    play_all(live_server, SLUG, bots + honest, texts, server_log, first_address=80)
    published = published_tickets(live_server, SLUG)

    for bot in bots:
        assert len(bot.seen) >= 10 and bot.seen[-1][2] == len(bot.seen), bot.name  # every answer counted
        # Held by the 20th answer (the 10th wins the first ticket: see the module's note).
        assert bot.held_by() is not None and bot.held_by() <= 20, (bot.name, bot.held_by())
        assert bot.first_ticket_at() is not None or bot.status == "dismissed", bot.name  # a ticket won, and yet ...
        assert not set(bot.tickets) & published, bot.name  # ... never in the published list
    for person in honest:
        assert person.held_by() is None, person.name
        assert person.tickets and set(person.tickets) <= published, person.name
