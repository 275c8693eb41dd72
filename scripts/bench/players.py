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
import sqlite3
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

    knowledge: dict = None  # the learner: source -> texts it believes better (learn())
    # The learner, one entry per answer: (answered from what it learnt, the item was a control).
    used: list = field(default_factory=list)

    def choose(self, item, controls, answered, rng):
        if self.kind == "learner":
            known = self.knowledge_choice(item)
            self.used.append((known is not None, better_of(item, controls) is not None))
            return known or rng.choice(("left", "right"))
        better = better_of(item, controls)
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

    def answer(self, item, controls, answered, rng):
        return {"choice": self.choose(item, controls, answered, rng)}

    @staticmethod
    def saw(data):
        return data["counted"], data["held"], data["answered"], data["new_ticket"]

    def knowledge_choice(self, item):
        """The side the learner believes is a known control's better one, or None (it guesses)."""
        known = self.knowledge.get(item["source"], ())
        sides = [side for side in ("left", "right") if item[side] in known]
        return sides[0] if len(sides) == 1 else None

    def wait(self, item, rng):
        """Seconds before answering: the learner just above the reading floor, the others their pace."""
        if self.kind == "learner":
            return 1.15 * reading_floor(item) + 0.05
        return rng.uniform(*self.pace)

    def stopped_by(self):
        """The answer after which the player was first held or dismissed, or None."""
        held = self.held_by()
        dismissed = len(self.seen) if self.status == "dismissed" else None
        return min(n for n in (held, dismissed) if n is not None) if held or dismissed else None

    def held_by(self):
        """The answer (1-based) after which the player was first told they were held, or None."""
        return next((n for n, (_counted, held, _answered, _ticket) in enumerate(self.seen, 1) if held), None)


def reading_floor(item, seconds_per_word=0.0375, minimum=0.5):
    """The campaign's default reading floor for an item (quality.too_fast), as a bot computes it from the texts."""
    words = sum(len(item[key].split()) for key in ("source", "left", "right"))
    return max(minimum, words * seconds_per_word)


def is_output(source, text):
    """Whether ``text`` is a system's translation of ``source`` in the generated campaigns of the benchmarks
    and tests ("Source sentence number N." -> "Output N of X." or "Output N."): what a reader of the
    language sees at once, and a bot does not."""
    number = re.search(r"(\d+)\.$", source)
    return number is not None and re.fullmatch(rf"Output {number.group(1)}( of [\w.+-]+)?\.", text) is not None


def better_of(item, controls):
    """The better translation of a control as a reader tells it, or None for a test item: an imported
    control by its source (``controls``: source -> better), a generated one because only one side is
    the system's own translation (the other has words from elsewhere)."""
    better = controls.get(item["source"])
    if better is not None:
        return better
    real = [item[side] for side in ("left", "right") if is_output(item["source"], item[side])]
    return real[0] if len(real) == 1 else None


def register(base, slug, player, address):
    """A logged-in session of a new volunteer; ``address`` goes in X-Forwarded-For (per-address limits)."""
    session = requests.Session()
    session.headers["X-Forwarded-For"] = address
    # Hashing a password takes a core a while: many registrations at once queue on one worker.
    page = session.get(f"{base}/c/{slug}/register", timeout=120)
    response = session.post(f"{base}/c/{slug}/register", allow_redirects=False, timeout=120, data={
        "csrf_token": _csrf(page.text), "username": player.name, "email": f"{player.name}@players.example.org",
        "password": PASSWORD, "password2": PASSWORD, "age_group": "26-35", "studies_level": "university",
        "studies_field": "language", "source_level": "C1-C2", "target_level": "C1-C2", "consent": "y"})
    if response.status_code != 302:
        raise RuntimeError(f"registering {player.name}: HTTP {response.status_code}")
    session.headers["X-CSRFToken"] = _csrf(session.get(f"{base}/c/{slug}/welcome", timeout=120).text)
    return session


def confirm(session, player, read_log, timeout=60):
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


def play(base, slug, player, context, address, seed, read_log):
    """Register and confirm, then judge ``player.items`` items (or until there
    is nothing left, or the player is dismissed). The player decides how long
    to wait (``wait``), what to send (``answer``, given ``context``: the
    controls here, the texts in players_da.py) and what it saw (``saw``)."""
    rng = random.Random(seed)
    session = register(base, slug, player, address)
    confirm(session, player, read_log)
    item = api_reply(lambda: session.get(f"{base}/c/{slug}/api/item", timeout=30))["item"]
    for answered in range(player.items):
        if item is None:
            break
        time.sleep(player.wait(item, rng))
        sent = {"token": item["token"], **player.answer(item, context, answered, rng)}
        data = api_reply(lambda: session.post(f"{base}/c/{slug}/api/judgment", json=sent, timeout=60))
        player.seen.append(player.saw(data))
        player.tickets = data["tickets"]
        player.status = data["status"]
        item = data["item"]
        if player.status == "dismissed":
            break
    player.status = "done" if player.status == "accepted" else player.status


def play_all(base, slug, players, context, read_log, first_address=10):
    """Every player at once, a thread each (they mostly wait); errors are raised after all have ended.
    ``read_log()``: the server's log so far (for the confirmation links)."""
    errors = []

    def run(number, player):
        try:
            # One /24 network each: the registration limits hold per address and per network.
            play(base, slug, player, context, f"10.{first_address + number // 250}.{number % 250}.1", number,
                 read_log)
        except Exception as exc:  # reported below, with the player
            errors.append(f"{player.name}: {exc!r}")

    threads = [threading.Thread(target=run, args=(n, p), daemon=True) for n, p in enumerate(players)]
    for thread in threads:
        thread.start()
        time.sleep(0.05)  # registrations spread over a few seconds
    for thread in threads:
        thread.join()
    if errors:
        raise RuntimeError("; ".join(errors[:5]))


