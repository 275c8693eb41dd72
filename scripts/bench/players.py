"""Scripted players of issue 18: cheaters who know every control's answer,
and honest volunteers, against a running server over HTTP. Used by
``bench_cheaters.py`` and by tests/e2e/test_e2e_players.py.

A player registers through the pages, then judges through the JSON API as
the evaluation page does, waiting ``pace`` seconds (a range) before each
answer. A control is recognised by its source text and answered right,
except by an honest volunteer, who gets a share of the later ones wrong
as people do. What the player saw is kept: whether each answer counted,
whether they were held, their tickets.
"""
import random
import re
import threading
import time
from dataclasses import dataclass, field

import requests

PASSWORD = "correct horse 1"


def _csrf(html):
    match = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', html)
    if match is None:
        raise RuntimeError("no csrf_token input on the page")
    return match.group(1)


@dataclass
class Player:
    name: str
    kind: str  # "a" equal at full speed, "b" always the first translation, "c" at random, "honest"
    pace: tuple  # seconds before each answer: (low, high)
    items: int
    wrong_controls: float = 0.0  # share of controls after the first two answered wrong (honest)
    equal_share: float = 0.1  # honest: how often they find the two equal
    # What the player saw, one entry per answer: (counted, held, answered, new ticket).
    seen: list = field(default_factory=list)
    tickets: list = field(default_factory=list)
    status: str = "playing"

    def choose(self, item, controls, answered, rng):
        better = controls.get(item["source"])
        if better is not None:
            right = "left" if item["left"] == better else "right"
            if self.kind == "honest" and answered >= 2 and rng.random() < self.wrong_controls:
                return "right" if right == "left" else "left"
            return right
        if self.kind == "a":
            return "equal"
        if self.kind == "b":
            return "left"
        if self.kind == "c":
            return rng.choice(("left", "right", "equal"))
        if rng.random() < self.equal_share:
            return "equal"
        return rng.choice(("left", "right"))

    def held_by(self):
        """The answer (1-based) after which the player was first told they were held, or None."""
        return next((n for n, (_counted, held, _answered, _ticket) in enumerate(self.seen, 1) if held), None)


def register(base, slug, player, address):
    """A logged-in session of a new volunteer; ``address`` goes in X-Forwarded-For (per-address limits)."""
    session = requests.Session()
    session.headers["X-Forwarded-For"] = address
    page = session.get(f"{base}/c/{slug}/register", timeout=30)
    response = session.post(f"{base}/c/{slug}/register", allow_redirects=False, timeout=30, data={
        "csrf_token": _csrf(page.text), "username": player.name, "email": f"{player.name}@players.example.org",
        "password": PASSWORD, "password2": PASSWORD, "age_group": "26-35", "studies_level": "university",
        "studies_field": "language", "source_level": "C1-C2", "target_level": "C1-C2", "consent": "y"})
    if response.status_code != 302:
        raise RuntimeError(f"registering {player.name}: HTTP {response.status_code}")
    session.headers["X-CSRFToken"] = _csrf(session.get(f"{base}/c/{slug}/welcome", timeout=30).text)
    return session


def confirm(session, player, read_log, timeout=10):
    """Open the confirmation link the site logged for the player (no mail
    server: it logs each message); only confirmed volunteers' tickets are published."""
    pattern = re.compile(rf"to {re.escape(player.name)}@players\.example\.org: .*?\n.*?(http://\S+/confirm/\S+)", re.S)
    deadline = time.time() + timeout
    while time.time() < deadline:
        found = pattern.findall(read_log())
        if found:
            session.get(found[-1], timeout=30).raise_for_status()
            return
        time.sleep(0.2)
    raise RuntimeError(f"no confirmation link for {player.name} in the server's log")


def play(base, slug, player, controls, address, seed, read_log):
    """Register and confirm, then judge ``player.items`` items (or until there is nothing left)."""
    rng = random.Random(seed)
    session = register(base, slug, player, address)
    confirm(session, player, read_log)
    item = session.get(f"{base}/c/{slug}/api/item", timeout=30).json()["item"]
    for answered in range(player.items):
        if item is None:
            break
        time.sleep(rng.uniform(*player.pace))
        choice = player.choose(item, controls, answered, rng)
        response = session.post(f"{base}/c/{slug}/api/judgment", json={"token": item["token"], "choice": choice},
                                timeout=60)
        response.raise_for_status()
        data = response.json()
        player.seen.append((data["counted"], data["held"], data["answered"], data["new_ticket"]))
        player.tickets = data["tickets"]
        player.status = data["status"]
        item = data["item"]
    player.status = "done" if player.status == "accepted" else player.status


def play_all(base, slug, players, controls, read_log, first_address=10):
    """Every player at once, a thread each (they mostly wait); errors are raised after all have ended.
    ``read_log()``: the server's log so far (for the confirmation links)."""
    errors = []

    def run(number, player):
        try:
            play(base, slug, player, controls, f"10.{first_address}.{number // 250}.{number % 250 + 1}", number,
                 read_log)
        except Exception as exc:  # reported below, with the player
            errors.append(f"{player.name}: {exc!r}")

    threads = [threading.Thread(target=run, args=(n, p), daemon=True) for n, p in enumerate(players)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise RuntimeError("; ".join(errors[:5]))


def published_tickets(base, slug):
    """The ticket numbers of the public list (/c/<slug>/raffle/tickets.csv)."""
    lines = requests.get(f"{base}/c/{slug}/raffle/tickets.csv", timeout=30).text.splitlines()[1:]
    return {int(line.split(",")[0]) for line in lines if line}
