"""Scale benchmark (issue 30): is every cost flat in the work that grows?

    nice .venv/bin/python scripts/bench/bench_scale.py --quick          (sizes / 10: a smoke run, 2-3 minutes)
    nice .venv/bin/python scripts/bench/bench_scale.py                  (the full table; 1M judgments build in 2 min)
    nice .venv/bin/python scripts/bench/bench_scale.py --only judgment,page --database-url postgresql://...
    nice .venv/bin/python scripts/bench/bench_scale.py --national --no-table   (served national campaign, 6 min)

Each state is a fresh database (SQLite in a scratch folder, or the schema of
``--database-url`` dropped and made again) holding one campaign, built by bulk
inserts through the models' tables (SQLAlchemy Core, so the same code runs on
SQLite and PostgreSQL) with every counter the judgment's transaction keeps
(sentences, slots, participations, campaign, tickets) equal to what the rows
say. The campaign is the benchmarks' generated one (5 systems), with the
reading floor and the fast-run sign off (the test client answers in
microseconds; the other signs stay on). Eight "timed" volunteers, logged in
through /login, do what is timed; everything runs in this process (Flask's
test client for pages and the judgment API, Flask-SocketIO's test client for
a socket join, the service functions where there is no page).

Axes (three sizes each; ``--quick`` divides them by 10): the timed
volunteers' own answers with the sentences they judged still open (only they
judged them: the fullest open ones) or complete (50 volunteers judged the
same sentences); sentences; participants; judgments; expired reservations;
DA scores. Prints one row per operation and axis: the three sizes' p50 (ms),
the growth (largest / smallest) and MET or MISSED against 1.5x; bytes for
the rows that measure what a reply carries. A judgment is answered for real
(fresh rows: each adds one answer to a state of 100 to 1M); a service call
that writes is rolled back.

``--national`` then serves one state of the whole national campaign as ``make
run`` serves it (pairwise, then DA) and prints what a volunteer and an
organiser feel: bench_scale_national.py, which uses this file's builder.
"""
import argparse
import os
import random
import sys
import time
from datetime import datetime, timedelta

from harness import PASSWORD, SLUG, csrf_from, fmt, log, machine_busy, percentile, scratch, table, write_campaign

TARGET = 1.5
TIMED = 8  # volunteers who do what is timed
FULL = {"answers": (100, 1000, 5000), "sentences": (500, 5000, 50000), "participants": (100, 2000, 20000),
        "judgments": (10_000, 100_000, 1_000_000), "expired": (50, 500, 5000), "scores": (10_000, 100_000, 1_000_000)}
# Operation -> (axes it is timed on, what it reports).
OPERATIONS = {
    "judgment": ("answers-open", "answers-complete", "sentences", "participants", "judgments"),
    "page": ("answers-open", "answers-complete", "sentences", "participants", "judgments"),
    "join": ("answers-open", "answers-complete", "sentences", "participants", "judgments"),
    "judgment-bytes": ("answers-open", "answers-complete"),
    "da-dashboard": ("scores",),
    "ranking-tick": ("participants",),
    "panel-first-load": ("sentences", "judgments"),
    "ranking-build": ("participants",),
    "suspicious": ("judgments",),
    "release-expired": ("expired",),
    "raffle-page": ("judgments",),
    "raffle-page-mine": ("participants", "judgments"),
    "tickets-csv": ("judgments",),
    "tickets-csv-bytes": ("judgments",),
    "da-live-rule": ("da-answers",),
}
BYTES = ("judgment-bytes", "tickets-csv-bytes")


