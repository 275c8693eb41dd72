"""Scripted players against the running site (issue 18): cheaters who know
every control end with no published ticket and no ranking place; honest
volunteers keep theirs. The same players as scripts/bench/bench_cheaters.py,
fewer and faster (still above the reading floor of these short texts)."""
import os
import sys

from helpers import write_campaign

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "scripts", "bench"))
from players import Player, play_all, published_tickets  # noqa: E402

SLUG = "players"
CONTROLS = {f"Control {i}.": f"Good {i}." for i in range(1, 21)}  # as helpers.write_campaign makes them


def test_cheaters_lose_their_tickets_and_place_and_honest_volunteers_keep_theirs(live_server, site_cli, tmp_path,
                                                                                 server_log):
    folder = write_campaign(str(tmp_path / "players"), sentences=40)  # the default settings: floor and signs on
    manifest = os.path.join(folder, "campaign.toml")
    with open(manifest, encoding="utf-8") as handle:
        text = handle.read().replace('slug = "test"', f'slug = "{SLUG}"')
    with open(manifest, "w", encoding="utf-8") as handle:
        handle.write(text)
    site_cli("campaign", "import", folder)

    equal_fast = Player("cheat-a", "a", (0, 0), 30)
    lefty = Player("cheat-b", "b", (0.6, 0.8), 30)
    honest = [Player(f"honest{n}", "honest", (0.6, 0.9), 30, wrong_controls=0.1, equal_share=0.15)
              for n in range(4)]
    play_all(live_server, SLUG, [equal_fast, lefty, *honest], CONTROLS, server_log, first_address=60)
    published = published_tickets(live_server, SLUG)

    # (a): nothing counted, held after five answers too fast in a row.
    assert len(equal_fast.seen) == 30 and equal_fast.seen[-1][2] == 0
    assert equal_fast.held_by() == 5 and not equal_fast.tickets
    # (b): its answers count and win tickets, but it is held by its 30th
    # answer, and the tickets it won are not in the published list.
    assert lefty.seen[-1][2] == 30 and len(lefty.tickets) >= 2
    assert lefty.held_by() is not None and lefty.held_by() <= 30
    assert not set(lefty.tickets) & published
    # The honest volunteers: never held, every ticket published.
    for person in honest:
        assert person.held_by() is None, person.name
        assert person.tickets and set(person.tickets) <= published, person.name
