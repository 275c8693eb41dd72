"""Check a Bozka raffle draw: exit 0 only if every check holds.

    python3 verify_raffle.py --draw raffle.json --tickets tickets.csv --beacon "VALUE"

raffle.json is what the raffle page publishes (/c/<slug>/raffle.json, after
the draw); tickets.csv the ticket list (/c/<slug>/raffle/tickets.csv) as you
saved it once the campaign had closed, or after the draw; VALUE the beacon's
value as you read it at its source (the commitment names the beacon). The
script checks that the revealed seed is the committed one, that the beacon
was named before the close and published after it, that the draw used the
value you give, that no ticket was voided after the close, that your list is
the one the draw used, and that the winners follow. It fetches nothing and
needs only Python 3 and its standard library: save it anywhere and run it.

This one file is also the site's raffle arithmetic: Bozka draws with the
functions below (app/services/raffle_rules.py loads this file), so what you
run is what drew the winners.
"""
import argparse
import csv
import hashlib
import json
import sys
from datetime import datetime


def sha256_hex(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tickets_digest(tickets):
    """SHA-256 of the published ticket list, one "number,volunteer" per line."""
    return sha256_hex("".join(f"{number},{holder}\n" for number, holder in tickets))


def normal_beacon(value):
    """The beacon's value as the draw hashes it: runs of spaces and line
    breaks as one space, none at either end (so "7  12\\n33" is "7 12 33")."""
    return " ".join((value or "").split())


def draw_winners(seed, tickets, prizes, beacon=None):
    """Pure and deterministic: ``tickets`` is [(number, holder)], any order.

    With D the SHA-256 of the list sorted by number (``tickets_digest``) and
    B the beacon's value (``normal_beacon``), prize k (1-based) goes to the
    ticket at index int(SHA-256(f"{seed}:{B}:{D}:{k}"), 16) mod n of the
    remaining tickets, sorted by number; then every ticket of that holder
    leaves the pool, so nobody wins twice. B is published only after the list
    froze, so nobody, the organiser who knows the seed included, knows the
    winners of a list while it can still change. ``beacon`` None: the rule
    of draws made before beacons, f"{seed}:{D}:{k}".
    """
    pool = sorted(tickets)
    digest = tickets_digest(pool)
    mixed = f"{seed}:{digest}" if beacon is None else f"{seed}:{normal_beacon(beacon)}:{digest}"
    winners = []
    for prize in range(1, prizes + 1):
        if not pool:
            break
        index = int(sha256_hex(f"{mixed}:{prize}"), 16) % len(pool)
        number, holder = pool[index]
        winners.append({"prize": prize, "ticket": number, "volunteer": holder})
        pool = [ticket for ticket in pool if ticket[1] != holder]
    return winners


def iso(moment):
    """A UTC time as the published record writes it ("2026-12-01T18:00:00Z")."""
    return None if moment is None else moment.isoformat(timespec="seconds") + "Z"


def _time(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=None) if text else None


def check_draw(published, tickets, beacon):
    """The checks of a drawn raffle: [(what, problem or None)], in order.

    ``published``: the raffle's public record (``/c/<slug>/raffle.json``);
    ``tickets``: [(number, holder)] as the checker saved the list;
    ``beacon``: the beacon's value as the checker read it at its source.
    """
    commitment, draw = published.get("commitment") or {}, published.get("draw")
    if draw is None:
        return [("draw", "the raffle has not been drawn")]
    closed, beacon_at = _time(published.get("closed_at")), _time(commitment.get("beacon_at"))
    committed, drawn = _time(commitment.get("committed_at")), _time(draw.get("drawn_at"))
    checks = [("commitment", None if sha256_hex(draw["seed"]) == commitment.get("seed_sha256")
               else "SHA-256 of the revealed seed is not the published commitment")]
    if not commitment.get("beacon") or beacon_at is None:
        checks.append(("beacon named", "the commitment names no beacon: whoever knew the seed knew the winners "
                                       "of any list before it froze"))
    elif closed is None or not committed or committed >= closed or beacon_at <= closed:
        checks.append(("beacon named", f"the beacon's time ({commitment['beacon_at']}) must come after the close "
                                       f"({published.get('closed_at')}), named by a commitment made before it"))
    else:
        checks.append(("beacon named", None))
    used = draw.get("beacon_value")
    checks.append(("beacon value", None if used is not None and normal_beacon(beacon) == used
                   else f"the draw used {used!r}, not the value given {normal_beacon(beacon)!r}"))
    checks.append(("draw time", None if drawn and beacon_at and drawn >= beacon_at
                   else "the draw took place before the beacon's time"))
    late = [void for void in published.get("voids", []) if closed is None or _time(void["voided_at"]) >= closed]
    checks.append(("voids", None if not late else "voided after the close: " + ", ".join(
        f"ticket {void['ticket']} at {void['voided_at']}" for void in late)))
    digest = tickets_digest(sorted(tickets))
    checks.append(("ticket list", None if digest == draw.get("tickets_sha256")
                   else f"the list given hashes to {digest}, the draw used {draw.get('tickets_sha256')}"))
    again = draw_winners(draw["seed"], tickets, draw["prizes"], beacon)
    checks.append(("winners", None if again == draw.get("winners")
                   else "the winners recomputed from the seed, the beacon and the list are not the published ones"))
    return checks


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
