"""Export benchmark (issue 27): a large download against volunteers judging.

    .venv/bin/python scripts/bench/bench_export.py                      (1,000,000 judgments; about 6 minutes)
    .venv/bin/python scripts/bench/bench_export.py --judgments 100000   (a quick run)

One SQLite instance holds two campaigns: ``test`` (``--sentences`` x 5
systems), where the volunteers judge, and ``export``, filled by bulk
inserts into the real schema with ``--judgments`` answered pairwise
judgments (``--per-volunteer`` items each, controls where the campaign puts
them, 2 % of volunteers dismissed with their judgments discarded). Bozka is
served as ``make run`` serves it; an organiser logs in through /login.

1. Each format of ``--formats`` alone: the organiser downloads
   ``/organiser/c/export/export/judgments.<fmt>``, reading the body as fast
   as it comes (as curl would).
2. Judging, ``--volunteers`` fresh volunteers in a closed loop in each
   phase: ``--duration`` seconds without an export, then each format's
   download (the judgments answered while it streams), each followed by
   ``--duration`` seconds without. The phases without an export on either
   side of a download are its baseline: the machine's other load drifts.
   ``--client-rate`` reads these downloads at a set speed (a slow client).

Each download's rows are counted and compared with the answered items in the
database when it started; the server worker's RSS and the ``-wal`` file's
size are sampled from /proc and the disk. Prints the figures and the target
(p95 during a download within 2x of p95 without); asserts nothing.
"""
import argparse
import http.client
import os
import random
import sqlite3
import sys
import threading
import time
from datetime import datetime, timedelta

from harness import (PASSWORD, Server, bozka_instance, cpu_seconds, csrf_from, drive, flask, fmt, log, machine_busy,
                     opening_args, percentile, register, scratch, table, write_campaign)

EXPORT_SLUG = "export"
ORGANISER = "organiser@bench.example.org"
TARGET_RATIO = 2.0  # p95 while an export streams, against p95 without