def shapes(quick):
    """Axis -> [(size, state settings)]: what varies, and what stays fixed (issue 30's campaign, / 10 if quick)."""
    k = 10 if quick else 1
    size = {axis: [v // k for v in values] for axis, values in FULL.items()}
    pairwise = dict(protocol="pairwise", timed_answers=100 // k)
    return {
        "answers-open": [(n, dict(pairwise, sentences=10000 // k, participants=TIMED, judgments=0, timed_answers=n))
                         for n in size["answers"]],
        "answers-complete": [(n, dict(pairwise, sentences=10000 // k, participants=TIMED, judgments=0,
                                      timed_answers=n, fillers=42)) for n in size["answers"]],
        "sentences": [(n, dict(pairwise, sentences=n, participants=100, judgments=10000 // k))
                      for n in size["sentences"]],
        "participants": [(n, dict(pairwise, sentences=5000 // k, participants=n, judgments=60000 // k))
                         for n in size["participants"]],
        "judgments": [(n, dict(pairwise, sentences=50000 // k, participants=2000 // k, judgments=n))
                      for n in size["judgments"]],
        "expired": [(n, dict(pairwise, sentences=5000 // k, participants=100, judgments=10000 // k, expired=n))
                    for n in size["expired"]],
        "scores": [(n, dict(protocol="da", sentences=50000 // k, participants=2000 // k, judgments=n,
                            timed_answers=100 // k)) for n in size["scores"]],
        "da-answers": [(n, dict(protocol="da", sentences=10000 // k, participants=TIMED, judgments=0, timed_answers=n))
                       for n in size["answers"]],
    }


# ---------------------------------------------------------------- building a state

def make_app(workdir, database_url, name):
    """The app as the factory makes it, on a fresh schema (a SQLite file per state by default)."""
    from app import create_app, realtime
    from app.extensions import db
    from app.services import dashboard

    url = database_url or f"sqlite:///{os.path.join(workdir, name + '.sqlite3')}"
    app = create_app({"SQLALCHEMY_DATABASE_URI": url, "TESTING": True, "SOCKETIO_ASYNC_MODE": "threading",
                      "SOCKETIO_MESSAGE_QUEUE": None, "BOZKA_REALTIME_TICKER": False, "BOZKA_MAIL_SENDER": False,
                      "BOZKA_CHECKPOINT_INTERVAL": 0, "BOZKA_SERVER_LOCK": False, "RATELIMIT_ENABLED": False,
                      "RATELIMIT_STORAGE_URI": "memory://"})
    realtime.reset()  # module-level caches are keyed by campaign id
    dashboard.forget()
    with app.app_context():
        db.drop_all()
        db.create_all()
    return app


class Builder:
    """Rows of one campaign, written by Core executemany in batches, ids chosen here."""

    BATCH = 20000

    def __init__(self, connection, order):
        self.connection, self.next_id = connection, {}
        self.pending = {model: [] for model in order}  # written in this order: the foreign keys' own

    def new_id(self, table):
        if table not in self.next_id:
            from sqlalchemy import text
            self.next_id[table] = self.connection.execute(text(f"SELECT coalesce(max(id), 0) FROM {table}")).scalar()
        self.next_id[table] += 1
        return self.next_id[table]

    def add(self, model, row):
        rows = self.pending.setdefault(model, [])
        rows.append(row)
        if len(rows) >= self.BATCH:
            self.write()

    def write(self, model=None):
        from sqlalchemy import insert
        for each in [model] if model else list(self.pending):
            if self.pending.get(each):
                self.connection.execute(insert(each.__table__), self.pending[each])
                self.pending[each] = []


def build(app, workdir, protocol, sentences, participants, judgments, timed_answers, fillers=0, seed=1):
    """Fill the app's database with one campaign; returns {campaign_id, timed: [(user email, participation id)],
    organiser: email}."""
    from sqlalchemy import bindparam, select, text, update
    from werkzeug.security import generate_password_hash

    from app.extensions import db
    from app.models import (Campaign, CampaignOrganiser, Control, Item, Output, Participation, Sentence, Slot,
                            Ticket, User)
    from app.services.campaign_writer import create_campaign
    from app.protocols.da.quality import BAD_REFERENCE
    from app.services.importer import read_campaign
    from app.services.names import email_key, skeleton
    from app.services.quality import volunteer_seed

    rng, started = random.Random(seed), time.time()
    base = 10
    folder = write_campaign(os.path.join(workdir, f"campaign-{protocol}"), base, protocol=protocol)
    cheap = generate_password_hash(PASSWORD, method="pbkdf2:sha256:1000")
    now = datetime.utcnow().replace(microsecond=0)
    with app.app_context():
        campaign = create_campaign(read_campaign(folder))
        campaign.fast_seconds_per_word, campaign.hold_fast_run = 0, 0  # the test client answers in microseconds
        db.session.commit()
        cid, salt, systems = campaign.id, campaign.pseudonym_salt, [s.id for s in campaign.systems]
        schedule_settings = {k: getattr(campaign, k) for k in (
            "control_first", "control_every", "control_placement", "early_control_items", "early_control_every")}
        pool = list(db.session.scalars(select(Control.id).where(Control.campaign_id == cid,
                                                                Control.number.is_not(None))))
        template = db.session.execute(select(Slot.system_a_id, Slot.system_b_id, Slot.target).join(
            Sentence, Sentence.id == Slot.sentence_id).where(Sentence.campaign_id == cid, Sentence.number == 1)
            .order_by(Slot.id)).all()
        db.session.expunge_all()
    with app.app_context(), db.engine.begin() as connection:
        rows = Builder(connection, (Sentence, Output, Slot, User, Participation, Item, Ticket, CampaignOrganiser))
        connection.execute(text("DELETE FROM outputs WHERE sentence_id IN (SELECT id FROM sentences "
                                "WHERE campaign_id = :c)"), {"c": cid})
        connection.execute(text("DELETE FROM slots WHERE sentence_id IN (SELECT id FROM sentences "
                                "WHERE campaign_id = :c)"), {"c": cid})
        connection.execute(text("DELETE FROM controls WHERE campaign_id = :c AND number IS NULL"), {"c": cid})
        connection.execute(text("DELETE FROM sentences WHERE campaign_id = :c"), {"c": cid})
        capacity = sum(t for _a, _b, t in template)
        sentence_ids, slots = [], []  # slots[i]: [[slot id, collected, target, system a, system b]]
        for number in range(1, sentences + 1):
            sid = rows.new_id("sentences")
            sentence_ids.append(sid)
            rows.add(Sentence, {"id": sid, "campaign_id": cid, "number": number, "source":
                                f"Source sentence number {number}.", "reference": None, "capacity": capacity,
                                "collected": 0, "pending": 0, "is_open": capacity > 0})
            for system in systems:
                rows.add(Output, {"id": rows.new_id("outputs"), "sentence_id": sid, "system_id": system,
                                  "text": f"Output {number} of S{system}.",
                                  "degraded": f"Output {number} S{system}." if protocol == "da" else None})
            slots.append([[rows.new_id("slots"), 0, target, a, b] for a, b, target in template])
            for slot in slots[-1]:
                rows.add(Slot, {"id": slot[0], "sentence_id": sid, "system_a_id": slot[3], "system_b_id": slot[4],
                                "identical": False, "target": slot[2], "collected": 0, "pending": 0})
        rows.write()

        def judged():
            """A test item's fields at the volunteer's next fresh sentence (fill-first as served), or None."""
            for _step in range(sentences):
                i = judged.cursor % sentences
                judged.cursor += 1
                open_slots = [s for s in slots[i] if s[1] < s[2]]
                if open_slots:
                    slot = min(open_slots, key=lambda s: s[1])
                    slot[1] += 1
                    return i, slot
            return None

        users, timed, ticket, totals = [], [], 1, {"collected": 0, "equal": 0}
        others = max(0, participants - TIMED - fillers)
        spare = max(0, judgments - TIMED * timed_answers)
        counts = [timed_answers] * (TIMED + fillers) + [spare // others + (n < spare % others) for n in range(others)]
        for number, count in enumerate(counts):
            uid, pid = rows.new_id("users"), rows.new_id("participations")
            email = f"v{number:06d}@bench.example.org"
            joined = now - timedelta(days=30) + timedelta(seconds=number)
            rows.add(User, {"id": uid, "email": email, "email_key": email_key(email), "username": f"v{number:06d}",
                            "username_skeleton": skeleton(f"v{number:06d}"),
                            "password_hash": cheap if number < TIMED else "-", "role": "volunteer",
                            "age_group": "26-35", "studies_level": "university", "studies_field": "language",
                            "hide_from_ranking": False, "created_at": joined, "email_confirmed_at": joined})
            if number < TIMED:
                timed.append((email, pid))
            # The timed volunteers and the fillers judge the same sentences from the first on;
            # the others start anywhere (DA: the timed volunteers apart, so that no slot over-fills).
            spread = protocol == "da" and number < TIMED
            judged.cursor = (number * count if spread else 0) if number < TIMED + fillers else rng.randrange(sentences)
            seed_ = volunteer_seed(salt, pid)
            counters = dict(controls=0, left=0, right=0, equal=0)
            moment, last_test = joined, {}
            position = 0
            for position in range(1, count + 1):
                moment += timedelta(seconds=20 * (30 * 86400 - 3600) / max(1, 20 * count + 20 * 30))
                iid = rows.new_id("items")
                row = {"id": iid, "campaign_id": cid, "participation_id": pid, "position": position,
                       "token": f"{iid:032x}", "slot_id": None, "sentence_id": None, "left_system_id": None,
                       "right_system_id": None, "control_id": None, "better_left": None, "control_reused": False,
                       "qc_kind": None, "original_item_id": None, "served_at": moment - timedelta(seconds=12),
                       "expires_at": None, "holding": False, "answered_at": moment, "choice": None, "score": None,
                       "seconds": 12.0, "passed": None, "too_fast": False, "discarded_at": None,
                       "discarded_reason": None, "skipped_at": None}
                if protocol == "pairwise" and pool and is_control_position(schedule_settings, position, seed_):
                    better_left = rng.random() < 0.5
                    row.update(control_id=rng.choice(pool), better_left=better_left, passed=True,
                               choice="left" if better_left else "right")
                    counters["controls"] += 1
                elif protocol == "da" and position % 10 == 0 and position - 5 in last_test:
                    original, score = last_test.pop(position - 5)
                    row.update(sentence_id=original[0], left_system_id=original[1], qc_kind=BAD_REFERENCE,
                               original_item_id=original[2], score=max(0, score - 30))
                    counters["controls"] += 1
                else:
                    taken = judged()
                    if taken is None:
                        break
                    i, slot = taken
                    row.update(slot_id=slot[0], sentence_id=sentence_ids[i])
                    if protocol == "da":
                        row.update(left_system_id=slot[3], score=rng.randint(40, 100))
                        last_test[position] = ((sentence_ids[i], slot[3], iid), row["score"])
                    else:
                        pair = [slot[3], slot[4]]
                        rng.shuffle(pair)
                        choice = ("left", "right", "equal")[position % 20 // 9] if position % 20 < 18 else "equal"
                        row.update(left_system_id=pair[0], right_system_id=pair[1], choice=choice)
                        counters[choice] += 1
                        totals["equal"] += choice == "equal"
                    totals["collected"] += 1
                rows.add(Item, row)
                if position % 10 == 0:  # raffle_every: a ticket for each tenth answer that counts
                    rows.add(Ticket, {"id": rows.new_id("tickets"), "campaign_id": cid, "participation_id": pid,
                                      "number": ticket, "item_position": position, "created_at": moment,
                                      "voided_at": None})
                    ticket += 1
            answered = position if count else 0
            rows.add(Participation, {
                "id": pid, "campaign_id": cid, "user_id": uid, "source_level": "C1-C2", "target_level": "C1-C2",
                "consent_at": joined, "joined_at": joined, "items_served": answered, "items_answered": answered,
                "items_counted": answered, "reached_count_at": moment if answered else None,
                "controls_seen_all": False, "controls_answered": counters["controls"], "controls_failed": 0,
                "tests_left": counters["left"], "tests_right": counters["right"], "tests_equal": counters["equal"],
                "fast_run": 0})
            if len(rows.pending[Item]) > 5000 or number == len(counts) - 1:
                rows.write()
            if number and number % 2000 == 0:
                log(f"    {number:,} volunteers written ({time.time() - started:.0f} s)")
        organiser = "organiser@bench.example.org"
        oid = rows.new_id("users")
        rows.add(User, {"id": oid, "email": organiser, "email_key": email_key(organiser), "username": "organiser",
                        "username_skeleton": skeleton("organiser"), "password_hash": cheap, "role": "organiser",
                        "hide_from_ranking": False, "created_at": now, "email_confirmed_at": now})
        rows.write()
        rows.add(CampaignOrganiser, {"campaign_id": cid, "user_id": oid, "given_at": now})
        rows.write()
        # The counters, as the rows say (only slots and sentences that moved).
        moved = [(i, s) for i, sentence in enumerate(slots) for s in sentence if s[1]]
        for start in range(0, len(moved), 20000):
            connection.execute(update(Slot.__table__).where(Slot.id == bindparam("slot_id")).values(
                collected=bindparam("n"), pending=bindparam("n")), [{"slot_id": s[0], "n": s[1]} for _i, s in
                                                            moved[start:start + 20000]])
        per_sentence = {}
        for i, s in moved:
            per_sentence[i] = per_sentence.get(i, 0) + s[1]
        connection.execute(update(Sentence.__table__).where(Sentence.id == bindparam("sentence_id")).values(
            collected=bindparam("n"), pending=bindparam("n"), is_open=bindparam("open")),
            [{"sentence_id": sentence_ids[i], "n": n, "open": n < capacity} for i, n in per_sentence.items()]
            or [{"sentence_id": 0, "n": 0, "open": True}])
        connection.execute(update(Campaign.__table__).where(Campaign.id == cid).values(
            target_judgments=capacity * sentences, collected_judgments=totals["collected"],
            equal_judgments=totals["equal"], next_ticket=ticket))
        if connection.dialect.name == "postgresql":  # ids chosen here: the sequences go on after them
            for name in ("sentences", "outputs", "slots", "users", "participations", "items", "tickets"):
                connection.execute(text(f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                                        f"(SELECT coalesce(max(id), 1) FROM {name}))"))
    if protocol == "da":
        fill_da_sums(app, cid)
    fill_dashboard_totals(app, cid)
    with app.app_context(), db.engine.connect() as connection:
        connection.execute(text("ANALYZE"))
        connection.commit()
    log(f"    built: {len(counts):,} volunteers, {totals['collected']:,} test judgments, {sentences:,} sentences "
        f"({time.time() - started:.0f} s)")
    return {"campaign_id": cid, "timed": timed, "organiser": organiser}


def fill_da_sums(app, cid):
    """The DA running sums each answer moves (protocols/da/sums, where the tree has them), folded from the rows
    by the app's own ``recompute_from_database``."""
    try:
        from app.services import score_sums
    except ImportError:
        return
    from sqlalchemy import select

    from app.extensions import db
    from app.models import Participation

    with app.app_context():
        for participation in db.session.scalars(select(Participation).where(Participation.campaign_id == cid)):
            judge, systems, kinds = score_sums.recompute_from_database(participation)
            db.session.add_all([judge, *systems, *kinds])
        db.session.commit()


def fill_dashboard_totals(app, cid):
    """The dashboard's totals, the campaign's volunteers and the volunteers' export-row and valid-ticket
    counters (services/totals, counters, research, rewards), counted from the rows by the app's recounts."""
    from app.extensions import db
    from app.services import counters, research, rewards
    from app.services import totals as dashboard_totals

    with app.app_context():
        dashboard_totals.recount(cid)
        counters.recount_volunteers(cid)
        research.recount(cid)
        rewards.recount_valid(cid)
        db.session.commit()


def is_control_position(settings, position, seed):
    from app.protocols.pairwise.controls import is_control_position as rule

    return rule(position, settings["control_first"], settings["control_every"], settings["control_placement"], seed,
                early_items=settings["early_control_items"], early_every=settings["early_control_every"])


def add_expired(connection, cid, now, count):
    """``count`` reservations that timed out an hour ago, one per new volunteer, on open slots (their holds
    counted in the slots and sentences), in the connection's transaction."""
    from sqlalchemy import select, text

    from app.models import Item, Participation, Sentence, Slot, User
    from app.services.names import email_key, skeleton

    rows = Builder(connection, (User, Participation, Item))
    free = connection.execute(select(Slot.id, Slot.sentence_id, Slot.system_a_id, Slot.system_b_id, Slot.target
                                     - Slot.pending).join(Sentence, Sentence.id == Slot.sentence_id).where(
        Sentence.campaign_id == cid, Slot.pending < Slot.target).order_by(Slot.id)).all()
    held = {}
    for n in range(count):
        uid, pid, iid = rows.new_id("users"), rows.new_id("participations"), rows.new_id("items")
        email = f"x{n:06d}@bench.example.org"
        rows.add(User, {"id": uid, "email": email, "email_key": email_key(email), "username": f"x{n:06d}",
                        "username_skeleton": skeleton(f"x{n:06d}"), "password_hash": "-", "role": "volunteer",
                        "hide_from_ranking": False, "created_at": now})
        rows.add(Participation, {"id": pid, "campaign_id": cid, "user_id": uid, "source_level": "C1-C2",
                                 "target_level": "C1-C2", "consent_at": now, "joined_at": now, "items_served": 1})
        slot = next(s for s in free[n % len(free):] + free if held.get(s[0], 0) < s[4])
        held[slot[0]] = held.get(slot[0], 0) + 1
        rows.add(Item, {"id": iid, "campaign_id": cid, "participation_id": pid, "position": 1, "token": f"x{iid:031x}",
                        "slot_id": slot[0], "sentence_id": slot[1], "left_system_id": slot[2],
                        "right_system_id": slot[3], "served_at": now - timedelta(hours=2),
                        "expires_at": now - timedelta(hours=1), "holding": True, "control_reused": False,
                        "too_fast": False})
    rows.write()
    connection.execute(text("UPDATE slots SET pending = pending + :n WHERE id = :slot"),
                       [{"slot": slot, "n": n} for slot, n in held.items()])
    connection.execute(text("UPDATE sentences SET pending = (SELECT sum(pending) FROM slots WHERE sentence_id = "
                            "sentences.id) WHERE campaign_id = :c"), {"c": cid})
    connection.execute(text("UPDATE sentences SET is_open = (pending < capacity) WHERE campaign_id = :c"), {"c": cid})


# ---------------------------------------------------------------- timing

def clock(function):
    """(milliseconds, result) of one call."""
    started = time.perf_counter()
    result = function()
    return 1000 * (time.perf_counter() - started), result


def logged_in(app, email):
    """A test client logged in through /login, and the CSRF token its API calls send."""
    client = app.test_client()
    page = client.get("/login").get_data(as_text=True)
    response = client.post("/login", data={"csrf_token": csrf_from(page), "email": email, "password": PASSWORD})
    if response.status_code != 302:
        raise RuntimeError(f"logging in {email}: HTTP {response.status_code}")
    welcome = client.get(f"/c/{SLUG}/welcome").get_data(as_text=True)
    return client, csrf_from(welcome) if "csrf_token" in welcome else None  # an organiser has no welcome page


class Volunteer:
    """A timed volunteer: their client, and the item on their screen."""

    def __init__(self, app, email, participation_id, rng):
        self.app, self.participation_id, self.rng = app, participation_id, rng
        self.client, self.csrf = logged_in(app, email)
        self.item = self.client.get(f"/c/{SLUG}/api/item").get_json()["item"]

    def judge(self):
        """(ms, bytes of the reply) of one answer through the JSON API (it serves the next item)."""
        from harness import answer_for

        answer = answer_for(self.item, self.rng)
        ms, response = clock(lambda: self.client.post(f"/c/{SLUG}/api/judgment", json={
            "token": self.item["token"], **answer}, headers={"X-CSRFToken": self.csrf}))
        reply = response.get_json()
        if response.status_code != 200 or reply.get("status") != "accepted" or reply["item"] is None:
            raise RuntimeError(f"judgment: HTTP {response.status_code}, {str(reply)[:200]}")
        self.item = reply["item"]
        return ms, len(response.get_data())


def forget_caches(cid):
    """What a change by another volunteer or a restart makes the next reader rebuild."""
    from app.services import dashboard, leaderboard

    leaderboard.invalidate(cid)
    dashboard.forget()


def get(client, url):
    ms, response = clock(lambda: client.get(url))
    if response.status_code != 200:
        raise RuntimeError(f"GET {url}: HTTP {response.status_code}")
    return ms, len(response.get_data())


def time_state(app, state, operations, reps):
    """{operation: [ms or bytes, ...]} of the operations asked for, on one built state."""
    from sqlalchemy import select

    from app import protocols, realtime
    from app.extensions import db, socketio
    from app.models import Campaign, Item, Participation
    from app.services import leaderboard, reservations
    from app.protocols.da.quality import BAD_REFERENCE

    cid, rng, out = state["campaign_id"], random.Random(2), {}
    volunteers = [Volunteer(app, email, pid, rng) for email, pid in state["timed"]]
    organiser = logged_in(app, state["organiser"])[0] if {"da-dashboard", "panel-first-load", "suspicious"} & set(
        operations) else None
    anonymous = app.test_client()

    def record(name, value):
        if rep:  # round 0 warms up (templates compiled, statements cached)
            out.setdefault(name, []).append(value)

    for name in operations:
        for rep in range(reps + 1):
            if name == "page":
                for v in volunteers:
                    forget_caches(cid)  # others judge meanwhile: the ranking is rebuilt
                    record(name, get(v.client, f"/c/{SLUG}/evaluate")[0])
            elif name == "join":
                for v in volunteers:
                    forget_caches(cid)
                    sio = socketio.test_client(app, flask_test_client=v.client)
                    ms, ack = clock(lambda: sio.emit("join", {"campaign": SLUG}, callback=True))
                    sio.disconnect()
                    if ack != {"ok": True}:
                        raise RuntimeError(f"join: {ack}")
                    record(name, ms)
            elif name in ("judgment", "judgment-bytes"):
                for v in volunteers:
                    ms, size = v.judge()
                    record("judgment", ms)
                    record("judgment-bytes", size)
            elif name == "da-dashboard":
                if rep == 0:
                    get(organiser, f"/organiser/c/{SLUG}/panel")  # the cache warm: later fetches follow one score
                volunteers[rep % len(volunteers)].judge()
                record(name, get(organiser, f"/organiser/c/{SLUG}/panel")[0])
            elif name == "panel-first-load":
                forget_caches(cid)
                record(name, get(organiser, f"/organiser/c/{SLUG}/panel")[0])
            elif name == "suspicious":
                record(name, get(organiser, f"/organiser/c/{SLUG}/suspicious")[0])
            elif name == "raffle-page":
                record(name, get(anonymous, f"/c/{SLUG}/raffle")[0])
            elif name == "raffle-page-mine":  # a volunteer's own tickets and standing on it
                for v in volunteers:
                    record(name, get(v.client, f"/c/{SLUG}/raffle")[0])
            elif name in ("tickets-csv", "tickets-csv-bytes"):
                ms, size = get(anonymous, f"/c/{SLUG}/raffle/tickets.csv")
                record("tickets-csv", ms)
                record("tickets-csv-bytes", size)
            elif name == "ranking-build":
                with app.app_context():
                    leaderboard.invalidate(cid)
                    record(name, clock(lambda: leaderboard.get(cid))[0])
            elif name == "ranking-tick":
                if rep == 0:
                    connect_all(app, cid)
                    with app.app_context():
                        realtime.flush()  # everyone's first personal message
                volunteers[rep % len(volunteers)].judge()  # one change: what the tick has to tell
                with app.app_context():
                    emits = realtime.stats["personal_emits"]
                    record(name, clock(realtime.flush)[0])
                    record("ranking-tick-emits", realtime.stats["personal_emits"] - emits)
            elif name == "release-expired":
                with app.app_context():
                    add_expired(db.session.connection(), cid, datetime.utcnow(), state["expired"])
                    ms, released = clock(lambda: reservations.release_expired(cid, datetime.utcnow()))
                    db.session.rollback()
                    if not released:
                        raise RuntimeError("release-expired: nothing released")
                    record(name, ms)
                    record("release-expired-released", released)
            elif name == "da-live-rule":
                with app.app_context():
                    campaign = db.session.get(Campaign, cid)
                    protocol = protocols.of(campaign)
                    for v in volunteers:
                        participation = db.session.get(Participation, v.participation_id)
                        item = db.session.scalars(select(Item).where(
                            Item.participation_id == v.participation_id, Item.qc_kind == BAD_REFERENCE,
                            Item.answered_at.is_not(None)).order_by(Item.position.desc()).limit(1)).one()
                        record(name, clock(lambda: (protocol.dismissal_reason(campaign, participation, item),
                                                    protocol.hold_reason(campaign, participation, item)))[0])
                        db.session.rollback()
    return out


def connect_all(app, cid):
    """Every volunteer of the campaign connected to this process, as the join event records them
    (``realtime.joined``, the socket handler's own call) without a socket each: a tick's cost is measured,
    not the writing of its messages to 20,000 sockets."""
    from sqlalchemy import select

    from app import realtime
    from app.extensions import db
    from app.models import Participation

    with app.app_context():
        for pid, uid in db.session.execute(select(Participation.id, Participation.user_id).where(
                Participation.campaign_id == cid, Participation.items_answered > 0)).all():
            realtime.joined(cid, pid, uid, f"bench-{pid}")


# ---------------------------------------------------------------- the table

def run_table(args, workdir):
    """{(operation, axis): {size: [values]}} for the operations asked for."""
    asked = args.only or [name for name in OPERATIONS if name not in BYTES]
    wanted = {name for name in asked} | {b for b in BYTES if b.rsplit("-", 1)[0] in asked or b in asked}
    results = {}
    for axis, states in shapes(args.quick).items():
        operations = [name for name in OPERATIONS if name in wanted and axis in OPERATIONS[name]]
        if not operations:
            continue
        for size, settings in states:
            described = ", ".join(f"{k} {v:,}" if isinstance(v, int) else v for k, v in settings.items())
            log(f"{axis} = {size:,}: building ({described}) ...")
            app = make_app(workdir, args.database_url, f"{axis}-{size}")
            state = dict(build(app, workdir, **{k: v for k, v in settings.items() if k != "expired"}),
                         expired=settings.get("expired"))
            log(f"  timing {', '.join(operations)} ...")
            figures = time_state(app, state, operations, args.reps)
            for name, values in figures.items():
                results.setdefault((name, axis), {})[size] = values
            from app.extensions import db
            with app.app_context():
                db.session.remove()
                if args.database_url is None:
                    db.engine.dispose()
            if args.database_url is None:
                for suffix in ("", "-wal", "-shm"):
                    path = os.path.join(workdir, f"{axis}-{size}.sqlite3{suffix}")
                    if os.path.exists(path):
                        os.remove(path)
    return results


def print_table(results):
    rows = []
    for (name, axis), sizes in results.items():
        if name not in OPERATIONS or axis not in OPERATIONS[name]:
            continue
        unit = "bytes" if name in BYTES else "ms"
        p50 = {size: percentile(sorted(values), 50) for size, values in sizes.items()}
        p95 = {size: percentile(sorted(values), 95) for size, values in sizes.items()}
        small, large = min(p50), max(p50)
        ratio = p50[large] / p50[small] if p50[small] else None
        cells = [f"{fmt(p50[s], 0 if unit == 'bytes' else 2)} ({fmt(p95[s], 0 if unit == 'bytes' else 1)})"
                 for s in sorted(p50)]
        rows.append([name, f"{axis}: {' / '.join(f'{s:,}' for s in sorted(p50))}", *cells, unit,
                     fmt(ratio, 2) + "x", "MET" if ratio is not None and ratio <= TARGET else "MISSED"])
        if name == "ranking-tick" and ("ranking-tick-emits", axis) in results:
            emits = results[("ranking-tick-emits", axis)]
            rows.append(["(personal messages per tick)", axis,
                         *[fmt(percentile(sorted(emits[s]), 50)) for s in sorted(emits)], "", "", ""])
            # The terms: a tick's cost follows what changed (the messages it sends), not who is connected.
            each = {s: percentile(sorted(ms / max(n, 1) for ms, n in zip(sizes[s], emits[s])), 50) for s in sorted(emits)}
            growth = each[max(each)] / each[min(each)]
            rows.append(["(tick per personal message)", axis, *[fmt(each[s], 2) for s in sorted(each)], "ms",
                         fmt(growth, 2) + "x", "MET" if growth <= TARGET else "MISSED"])
        if name == "release-expired" and ("release-expired-released", axis) in results:
            freed = results[("release-expired-released", axis)]
            rows.append(["(reservations freed by the call)", axis,
                         *[fmt(percentile(sorted(freed[s]), 50)) for s in sorted(freed)], "", "", ""])
    table(["operation", "axis: sizes", "small p50 (p95)", "middle p50 (p95)", "large p50 (p95)", "unit",
           "growth", f"within {TARGET}x"], rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="every size / 10 (a smoke run)")
    parser.add_argument("--only", type=lambda s: [x for x in s.split(",") if x], default=None,
                        help=f"comma-separated operations: {', '.join(OPERATIONS)}")
    parser.add_argument("--database-url", default=None,
                        help="a PostgreSQL database to use (its tables are dropped and made again for each state)")
    parser.add_argument("--reps", type=int, default=None, help="rounds per operation (default 5; 3 with --quick)")
    parser.add_argument("--national", action="store_true", help="then the national campaign, served over HTTP")
    parser.add_argument("--no-table", action="store_true", help="skip the table (with --national)")
    parser.add_argument("--national-size", choices=("full", "small", "tiny"), default="full",
                        help="the national state: 20,000 participants, 50,000 sentences, 1M judgments; small: / 10; "
                             "tiny: a smoke run")
    args = parser.parse_args(argv)
    unknown = set(args.only or ()) - set(OPERATIONS)
    if unknown:
        parser.error(f"unknown operations: {', '.join(sorted(unknown))}")
    args.reps = args.reps or (3 if args.quick else 5)
    started, busy = time.time(), machine_busy()
    os.environ.setdefault("SECRET_KEY", "bench")
    with scratch() as workdir:
        os.environ["BOZKA_INSTANCE"] = os.path.join(workdir, "instance")
        results = {} if args.no_table else run_table(args, workdir)
        national_rows = national(args, workdir) if args.national else None
    database = "PostgreSQL" if args.database_url else "SQLite"
    if results:
        print(f"\nScale (issue 30): in-process, {database}, {os.cpu_count()} cores, {busy:.0f} % busy before the run"
              f"{'; --quick: sizes / 10' if args.quick else ''}; {args.reps} rounds ({TIMED} volunteers each where "
              "a volunteer acts); p50 and (p95) per size\n")
        print_table(results)
        print("The ranking tick: realtime.flush() after one judgment, every volunteer with an answer registered as "
              "connected by realtime.joined (no socket each: the writes to sockets are not in the figure).\n")
    if national_rows:
        print(national_rows)
    print(f"Command: .venv/bin/python scripts/bench/bench_scale.py {' '.join(sys.argv[1:] if argv is None else argv)}"
          .rstrip() + f"   ({time.time() - started:.0f} s)")


def national(args, workdir):
    """The national campaign served over HTTP: its two tables as text (bench_scale_national.py)."""
    from bench_scale_national import national as served

    return served(args, workdir)


if __name__ == "__main__":
    main()
