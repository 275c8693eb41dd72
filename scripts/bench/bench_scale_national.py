"""The national campaign served as ``make run`` serves it: bench_scale.py's ``--national`` part (issue 30).

    nice .venv/bin/python scripts/bench/bench_scale.py --national --no-table                        (about 6 min)
    nice .venv/bin/python scripts/bench/bench_scale.py --national --no-table --national-size small  (about 4 min)

For each protocol (pairwise, then DA), one state of the whole campaign is
built by bench_scale's builder (20,000 participants, 50,000 sentences,
1,000,000 judgments; ``small`` / 10, ``tiny`` for the smoke test), every
account given the same cheap password hash (pbkdf2, made once) so that the
harness can log them in through /login. The site is then served as ``make
run`` serves it (harness.Server: the Makefile's gunicorn, one worker), the
rate limits and the bound on one address's connections off (every client is
127.0.0.1), the public progress as it is now (bench_realtime.SERVED), the
ranking ticking every second as configured by default.

What is measured, in one window: 32 of the built volunteers judging in a
closed loop (harness.drive); 2,000 others connected as pages of their own
(bench_realtime's listeners, Socket.IO clients in processes of their own),
each receiving the ranking; an organiser's dashboard open, its panel fetched
again each second as static/js/dashboard.js does on each live signal (at
most once a second, a second after a fetch that outlasted it). The
dashboard's open time is the organiser page plus its first panel fetch,
once on the freshly started server (nothing cached) and once while judging.
A ranking update's delay is bench_realtime.delays: from a judgment's
response to the last page receiving a ranking that counts it (which
judgments count: those with a sentence, read from the database afterwards).
"""
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from bench_realtime import SERVED, Listeners, delays, ms
from bench_scale import build, make_app
from harness import (PASSWORD, SLUG, Server, bozka_env, drive, fmt, log, login, machine_busy, markdown,
                     percentile, signed_in)

SIZES = {
    "full": dict(participants=20000, sentences=50000, judgments=1_000_000, volunteers=32, pages=2000, warmup=5,
                 duration=20, settle=8),
    "small": dict(participants=2000, sentences=5000, judgments=100_000, volunteers=32, pages=2000, warmup=5,
                  duration=20, settle=8),
    "tiny": dict(participants=40, sentences=300, judgments=2000, volunteers=4, pages=10, warmup=1, duration=3,
                 settle=2.5),
}
TIMED_ANSWERS = 100  # bench_scale's eight timed volunteers; the others share the rest of the judgments


def national(args, workdir):
    """The two tables (pairwise, DA) as Markdown text."""
    size = SIZES[args.national_size]
    out = []
    for protocol in ("pairwise", "da"):
        figures = measure(workdir, protocol, size, args.database_url)
        out.append(f"National campaign, {protocol} (--national-size {args.national_size}): served as `make run` "
                   f"serves it, {'PostgreSQL' if args.database_url else 'SQLite'}, {os.cpu_count()} cores\n")
        out.append(as_table(figures))
    return "\n".join(out)


def prepare(workdir, protocol, size, database_url):
    """The built state, every account's password PASSWORD; (state, database URL)."""
    from sqlalchemy import update
    from werkzeug.security import generate_password_hash

    from app.extensions import db
    from app.models import User

    app = make_app(workdir, database_url, f"national-{protocol}")
    started = time.time()
    state = build(app, workdir, protocol, size["sentences"], size["participants"], size["judgments"], TIMED_ANSWERS)
    cheap = generate_password_hash(PASSWORD, method="pbkdf2:sha256:1000")  # /login checks it as any other
    with app.app_context():
        db.session.execute(update(User.__table__).values(password_hash=cheap))
        db.session.commit()
        url = db.engine.url.render_as_string(hide_password=False)
        db.session.remove()
        db.engine.dispose()
    state["seconds"] = time.time() - started
    return state, url


