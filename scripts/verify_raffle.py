"""Check a Bozka raffle draw: exit 0 only if every check holds.

    python scripts/verify_raffle.py --draw raffle.json --tickets tickets.csv --beacon "VALUE"

raffle.json is what the raffle page publishes (/c/<slug>/raffle.json, after
the draw); tickets.csv the ticket list (/c/<slug>/raffle/tickets.csv) as you
saved it once the campaign had closed, or after the draw; VALUE the beacon's
value as you read it at its source (the commitment names the beacon). The
script checks that the revealed seed is the committed one, that the beacon
was named before the close and published after it, that the draw used the
value you give, that no ticket was voided after the close, that your list is
the one the draw used, and that the winners follow. It fetches nothing and
needs only the Python standard library.
"""
import argparse
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from app.services.raffle_rules import check_draw, draw_winners  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draw", required=True, help="the raffle's published record (raffle.json)")
    parser.add_argument("--tickets", required=True, help="CSV with columns ticket,volunteer")
    parser.add_argument("--beacon", required=True, help="the beacon's value, as published at its source")
    args = parser.parse_args(argv)
    try:
        with open(args.draw, encoding="utf-8") as handle:
            published = json.load(handle)
        with open(args.tickets, newline="", encoding="utf-8") as handle:
            tickets = [(int(row["ticket"]), row["volunteer"]) for row in csv.DictReader(handle)]
    except (OSError, ValueError, KeyError) as exc:
        print(f"cannot read the files: {exc}", file=sys.stderr)
        return 2
    checks = check_draw(published, tickets, args.beacon)
    for what, problem in checks:
        print(f"{what}: {'ok' if problem is None else 'FAILS: ' + problem}")
    failed = [what for what, problem in checks if problem is not None]
    if failed:
        print(f"THE DRAW DOES NOT CHECK OUT ({', '.join(failed)})")
        return 1
    print(f"tickets: {len(tickets)}")
    for winner in draw_winners(published["draw"]["seed"], tickets, published["draw"]["prizes"], args.beacon):
        print(f"prize {winner['prize']}: ticket {winner['ticket']} ({winner['volunteer']})")
    print("the draw checks out")
    return 0


if __name__ == "__main__":
    sys.exit(main())