def build_export_campaign(workdir, env, database, judgments, per_volunteer, seed=1):
    """Import the ``export`` campaign (500 sentences, copied up by SQL to one per volunteer) and fill it with
    ``judgments`` answered items; returns the campaign's id."""
    from sqlalchemy import create_engine, insert, text

    from app.models import Item, Participation, User
    from app.services.names import email_key, skeleton
    from app.protocols.pairwise.controls import CONTROL_FAILURE_RATE, is_control_position

    volunteers = -(-judgments // per_volunteer)
    sentences = max(volunteers, per_volunteer)  # 50 judgments a sentence (10 pairs x 5) for 50 per volunteer
    base = min(500, sentences)
    folder = write_campaign(os.path.join(workdir, "campaign-export"), base)
    toml = os.path.join(folder, "campaign.toml")
    with open(toml) as handle:
        content = handle.read().replace('slug = "test"', f'slug = "{EXPORT_SLUG}"', 1)
    with open(toml, "w") as handle:
        handle.write(content)
    log(f"  {flask(['campaign', 'import', folder, *opening_args()], env)}")

    engine = create_engine(f"sqlite:///{database}")
    rng = random.Random(seed)
    started = time.time()
    with engine.begin() as connection:
        campaign = connection.execute(text("SELECT id FROM campaigns WHERE slug = :s"), {"s": EXPORT_SLUG}).scalar()
        params = {"campaign": campaign, "base": base, "size": sentences}
        columns = [c.name for c in Item.metadata.tables["sentences"].columns if c.name != "id"]
        connection.execute(text(
            f"WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < {sentences // base}) "
            f"INSERT INTO sentences ({', '.join(columns)}) SELECT "
            + ", ".join("number + n * :base" if c == "number" else c for c in columns)
            + " FROM sentences, k WHERE campaign_id = :campaign AND number + n * :base <= :size"), params)
        for copied in ("outputs", "slots"):
            names = [c.name for c in Item.metadata.tables[copied].columns if c.name not in ("id", "sentence_id")]
            connection.execute(text(
                f"INSERT INTO {copied} (sentence_id, {', '.join(names)}) SELECT copy.id, "
                + ", ".join(f"t.{name}" for name in names)
                + " FROM sentences copy JOIN sentences s ON s.campaign_id = copy.campaign_id "
                f"AND s.number = (copy.number - 1) % :base + 1 JOIN {copied} t ON t.sentence_id = s.id "
                "WHERE copy.campaign_id = :campaign AND copy.number > :base"), params)
        slots = {}  # sentence id -> [(slot id, system a, system b)]
        for slot_id, sentence_id, a, b in connection.execute(text(
                "SELECT slots.id, sentence_id, system_a_id, system_b_id FROM slots JOIN sentences s "
                "ON s.id = sentence_id WHERE s.campaign_id = :campaign ORDER BY slots.id"), params):
            slots.setdefault(sentence_id, []).append((slot_id, a, b))
        sentence_ids = sorted(slots)
        controls = list(connection.scalars(
            text("SELECT id FROM controls WHERE campaign_id = :campaign ORDER BY number"), params))
        user_id, participation_id, item_id = (connection.execute(text(f"SELECT coalesce(max(id), 0) FROM {t}")).scalar()
                                              for t in ("users", "participations", "items"))
        start = datetime(2026, 3, 1)
        users, participations, items, written = [], [], [], 0
        for v in range(volunteers):
            user_id, participation_id = user_id + 1, participation_id + 1
            name = f"x{v:07d}"
            joined = start + timedelta(seconds=rng.uniform(0, 30 * 86400))
            dismissed = rng.random() < 0.02
            count = min(per_volunteer, judgments - v * per_volunteer)
            email = f"{name}@bench.example.org"
            users.append({"id": user_id, "email": email, "email_key": email_key(email), "username": name,
                          "username_skeleton": skeleton(name), "password_hash": "-", "role": "volunteer",
                          "age_group": rng.choice(("18-25", "26-35", "36-45", "46-55", "56-65")),
                          "studies_level": rng.choice(("secondary", "vocational", "university", "other")),
                          "studies_field": rng.choice(("technical", "humanities", "language", "other")),
                          "hide_from_ranking": False, "created_at": joined,
                          "email_confirmed_at": joined if rng.random() < 0.8 else None})
            moment, tests, seen_controls, failed, first = joined, 0, 0, 0, len(items)
            for position in range(1, count + 1):
                item_id += 1
                seconds = round(rng.uniform(3, 25), 3)
                served, moment = moment + timedelta(seconds=1), moment + timedelta(seconds=1 + seconds)
                row = {"id": item_id, "campaign_id": campaign, "participation_id": participation_id,
                       "position": position, "token": f"{item_id:032x}", "slot_id": None, "sentence_id": None,
                       "left_system_id": None, "right_system_id": None, "control_id": None, "better_left": None,
                       "control_reused": False, "served_at": served, "holding": False, "answered_at": moment,
                       "seconds": seconds, "passed": None, "too_fast": False, "discarded_at": None,
                       "discarded_reason": None}
                if is_control_position(position):
                    passed = rng.random() < (0.6 if dismissed else 0.95)
                    better_left = rng.random() < 0.5
                    row.update(control_id=controls[(v + seen_controls) % len(controls)], better_left=better_left,
                               passed=passed, choice="left" if better_left == passed else "right")
                    seen_controls, failed = seen_controls + 1, failed + (not passed)
                else:
                    sentence = sentence_ids[(v * per_volunteer + tests) % len(sentence_ids)]
                    slot_id, a, b = slots[sentence][(v + tests) % len(slots[sentence])]
                    left, right = (a, b) if rng.random() < 0.5 else (b, a)
                    row.update(slot_id=slot_id, sentence_id=sentence, left_system_id=left, right_system_id=right,
                               choice=rng.choices(("left", "right", "equal"), (45, 45, 10))[0])
                    tests += 1
                items.append(row)
            if dismissed:
                for row in items[first:]:
                    row.update(discarded_at=moment, discarded_reason=CONTROL_FAILURE_RATE)
            participations.append({
                "id": participation_id, "campaign_id": campaign, "user_id": user_id, "source_level": "native",
                "target_level": rng.choice(("B1-B2", "C1-C2", "native")), "consent_at": joined, "joined_at": joined,
                "items_served": count, "items_answered": count, "items_counted": 0 if dismissed else tests,
                "controls_seen_all": False, "controls_answered": seen_controls, "controls_failed": failed,
                "dismissed_at": moment if dismissed else None,
                "dismissed_reason": CONTROL_FAILURE_RATE if dismissed else None})
            if len(items) >= 50_000 or v == volunteers - 1:
                connection.execute(insert(User.__table__), users)
                connection.execute(insert(Participation.__table__), participations)
                connection.execute(insert(Item.__table__), items)
                written += len(items)
                users, participations, items = [], [], []
                log(f"  {written:,} judgments written ({time.time() - started:.0f} s)")
        connection.execute(text("UPDATE campaigns SET target_judgments = (SELECT sum(capacity) FROM sentences "
                                "WHERE campaign_id = :campaign) WHERE id = :campaign"), params)
    with engine.connect() as connection:
        connection.execute(text("ANALYZE"))
    engine.dispose()
    return campaign


def answered(database, campaign):
    """Answered items of the campaign now (what its judgments export must hold)."""
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        return connection.execute("SELECT count(*) FROM items WHERE campaign_id = ? AND answered_at IS NOT NULL",
                                  (campaign,)).fetchone()[0]


def organiser_cookie(base):
    """The session cookie of the organiser, logged in through /login."""
    import requests

    session = requests.Session()
    page = session.get(f"{base}/login", timeout=30)
    response = session.post(f"{base}/login", allow_redirects=False, timeout=30, data={
        "csrf_token": csrf_from(page.text), "email": ORGANISER, "password": PASSWORD})
    if response.status_code != 302:
        raise RuntimeError(f"logging in the organiser: HTTP {response.status_code}")
    return f"session={session.cookies.get('session')}"


class Sampler(threading.Thread):
    """The server worker's RSS and the -wal file's size every 0.1 s, until stopped: their largest."""

    def __init__(self, pid, database):
        super().__init__(daemon=True)
        self.pid, self.wal, self.stop, self.rss_mb = pid, database + "-wal", threading.Event(), 0
        self.wal_start_mb = self.wal_mb = self.wal_size()

    def wal_size(self):
        try:
            return os.path.getsize(self.wal) / 1e6
        except OSError:
            return 0

    def run(self):
        while not self.stop.is_set():
            with open(f"/proc/{self.pid}/status") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        self.rss_mb = max(self.rss_mb, int(line.split()[1]) / 1024)
            self.wal_mb = max(self.wal_mb, self.wal_size())
            self.stop.wait(0.1)


def download(server, cookie, fmt_, database, campaign, rate=None):
    """One download of the judgments export, read as fast as it comes (or at ``rate`` MB/s): its figures."""
    expected = answered(database, campaign)
    sampler = Sampler(server.worker_pid, database)
    sampler.start()
    cpu0 = cpu_seconds(server.worker_pid)
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
    started = time.time()
    connection.request("GET", f"/organiser/c/{EXPORT_SLUG}/export/judgments.{fmt_}", headers={"Cookie": cookie})
    response = connection.getresponse()
    first, size, lines, last = None, 0, 0, b""
    while chunk := response.read1(1 << 16):
        first = first or time.time()
        size, lines, last = size + len(chunk), lines + chunk.count(b"\n"), chunk
        if rate:
            time.sleep(max(0.0, started + size / (rate * 1e6) - time.time()))
    ended = time.time()
    cpu = cpu_seconds(server.worker_pid) - cpu0
    connection.close()
    sampler.stop.set()
    sampler.join()
    if response.status != 200 or not last.endswith(b"\n"):
        raise RuntimeError(f"the export answered HTTP {response.status}, {size:,} bytes")
    rows = lines - (fmt_ == "csv")  # no generated value holds a line break; the CSV has a header
    return {"start": started, "end": ended, "seconds": ended - started, "first_byte": (first or ended) - started,
            "bytes": size, "rows": rows, "expected": expected, "cpu": cpu, "rss_mb": sampler.rss_mb,
            "wal_mb": (sampler.wal_start_mb, sampler.wal_mb)}


def judging_figures(result, start, end):
    """Judgments/s and latency percentiles (ms) of the judgments acknowledged between ``start`` and ``end``."""
    timed = [(j[1], 1000 * (j[1] - j[0])) for j in result["judgments"]
             if j[2] in ("accepted", "dismissed") and start <= j[1] <= end]
    latencies = sorted(ms for _t, ms in timed)
    thirds = [percentile(sorted(ms for t, ms in timed if start + n * (end - start) / 3 <= t
                                < start + (n + 1) * (end - start) / 3), 95) for n in range(3)]
    return {"latencies": latencies, "per_second": len(latencies) / (end - start), "p50": percentile(latencies, 50),
            "p95": percentile(latencies, 95), "p99": percentile(latencies, 99), "thirds": thirds}


def session(server, groups, cookie, formats, database, campaign, warmup, duration, workdir, rate=None):
    """Judging phases, fresh volunteers in each (``groups``): ``duration`` seconds without an export, then
    each format's download, each followed by ``duration`` seconds without. Returns
    [(label, judging figures, machine busy %, the download's figures or None)]."""
    phases = []

    def quiet():
        volunteers = groups.pop()
        log(f"  {len(volunteers)} volunteers judging, no export, {warmup:g} s + {duration:g} s ...")
        busy = machine_busy()
        result = drive(server, volunteers, warmup, duration)
        phases.append(("no export", dict(judging_figures(result, *result["window"]), result=result),
                       f"{busy:.0f} / {result['machine_busy_percent']:.0f} %", None))

    quiet()
    for fmt_ in formats:
        volunteers, result = groups.pop(), {}
        log(f"  {len(volunteers)} volunteers judging while the {fmt_} export downloads ...")
        busy = machine_busy()
        until = os.path.join(workdir, f"downloaded-{fmt_}")
        thread = threading.Thread(target=lambda: result.update(drive(server, volunteers, warmup, 3600, until=until)))
        thread.start()  # drive's failure is printed by the thread; then ``result`` stays empty
        time.sleep(warmup + 2)  # the client's start and its warm-up
        figures = download(server, cookie, fmt_, database, campaign, rate)
        open(until, "w").close()
        thread.join()
        if not result:
            raise RuntimeError("the volunteers' client failed (see above)")
        phases.append((f"{fmt_} export streaming",
                       dict(judging_figures(result, figures["start"], figures["end"]), result=result),
                       f"{busy:.0f} / {result['machine_busy_percent']:.0f} %", figures))
        quiet()
    return phases


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judgments", type=int, default=1_000_000, help="answered judgments in the exported campaign")
    parser.add_argument("--per-volunteer", type=int, default=50, help="judgments per volunteer, exported campaign")
    parser.add_argument("--formats", type=lambda s: s.split(","), default=["csv", "jsonl"],
                        help="export formats, comma-separated (default csv,jsonl)")
    parser.add_argument("--volunteers", type=int, default=32, help="volunteers judging at once")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of judging before measuring, per phase")
    parser.add_argument("--duration", type=float, default=30.0,
                        help="seconds of judging without an export, before and after each download")
    parser.add_argument("--sentences", type=int, default=5000, help="sentences of the judging campaign")
    parser.add_argument("--client-rate", type=float, metavar="MB/S",
                        help="the organiser's download speed while volunteers judge (default: as fast as it comes)")
    args = parser.parse_args(argv)
    started, busy = time.time(), machine_busy()
    with scratch() as workdir:
        log("setting up: migrations, the judging campaign ...")
        env, database = bozka_instance(workdir, args.sentences)
        log(f"the exported campaign: {args.judgments:,} judgments ...")
        campaign = build_export_campaign(workdir, env, database, args.judgments, args.per_volunteer)
        flask(["user", "create", "--role", "organiser", "--email", ORGANISER, "--username", "organiser",
               "--password", PASSWORD], env)
        flask(["campaign", "organisers", "add", EXPORT_SLUG, "organiser"], env)  # an organiser's campaigns are given
        count = 2 * len(args.formats) + 1  # judging phases, fresh volunteers in each
        with Server(dict(env, RATELIMIT_ENABLED="false"), workdir, name="setup") as setup:
            log(f"registering {count * args.volunteers} volunteers through the pages ...")
            volunteers = register(setup.url, count * args.volunteers, "bench")
        groups = [volunteers[n:n + args.volunteers] for n in range(0, len(volunteers), args.volunteers)]
        database_mb = os.path.getsize(database) / 1e6
        with Server(env, workdir) as server:
            cookie = organiser_cookie(server.url)
            alone = {}
            for fmt_ in args.formats:  # first: they also bring the database into the page cache
                log(f"the {fmt_} export alone ...")
                busy_alone = machine_busy()
                alone[fmt_] = dict(download(server, cookie, fmt_, database, campaign), busy=f"{busy_alone:.0f} %")
            log("judging ...")
            phases = session(server, groups, cookie, args.formats, database, campaign, args.warmup, args.duration,
                             workdir, args.client_rate)
            with open(f"/proc/{server.worker_pid}/status") as handle:
                hwm = next(int(line.split()[1]) / 1024 for line in handle if line.startswith("VmHWM:"))
            command = " ".join(server.command)

    print(f"\nExports against judging: {os.cpu_count()} cores, {busy:.0f} % busy before the run; SQLite database "
          f"{database_mb:,.0f} MB; exported campaign {args.judgments:,} judgments, {args.per_volunteer} per volunteer; "
          f"judging campaign {args.sentences:,} sentences x 5 systems; `{command}`\n")
    rate = f"; the download while they judge read at {args.client_rate:g} MB/s" if args.client_rate else ""
    print(f"Judging, {args.volunteers} volunteers (fresh ones each phase), phases in order{rate}")
    rows = []
    for label, r, busy_, download_ in phases:
        seconds = download_["seconds"] if download_ else r["result"]["window"][1] - r["result"]["window"][0]
        rows.append([label, fmt(seconds), fmt(r["per_second"]), fmt(r["p50"], 1), fmt(r["p95"], 1), fmt(r["p99"], 1),
                     " / ".join(fmt(v) for v in r["thirds"]),
                     f"{r['result']['cpu_percent']:.0f} %",
                     "-" if download_ else fmt(r["result"]["cpu_ms_per_judgment"], 1), busy_])
    table(["phase", "seconds", "judgments/s", "p50 ms", "p95 ms", "p99 ms", "p95 ms by third", "worker CPU",
           "worker CPU ms a judgment", "machine busy (before / during)"], rows)
    others = [f"{status}: {n}" for _label, r, _busy, _d in phases for status, n in r["result"]["statuses"].items()
              if status != "accepted"]
    print(f"Judging answers other than accepted: {', '.join(others) or 'none'}\n")
    print(f"Downloads of the judgments export (the worker's peak RSS over the whole run: {hwm:,.0f} MB)")
    downloads = [(f"{fmt_}, alone", alone[fmt_]) for fmt_ in args.formats] + [
        (f"{label.split()[0]}, {args.volunteers} volunteers judging", dict(d, busy=busy_))
        for label, _r, busy_, d in phases if d]
    table(["download", "seconds", "first byte s", "MB", "rows (of answered at the start)", "rows/s",
           "worker CPU s (all requests)", "worker max RSS MB", "-wal MB (start -> max)", "machine busy"],
          [[label, fmt(d["seconds"], 1), fmt(d["first_byte"], 2), fmt(d["bytes"] / 1e6, 1),
            f"{d['rows']:,} of {d['expected']:,}", fmt(d["rows"] / d["seconds"]), fmt(d["cpu"], 1), fmt(d["rss_mb"]),
            f"{d['wal_mb'][0]:,.0f} -> {d['wal_mb'][1]:,.0f}", d["busy"]] for label, d in downloads])
    print(f"Targets (issue 27): p95 while an export streams within {TARGET_RATIO:g}x of p95 without (the phases just "
          "before and after it, pooled); every answered item exported")
    for n, fmt_ in enumerate(args.formats):
        before, loaded, after = (r for _label, r, _busy, _d in phases[2 * n: 2 * n + 3])
        pooled = percentile(sorted(before["latencies"] + after["latencies"]), 95)
        ratio = loaded["p95"] / pooled
        print(f"- {fmt_}: p95 {fmt(loaded['p95'], 1)} ms against {fmt(pooled, 1)} ms: {ratio:.2f}x "
              f"({loaded['p95'] / before['p95']:.2f}x before, {loaded['p95'] / after['p95']:.2f}x after): "
              f"{'MET' if ratio <= TARGET_RATIO else 'MISSED'}")
        complete = all(d["rows"] == d["expected"] for label, d in downloads if label.startswith(f"{fmt_},"))
        print(f"- {fmt_}: rows exported equal the answered items, both downloads: {'MET' if complete else 'MISSED'}")
    print(f"\nCommand: .venv/bin/python scripts/bench/bench_export.py {' '.join(sys.argv[1:])}".rstrip()
          + f"   ({time.time() - started:.0f} s)")


if __name__ == "__main__":
    main()