def measure(workdir, protocol, size, database_url):
    """The figures of one protocol's national state, served."""
    log(f"national {protocol}: building ({size['participants']:,} participants, {size['sentences']:,} sentences, "
        f"{size['judgments']:,} judgments) ...")
    state, url = prepare(workdir, protocol, size, database_url)
    volunteers, pages = size["volunteers"], min(size["pages"], size["participants"] - size["volunteers"])
    names = [f"v{n:06d}" for n in range(volunteers + pages)]  # the builder's usernames
    env = bozka_env(os.path.join(workdir, "instance"), DATABASE_URL=url, **SERVED)
    busy = machine_busy()
    with Server(env, workdir, name=f"national-{protocol}") as server, ThreadPoolExecutor(8) as pool:
        organiser = signed_in(server.url, state["organiser"])
        cold = open_dashboard(organiser, server.url)  # the first after a start: nothing cached
        log(f"  logging {volunteers + pages:,} volunteers in ...")
        drivers = list(pool.map(lambda name: login(server.url, name), names[:volunteers]))
        cookies = [f"session={session.cookies.get('session')}" for session in pool.map(
            lambda name: signed_in(server.url, f"{name}@bench.example.org"), names[volunteers:])]
        listeners = Listeners(max(1, min(4, pages // 100)), server.port, cookies)
        try:
            connected, errors = listeners.connect(pages)
            log(f"  {connected:,} pages connected{f'; errors: {errors}' if errors else ''}; judging ...")
            listeners.collect()  # forget what came before
            before = collected(url)
            dashboard = Dashboard(organiser, server.url, delay=size["warmup"])
            dashboard.start()
            try:
                result = drive(server, drivers, size["warmup"], size["duration"])
            finally:
                dashboard.stop()
            time.sleep(size["settle"])  # the last broadcasts (a saturated worker ticks every few seconds)
            rankings = listeners.collect()
        finally:
            listeners.stop()
    counted = counted_tokens(url)
    for judgment in result["judgments"]:  # [sent, responded, status, counts, token]
        judgment[3] = judgment[4] in counted
    found, _fan_out, missing, broadcasts, period = delays(result, rankings, before)
    return dict(state=state, size=size, pages=pages, connected=connected, busy=busy, result=result, cold=cold,
                warm=dashboard.opened, fetches=sorted(dashboard.fetches), error=dashboard.error, found=found,
                missing=missing, broadcasts=broadcasts, period=period)


def timed_get(session, url):
    """Milliseconds of one GET (HTTP 200 expected)."""
    started = time.perf_counter()
    response = session.get(url, timeout=120)
    if response.status_code != 200:
        raise RuntimeError(f"GET {url}: HTTP {response.status_code}")
    return 1000 * (time.perf_counter() - started)


def open_dashboard(session, base):
    """(ms of the organiser's page, ms of its first panel fetch)."""
    return (timed_get(session, f"{base}/organiser/c/{SLUG}/"),
            timed_get(session, f"{base}/organiser/c/{SLUG}/panel"))


class Dashboard(threading.Thread):
    """An organiser's open dashboard: opened ``delay`` seconds on, then its panel fetched again each second
    (a second after a fetch that outlasted the second), each fetch timed."""

    def __init__(self, session, base, delay):
        super().__init__(daemon=True)
        self.session, self.base, self.delay = session, base, delay
        self.halt, self.opened, self.fetches, self.error = threading.Event(), None, [], None

    def run(self):
        try:
            if self.halt.wait(self.delay):
                return
            self.opened = open_dashboard(self.session, self.base)
            pause = 1.0
            while not self.halt.wait(pause):
                took = timed_get(self.session, f"{self.base}/organiser/c/{SLUG}/panel")
                self.fetches.append(took)
                pause = max(0.0, 1.0 - took / 1000) if took < 1000 else 1.0
        except Exception as exc:  # noqa: BLE001 (said in the table, not lost in a thread)
            self.error = repr(exc)[:300]

    def stop(self):
        self.halt.set()
        self.join(timeout=180)


def collected(url):
    """The campaign's collected judgments now."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return connection.execute(text("SELECT collected_judgments FROM campaigns")).scalar_one()
    finally:
        engine.dispose()


def counted_tokens(url):
    """Tokens of the answered items the campaign's collected judgments count (those with a slot:
    not a control nor a DA quality item; services/answers.py)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return set(connection.scalars(text(
                "SELECT token FROM items WHERE slot_id IS NOT NULL AND answered_at IS NOT NULL")))
    finally:
        engine.dispose()


def as_table(f):
    """The figures of one protocol as a two-column Markdown table (text)."""
    size, result, state, fetches = f["size"], f["result"], f["state"], f["fetches"]
    statuses = ", ".join(f"{k} {v:,}" for k, v in sorted(result["statuses"].items()))
    opened = [(when, o) for when, o in (("first after the start", f["cold"]), ("while judging", f["warm"]))]
    rows = [
        ["state", f"{size['participants']:,} participants, {size['sentences']:,} sentences, "
                  f"{size['judgments']:,} judgments (built in {state['seconds']:.0f} s)"],
        ["machine busy before / during the window", f"{f['busy']:.0f} % / {result['machine_busy_percent']:.0f} %"],
        [f"judgments/s at {size['volunteers']} volunteers (closed loop)",
         f"{fmt(result['per_second'], 1)} over {result['window'][1] - result['window'][0]:.1f} s ({statuses})"],
        ["judgment p50 / p95 / p99", " / ".join(fmt(result[p], 1) for p in ("p50", "p95", "p99")) + " ms"],
        ["dashboard open (organiser page + first panel)", "; ".join(
            f"{when}: {fmt(sum(o))} ms ({fmt(o[0])} + {fmt(o[1])})" if o else f"{when}: -" for when, o in opened)],
        ["panel fetch while judging p50 / p95", f"{fmt(percentile(fetches, 50))} / {fmt(percentile(fetches, 95))} ms "
                                                f"({len(fetches)} fetches{'; ' + f['error'] if f['error'] else ''})"],
        [f"ranking update's delay to {f['connected']:,} pages p50 / p95 / max",
         " / ".join(fmt(ms(f["found"], p)) for p in (50, 95, 100)) + f" ms ({f['broadcasts']} broadcasts, "
         f"period {fmt(f['period'], 2)} s; {f['missing']} of {f['missing'] + len(f['found'])} judgments some page "
         "missed)"],
        ["server worker's CPU", f"{fmt(result['cpu_percent'])} % of a core, {fmt(result['cpu_ms_per_judgment'], 1)} "
                                f"ms per judgment, RSS {fmt(result['server_rss_mb'])} MB"],
    ]
    return markdown(["what", "figure"], rows)
