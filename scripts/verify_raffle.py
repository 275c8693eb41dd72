"""Recompute a Bozka raffle draw from the published seed and ticket list.

    python scripts/verify_raffle.py --seed SEED --tickets tickets.csv --prizes N \
        [--sha256 COMMITMENT] [--tickets-sha256 LIST_HASH]

Prints whether SHA-256(seed) matches the published commitment, the SHA-256
of the ticket list (and whether it matches the one the raffle page
published), and the winners, prize by prize: the winning numbers depend on
both the seed and that list. Needs only the Python standard library.
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from app.services.raffle_rules import draw_winners, sha256_hex, tickets_digest  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", required=True)
    parser.add_argument("--tickets", required=True, help="CSV with columns ticket,volunteer")
    parser.add_argument("--prizes", type=int, required=True)
    parser.add_argument("--sha256", help="the published commitment")
    parser.add_argument("--tickets-sha256", help="the published SHA-256 of the ticket list")
    args = parser.parse_args(argv)
    with open(args.tickets, newline="", encoding="utf-8") as handle:
        tickets = [(int(row["ticket"]), row["volunteer"]) for row in csv.DictReader(handle)]
    if args.sha256:
        ok = sha256_hex(args.seed) == args.sha256.strip().lower()
        print(f"commitment: {'matches' if ok else 'DOES NOT MATCH'}")
        if not ok:
            return 1
    digest = tickets_digest(sorted(tickets))
    print(f"tickets: {len(tickets)}, list SHA-256 {digest}")
    if args.tickets_sha256:
        ok = digest == args.tickets_sha256.strip().lower()
        print(f"ticket list: {'matches' if ok else 'DOES NOT MATCH'}")
        if not ok:
            return 1
    for winner in draw_winners(args.seed, tickets, args.prizes):
        print(f"prize {winner['prize']}: ticket {winner['ticket']} ({winner['volunteer']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