def holds(database):
    """{username: (held reason, dismissed reason)} from a SQLite site's database."""
    with sqlite3.connect(database) as connection:
        rows = connection.execute("SELECT u.username, p.held_reason, p.dismissed_reason FROM participations p "
                                  "JOIN users u ON u.id = p.user_id").fetchall()
    return {name: (held, dismissed) for name, held, dismissed in rows}


def published_tickets(base, slug):
    """The ticket numbers of the public list (/c/<slug>/raffle/tickets.csv)."""
    lines = requests.get(f"{base}/c/{slug}/raffle/tickets.csv", timeout=30).text.splitlines()[1:]
    return {int(line.split(",")[0]) for line in lines if line}


# The learner (issue 28): throwaway accounts learn what the feedback tells about the controls, then
# a bot answers every item it believes is a known control right and guesses the rest.

def infer(answers, dismissed_after, first=2, check_every=10):
    """What one throwaway account's feedback tells: {source: better text}. ``answers``: (source, left,
    right, choice) in order; ``dismissed_after``: the answer after which it was dismissed, or None.
    The schedule is public: items 1..``first`` are controls. Dismissed right after one of them (the
    rule before issue 28): that answer was wrong and those before it right. Past the first check
    (item ``check_every``) without dismissal: the first controls were answered right."""
    def chosen(answer, right=True):
        source, left, right_text, choice = answer
        if choice == "equal":
            return None
        picked = left if choice == "left" else right_text
        return picked if right else (right_text if choice == "left" else left)

    pairs = []
    if dismissed_after is not None and dismissed_after <= first:
        pairs = [(a, True) for a in answers[:dismissed_after - 1]] + [(answers[dismissed_after - 1], False)]
    elif len(answers) >= check_every and (dismissed_after is None or dismissed_after > check_every):
        pairs = [(a, True) for a in answers[:first]]
    learned = {}
    for answer, right in pairs:
        better = chosen(answer, right)
        if better is not None:
            learned[answer[0]] = better
    return learned


def api_reply(send, attempts=3):
    """The JSON of an item or judgment reply, ``send()`` again after a busy
    reply (5xx) as the judging page does (same token, after Retry-After);
    anything else raised with what the site said."""
    for attempt in range(attempts):
        response = send()
        if response.status_code < 500 or attempt == attempts - 1:
            break
        print(f"players: HTTP {response.status_code} {response.text[:200]!r}, sent again", flush=True)
        time.sleep(float(response.headers.get("Retry-After", 1)))
    if response.status_code != 200 or "item" not in response.text:
        raise RuntimeError(f"{response.request.method} {response.url}: HTTP {response.status_code} "
                           f"{response.text[:300]!r}")
    return response.json()


def throwaway(base, slug, name, address, seed, items=40, harvest=False):
    """One throwaway account: registers (no confirmation), answers at random and at once until dismissed
    (or ``items``); returns {source: {texts believed better}}: what the feedback told, and with
    ``harvest`` every translation it was shown too (a later control whose one side is a known
    translation of its source and the other not is answered with the known one)."""
    rng = random.Random(seed)
    session = register(base, slug, Player(name, "throwaway", (0, 0), items), address)
    item = api_reply(lambda: session.get(f"{base}/c/{slug}/api/item", timeout=30))["item"]
    answers, dismissed_after, known = [], None, {}
    while item is not None and len(answers) < items:
        choice = rng.choice(("left", "right"))
        answers.append((item["source"], item["left"], item["right"], choice))
        if harvest:
            known.setdefault(item["source"], set()).update((item["left"], item["right"]))
        token = item["token"]
        data = api_reply(lambda: session.post(f"{base}/c/{slug}/api/judgment",
                                              json={"token": token, "choice": choice}, timeout=60))
        if data["status"] == "dismissed":
            dismissed_after = len(answers)
            break
        item = data["item"]
    for source, better in infer(answers, dismissed_after).items():
        known.setdefault(source, set()).add(better)
    return known, len(answers)


def learn(base, slug, accounts, first_address=100, threads=20, harvest=False):
    """Phase 1: ``accounts`` throwaway accounts, ``threads`` at a time, from 40 /24 networks (the
    registration limits are per address and per network). Returns (knowledge, answers given)."""
    knowledge, answered, errors, lock = {}, [0], [], threading.Lock()
    numbers = iter(range(accounts))

    def run():
        for n in numbers:
            try:
                known, count = throwaway(base, slug, f"throw{n:04d}",
                                         f"10.{first_address}.{n % 40}.{n // 40 + 1}", n,
                                         harvest=harvest)
            except Exception as exc:  # reported below
                errors.append(f"throw{n:04d}: {exc!r}")
                continue
            with lock:
                answered[0] += count
                for source, texts in known.items():
                    knowledge.setdefault(source, set()).update(texts)

    workers = [threading.Thread(target=run, daemon=True) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if errors:
        raise RuntimeError("; ".join(errors[:5]))
    return knowledge, answered[0]


def learned_right(knowledge, controls):
    """How many of the learnt sources' believed answers are right: (sources learnt, right)."""
    right = 0
    for source, texts in knowledge.items():
        truth = controls.get(source)
        if truth is not None:
            right += truth in texts
        else:
            right += any(is_output(source, text) for text in texts)
    return len(knowledge), right
