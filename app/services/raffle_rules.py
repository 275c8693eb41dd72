"""The raffle's arithmetic, free of Flask and the database, so that
``scripts/verify_raffle.py`` and anyone else can recompute a draw."""
import hashlib


def sha256_hex(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tickets_digest(tickets):
    """SHA-256 of the published ticket list, one "number,volunteer" per line."""
    return sha256_hex("".join(f"{number},{holder}\n" for number, holder in tickets))


def draw_winners(seed, tickets, prizes):
    """Pure and deterministic: ``tickets`` is [(number, holder)], any order.

    With D the SHA-256 of the list sorted by number (``tickets_digest``),
    prize k (1-based) goes to the ticket at index
    int(SHA-256(f"{seed}:{D}:{k}"), 16) mod n of the remaining tickets,
    sorted by number; then every ticket of that holder leaves the pool, so
    nobody wins twice. D makes the winners depend on the whole final list,
    so a seed known early does not say who wins until the list is closed.
    """
    pool = sorted(tickets)
    digest = tickets_digest(pool)
    winners = []
    for prize in range(1, prizes + 1):
        if not pool:
            break
        index = int(sha256_hex(f"{seed}:{digest}:{prize}"), 16) % len(pool)
        number, holder = pool[index]
        winners.append({"prize": prize, "ticket": number, "volunteer": holder})
        pool = [ticket for ticket in pool if ticket[1] != holder]
    return winners
