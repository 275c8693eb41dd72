"""Live-updates benchmark (issue 3): Socket.IO ranking broadcasts under load.

    .venv/bin/python scripts/bench/bench_realtime.py

Prints figures; asserts nothing. In one run (about 3 minutes) it:

1. Serves Bozka exactly as ``make run`` does (gunicorn, one
   ``GeventWebSocketWorker``; only the port differs) on a fresh SQLite
   database (``flask db upgrade``) with a generated campaign (``flask campaign
   import``, 2,000 sentences x 5 systems).
2. Creates the judging volunteers and 1,000 listening volunteers with the
   app's services (``accounts.create_user`` + ``join_campaign``), then logs
   each in through ``POST /login`` to get a real session cookie. (To spare
   1,010 x 2 scrypt hashes of 150 ms each, these accounts get a cheap
   pbkdf2 password hash; logging in is otherwise the normal path. All log
   in from 127.0.0.1, so the login rate limit is turned off with
   ``RATELIMIT_ENABLED=false``; judging has no rate limit anyway.)
3. Starts listener processes (bench_realtime_listener.py: gevent +
   websocket-client speaking the Engine.IO/Socket.IO protocol; each client
   connects, joins the campaign and timestamps every "ranking" event).
4. For 0, 100, 500 and 1,000 connected clients (added cumulatively): a few
   idle seconds (server CPU with the clients connected and nothing
   happening), then judgments at 50 per second for a warm-up and a measured
   window (bench_realtime_driver.py: open loop, JSON API, controls answered
   correctly), then collects every client's rankings.

Figures per level: judgment latency (response time of ``POST api/judgment``),
the delay from a judgment to the last client receiving the first ranking
broadcast that includes it, the fan-out time of one broadcast (first to last
client), broadcasts seen, and the CPU and memory of the server's worker.

Which broadcast includes a judgment: only test judgments move the payload's
``collected`` (controls do not), and SQLite commits them one at a time, so
judgment j is in every broadcast whose ``collected`` is at least the
counter's value just after j's commit, k_j. The driver cannot see k_j, but
bounds it: judgments whose response arrived before j was sent committed
before j (lower bound), and only judgments sent before j's response arrived
can have committed before it (upper bound). The delay figures use the upper
bound, so they may pick a later broadcast than the true first one: they err
on the long side. Delay = receipt at the last client minus the arrival of
j's response (the commit happened before the response, so the true delay
from the commit is at most the judgment's latency longer).
"""
import argparse
import bisect
import json
import os
import resource
import secrets
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, ROOT]

from bench_judging import (  # noqa: E402
    SLUG, bin_path, csrf_from, free_port, machine_busy, make_run_worker_connections, percentile, run_cli,
    write_campaign,
)

PASSWORD = "correct horse 1"
TARGET_DELAY_P95_MS = 1500
TARGET_LATENCY_RATIO = 1.5
MAKE_RUN = [
    "gunicorn", "--worker-class", "geventwebsocket.gunicorn.workers.GeventWebSocketWorker",
    "--workers", "1", "--bind", "127.0.0.1:5000", "--access-logfile", "-", "wsgi:app",
]
TICK = os.sysconf("SC_CLK_TCK")


def log(message):
    print(message, file=sys.stderr, flush=True)


def raise_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def process_cpu(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class Server:
    """The ``make run`` command on a free port (plus any extra options)."""

    def __init__(self, env, logdir, extra=(), cpus=None):
        self.port = free_port()
        command = list(MAKE_RUN)
        command[0] = bin_path("gunicorn")
        command[command.index("127.0.0.1:5000")] = f"127.0.0.1:{self.port}"
        self.command = command[:-1] + list(extra) + command[-1:]
        self.log_path = os.path.join(logdir, "gunicorn.log")
        self.log = open(self.log_path, "w")

        def prepare():
            raise_fd_limit()
            if cpus:
                os.sched_setaffinity(0, cpus)

        self.process = subprocess.Popen(
            self.command, cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, preexec_fn=prepare
        )
        self.worker_pid = None

    def wait_ready(self, timeout=30):
        import socket

        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited; see {self.log_path}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    pass
            except OSError:
                time.sleep(0.1)
                continue
            pid = self.process.pid
            try:
                with open(f"/proc/{pid}/task/{pid}/children") as handle:
                    children = handle.read().split()
            except OSError:
                children = []
            if children:
                self.worker_pid = int(children[0])
                return
            time.sleep(0.1)
        raise RuntimeError(f"server did not start; see {self.log_path}")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


# -- accounts ---------------------------------------------------------------

def create_accounts_main(spec):
    """Run in a subprocess: create the volunteers with the app's services."""
    from sqlalchemy import select
    from werkzeug.security import generate_password_hash

    from app import create_app
    from app.extensions import db
    from app.models import Campaign, User
    from app.services import accounts

    cheap = generate_password_hash(PASSWORD, method="pbkdf2:sha256:1000")
    User.set_password = lambda self, password: setattr(self, "password_hash", cheap)
    app = create_app()
    with app.app_context():
        campaign = db.session.scalar(select(Campaign).where(Campaign.slug == SLUG))
        for name in spec["names"]:
            user = accounts.create_user(
                f"{name}@bench.example.org", name, PASSWORD,
                age_group="26-35", studies_level="university", studies_field="language",
            )
            accounts.join_campaign(user, campaign, "C1-C2", "C1-C2")
        db.session.commit()


def create_accounts(names, env):
    done = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--create-accounts", json.dumps({"names": names})],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    if done.returncode:
        raise RuntimeError(f"creating accounts failed:\n{done.stderr[-3000:]}")


def login(base, name, with_csrf=False):
    """Log in through /login; return {name, cookie[, csrf]}."""
    import requests

    session = requests.Session()
    page = session.get(f"{base}/login", timeout=30)
    page.raise_for_status()
    response = session.post(
        f"{base}/login",
        data={"csrf_token": csrf_from(page.text), "email": f"{name}@bench.example.org", "password": PASSWORD},
        allow_redirects=False,
        timeout=30,
    )
    if response.status_code != 302:
        raise RuntimeError(f"logging in {name}: HTTP {response.status_code}")
    account = {"name": name}
    if with_csrf:
        page = session.get(f"{base}/c/{SLUG}/welcome", timeout=30)
        page.raise_for_status()
        account["csrf"] = csrf_from(page.text)
    account["cookie"] = f"session={session.cookies.get('session')}"
    return account


def login_all(base, names, with_csrf=False, workers=8):
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda name: login(base, name, with_csrf), names))


# -- listener processes -----------------------------------------------------

class Listeners:
    """A few processes of gevent Socket.IO clients, driven over pipes."""

    def __init__(self, processes, port, cookies, cpus=None, connect_timeout=20):
        self.processes = []
        self.count = processes
        for number in range(processes):
            job = {
                "host": "127.0.0.1",
                "port": port,
                "slug": SLUG,
                "cookies": cookies[number::processes],
                "connect_timeout": connect_timeout,
                "concurrency": 50,
            }

            def prepare():
                raise_fd_limit()
                if cpus:
                    os.sched_setaffinity(0, cpus)

            self.processes.append(subprocess.Popen(
                [sys.executable, os.path.join(HERE, "bench_realtime_listener.py"), json.dumps(job)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, preexec_fn=prepare,
            ))

    @property
    def pids(self):
        return [p.pid for p in self.processes]

    def _ask_all(self, commands, timeout):
        for process, command in zip(self.processes, commands):
            process.stdin.write(json.dumps(command) + "\n")
            process.stdin.flush()
        answers = []
        deadline = time.time() + timeout
        for process in self.processes:
            ready, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.time()))
            if not ready:
                raise RuntimeError("a listener process did not answer in time")
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"listener process {process.pid} exited (code {process.poll()})")
            answers.append(json.loads(line))
        return answers

    def connect(self, total, timeout=90):
        """Bring the number of connected clients up to ``total``."""
        commands = [{"cmd": "connect", "count": len(range(n, total, self.count))} for n in range(self.count)]
        answers = self._ask_all(commands, timeout)
        return {
            "connected": sum(a["connected"] for a in answers),
            "seconds": max(a["seconds"] for a in answers),
            "errors": sum(a["errors"] for a in answers),
            "first_errors": [e for a in answers for e in a["first_errors"]][:3],
            "fd_limit": min(a["fd_limit"] for a in answers),
        }

    def collect(self, timeout=60):
        answers = self._ask_all([{"cmd": "collect"}] * self.count, timeout)
        return {
            "rankings": [r for a in answers for r in a["rankings"]],
            "alive": sum(a["alive"] for a in answers),
            "errors": [e for a in answers for e in a["errors"]][:3],
            "cpu": sum(a["cpu"] for a in answers),
        }

    def stop(self):
        for process in self.processes:
            if process.poll() is None:
                try:
                    process.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
                    process.stdin.flush()
                except OSError:
                    pass
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


# -- one phase --------------------------------------------------------------

def collected_now(database):
    with sqlite3.connect(database) as connection:
        return connection.execute("SELECT collected_judgments FROM campaigns WHERE slug = ?", (SLUG,)).fetchone()[0]


def drive(server, drivers, controls, args, listener_pids, seed, cpus=None):
    job = {
        "host": "127.0.0.1", "port": server.port, "slug": SLUG, "volunteers": drivers, "controls": controls,
        "rate": args.rate, "warmup": args.warmup, "duration": args.duration,
        "server_pid": server.worker_pid, "listener_pids": listener_pids, "seed": seed,
    }
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, "bench_realtime_driver.py")],
        input=json.dumps(job), capture_output=True, text=True, timeout=args.warmup + args.duration + 120,
        preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
    )
    if done.returncode:
        raise RuntimeError(f"driver failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def idle_cpu(pid, seconds):
    t0, c0 = time.time(), process_cpu(pid)
    time.sleep(seconds)
    t1, c1 = time.time(), process_cpu(pid)
    return 100 * (c1 - c0) / (t1 - t0)


def stats_ms(values):
    ordered = sorted(values)
    if not ordered:
        return {"n": 0, "p50": None, "p95": None, "p99": None, "max": None, "mean": None}
    return {
        "n": len(ordered),
        "p50": 1000 * percentile(ordered, 50),
        "p95": 1000 * percentile(ordered, 95),
        "p99": 1000 * percentile(ordered, 99),
        "max": 1000 * ordered[-1],
        "mean": 1000 * sum(ordered) / len(ordered),
    }


def analyse(driven, rankings, collected_before, collected_after):
    """Judgment latency, judgment-to-last-client delay and broadcast fan-out."""
    window_start, window_end = driven["window"]
    judgments = driven["judgments"]
    accepted = [j for j in judgments if j[2] == "accepted"]
    in_window = [j for j in accepted if window_start <= j[1] <= window_end]
    result = {
        "judgments_per_second": len(in_window) / (window_end - window_start),
        "latency": stats_ms([j[1] - j[0] for j in in_window]),
        "statuses": {},
        "send_lag_p95_ms": 1000 * percentile(sorted(j[4] for j in judgments), 95) if judgments else None,
    }
    for j in judgments:
        result["statuses"][j[2]] = result["statuses"].get(j[2], 0) + 1
    tests = sorted((j for j in accepted if j[3]), key=lambda j: j[0])
    result["tests_acknowledged"] = len(tests)
    result["counter_check"] = collected_after - collected_before == len(tests)
    if not rankings:
        return result

    sent = sorted(j[0] for j in tests)
    responded = sorted(j[1] for j in tests)
    bounds = []
    for j in tests:
        if not window_start <= j[1] <= window_end:
            continue
        low = collected_before + bisect.bisect_left(responded, j[0]) + 1
        high = collected_before + bisect.bisect_left(sent, j[1])
        bounds.append((j, low, high))
    result["ambiguous"] = sum(1 for _, low, high in bounds if low != high)
    result["measured_tests"] = len(bounds)

    # Per client: the running maximum of collected, to find the first receipt
    # of a broadcast with collected >= k.
    clients = []
    for messages in rankings:
        messages = sorted(messages, key=lambda m: m[1])
        running, times, top = [], [], -1
        for collected, received in messages:
            top = max(top, collected)
            running.append(top)
            times.append(received)
        clients.append((running, times))

    cache = {}

    def receipts(k):
        """(first, last) client receipt of the first broadcast with collected >= k; missing clients."""
        if k not in cache:
            first, last, missing = None, None, 0
            for running, times in clients:
                index = bisect.bisect_left(running, k)
                if index == len(running):
                    missing += 1
                    continue
                t = times[index]
                first = t if first is None or t < first else first
                last = t if last is None or t > last else last
            cache[k] = (first, last, missing)
        return cache[k]

    delays, delays_low, delays_sent, first_delays, missing = [], [], [], [], 0
    for j, low, high in bounds:
        first, last, lost = receipts(high)
        if last is None or lost:
            missing += 1
            continue
        delays.append(last - j[1])
        delays_sent.append(last - j[0])
        first_delays.append(first - j[1])
        delays_low.append(receipts(low)[1] - j[1])
    result["delay"] = stats_ms(delays)
    result["delay_lower_bound"] = stats_ms(delays_low)
    result["delay_from_send"] = stats_ms(delays_sent)
    result["delay_first_client"] = stats_ms(first_delays)
    result["delay_missing"] = missing

    # Broadcasts of the window: distinct collected values first received in it.
    arrivals = {}
    for running, times in clients:
        seen = set()
        for collected, received in zip(running, times):
            if collected in seen:
                continue
            seen.add(collected)
            arrivals.setdefault(collected, []).append(received)
    window = {c: ts for c, ts in arrivals.items() if window_start <= min(ts) <= window_end + 1.5}
    fan_out = [max(ts) - min(ts) for ts in window.values() if len(ts) == len(clients)]
    result["broadcasts"] = len(window)
    result["fan_out"] = stats_ms(fan_out)
    starts = sorted(min(ts) for ts in window.values())
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    result["broadcast_period_s"] = sum(gaps) / len(gaps) if gaps else None
    return result


# -- report -----------------------------------------------------------------

def fmt(value, digits=0):
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def report(args, results, server, started, busy_before, setup):
    lines = []
    out = lines.append
    out("")
    out(f"Live-updates benchmark (issue 3): {os.cpu_count()} cores; machine busy {busy_before:.0f}% before the run;"
        f" {args.rate:g} judgments/s from {args.drivers} volunteers; {args.duration:g} s measured per level"
        f" after {args.warmup:g} s warm-up; broadcast interval 1 s (BOZKA_BROADCAST_INTERVAL default)")
    out(f"Server: {' '.join(server.command)}"
        + (f"   (pinned to CPU {args.server_cpus}; clients on the others)" if args.pin else ""))
    out(f"Setup: {setup}")
    out("")
    out("| clients connected | connect s | judgments/s | judgment p50 ms | p95 ms | p99 ms | delay p50 ms |"
        " delay p95 ms | delay max ms | fan-out p50 / p95 ms | broadcasts (period s) | server CPU judging |"
        " server CPU idle | server RSS MB | clients CPU | other processes CPU |")
    out("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        connected = f"{r['connected']:,}" + ("" if r["connected"] == r["level"] else f" of {r['level']:,}")
        if "blocked" in r:
            out(f"| {connected} | {fmt(r.get('connect_seconds'), 1)} | judging blocked: no response to a new "
                f"connection in 10 s | | | | | | | | | | {fmt(r['idle_cpu_percent'], 1)}% | "
                f"{fmt(r['idle_rss_mb'])} | | |")
            continue
        a = r["analysis"]
        lat = a["latency"]
        d = a.get("delay")
        f = a.get("fan_out")
        out(
            f"| {connected} | {fmt(r.get('connect_seconds'), 1)} | {fmt(a['judgments_per_second'], 1)} | "
            f"{fmt(lat['p50'], 1)} | {fmt(lat['p95'], 1)} | {fmt(lat['p99'], 1)} | "
            f"{fmt(d and d['p50'])} | {fmt(d and d['p95'])} | {fmt(d and d['max'])} | "
            f"{fmt(f and f['p50'])} / {fmt(f and f['p95'])} | "
            f"{a.get('broadcasts', '-')} ({fmt(a.get('broadcast_period_s'), 2)}) | "
            f"{fmt(r['server_cpu_percent'])}% | {fmt(r['idle_cpu_percent'], 1)}% | "
            f"{fmt(r['rss_mb'])} | {fmt(r['clients_cpu_percent'])}% | {fmt(r['other_cpu_percent'])}% |"
        )
    out("")
    out("Delay = last client's receipt of the first broadcast including the judgment minus the judgment's response;"
        " fan-out = last minus first client's receipt of one broadcast; CPU as % of one core over the window"
        " (clients = listener processes + driver; other = the rest of the machine: other people's work);"
        " RSS = server worker's maximum over the window.")
    for r in results:
        if "blocked" in r:
            out(f"- {r['connected']:,} clients: {r['blocked']}; clients still connected: {r['alive']:,}")
            continue
        a = r["analysis"]
        if "delay" not in a:
            continue
        out(
            f"- {r['connected']:,} clients: delay p50/p95 with the lower bound of k: "
            f"{fmt(a['delay_lower_bound']['p50'])}/{fmt(a['delay_lower_bound']['p95'])} ms; from the request's "
            f"sending: {fmt(a['delay_from_send']['p50'])}/{fmt(a['delay_from_send']['p95'])} ms; to the first "
            f"client: {fmt(a['delay_first_client']['p50'])}/{fmt(a['delay_first_client']['p95'])} ms; "
            f"{a['measured_tests']} test judgments measured ({a['ambiguous']} with k_low != k_high), "
            f"{a['delay_missing']} never seen by every client; clients alive after: {r['alive']:,}"
        )
    for r in results:
        problems = []
        if r.get("connect_errors"):
            problems.append(f"{r['connect_errors']} clients failed to connect: {r['first_errors']}")
        if r.get("listener_errors"):
            problems.append(f"listener errors {r['listener_errors']}")
        a = r.get("analysis")
        if a:
            if set(a["statuses"]) - {"accepted"}:
                problems.append(f"statuses {a['statuses']}")
            if not a["counter_check"]:
                problems.append("collected counter != test judgments acknowledged")
            if r.get("driver_errors") or r.get("stopped"):
                problems.append(f"driver errors {r['driver_errors']} stopped {r['stopped']}")
        if problems:
            out(f"- {r['level']:,} clients: " + "; ".join(problems))
    out("")
    out("Targets")
    top = max(results, key=lambda r: r["level"])
    base = next(r for r in results if r["level"] == 0)
    full = top["connected"] == top["level"]
    if "blocked" in top:
        out(f"- at {top['level']:,} clients: MISSED, no judgment could be made (the server took no new connection)")
    else:
        d = top["analysis"].get("delay")
        if d and d["p95"] is not None:
            ok = d["p95"] < TARGET_DELAY_P95_MS and full
            out(f"- delay p95 at {top['connected']:,} of {top['level']:,} clients: {fmt(d['p95'])} ms, target under "
                f"{TARGET_DELAY_P95_MS} ms: {'MET' if ok else 'MISSED'}")
        lat0, lat1 = base["analysis"]["latency"], top["analysis"]["latency"]
        for key in ("p50", "p95"):
            if lat0[key] and lat1[key]:
                ratio = lat1[key] / lat0[key]
                out(f"- judgment latency {key} with {top['connected']:,} clients {fmt(lat1[key], 1)} ms vs none "
                    f"{fmt(lat0[key], 1)} ms: {ratio:.2f}x, target within {TARGET_LATENCY_RATIO}x: "
                    f"{'MET' if ratio <= TARGET_LATENCY_RATIO and full else 'MISSED'}")
    out("")
    out(f"Command: {' '.join(['.venv/bin/python', 'scripts/bench/bench_realtime.py'] + sys.argv[1:])}"
        f"   (total {time.time() - started:.0f} s)")
    print("\n".join(lines), flush=True)


# -- main -------------------------------------------------------------------

def benchmark(args, workdir):
    instance = os.path.join(workdir, "instance")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "BOZKA_RANDOM_SEED", "SOCKETIO_MESSAGE_QUEUE")}
    # Every client logs in from 127.0.0.1: the login limit (10 a minute from
    # one address) would refuse all but the first ten, so the limits are off
    # (RATELIMIT_ENABLED, documented for load tests). Judging has no limit.
    env.update(BOZKA_INSTANCE=instance, SECRET_KEY=secrets.token_hex(16), PYTHONPATH=ROOT, RATELIMIT_ENABLED="false")
    setup_started = time.time()
    log("setting up: flask db upgrade; generating and importing the campaign ...")
    run_cli(["db", "upgrade"], env)
    folder = write_campaign(os.path.join(workdir, "campaign"), sentences=args.sentences)
    log(f"  {run_cli(['campaign', 'import', folder], env)}")
    database = os.path.join(instance, "bozka.sqlite3")
    with sqlite3.connect(database) as connection:
        controls = dict(connection.execute("SELECT source, better FROM controls"))
    top = max(args.levels)
    driver_names = [f"drv{i:03d}" for i in range(args.drivers)]
    listener_names = [f"lis{i:04d}" for i in range(top)]
    log(f"creating {len(driver_names) + len(listener_names)} volunteers with the app's services ...")
    create_accounts(driver_names + listener_names, env)

    cpus = sorted(os.sched_getaffinity(0))
    server_cpus = client_cpus = None
    if args.pin and len(cpus) >= 2:
        server_cpus, client_cpus = {cpus[0]}, set(cpus[1:])
        args.server_cpus = cpus[0]
    else:
        args.pin = False
    extra = ["--worker-connections", str(args.worker_connections)] if args.worker_connections else []
    server = Server(env, workdir, extra, server_cpus)
    listeners = None
    results = []
    try:
        server.wait_ready()
        base = f"http://127.0.0.1:{server.port}"
        started = time.time()
        drivers = login_all(base, driver_names, with_csrf=True)
        listener_accounts = login_all(base, listener_names)
        setup = (f"campaign of {args.sentences:,} sentences x 5 systems; {len(drivers) + len(listener_accounts):,} "
                 f"logins through /login in {time.time() - started:.1f} s; setup {time.time() - setup_started:.0f} s")
        log(f"  {setup}")
        processes = max(1, min(args.processes, (top + 99) // 100))
        listeners = Listeners(processes, server.port, [a["cookie"] for a in listener_accounts], client_cpus)
        for number, level in enumerate([0] + args.levels):
            row = {"level": level, "connected": 0}
            if level:
                log(f"connecting {level:,} clients ...")
                connected = listeners.connect(level)
                row.update(connected=connected["connected"], connect_seconds=connected["seconds"],
                           connect_errors=connected["errors"], first_errors=connected["first_errors"])
                log(f"  {connected['connected']:,} connected in {connected['seconds']:.1f} s"
                    + (f"; {connected['errors']} failed: {connected['first_errors']}" if connected["errors"] else ""))
            row["idle_cpu_percent"] = idle_cpu(server.worker_pid, args.idle)
            row["idle_rss_mb"] = rss_mb(server.worker_pid)
            listeners.collect()  # forget what came before
            before = collected_now(database)
            log(f"judging at {args.rate:g}/s with {row['connected']:,} clients connected ...")
            driven = drive(server, drivers, controls, args, listeners.pids if level else [], seed=number + 1,
                           cpus=client_cpus)
            if "blocked" in driven:
                log(f"  judging blocked: {driven['blocked']}")
                gathered = listeners.collect() if level else {"alive": 0, "errors": []}
                row.update(blocked=driven["blocked"], alive=gathered["alive"], listener_errors=gathered["errors"])
                results.append(row)
                continue
            time.sleep(args.settle)
            gathered = listeners.collect() if level else {"rankings": [], "alive": 0, "errors": [], "cpu": 0}
            after = collected_now(database)
            row["analysis"] = analyse(driven, gathered["rankings"], before, after)
            row.update(
                alive=gathered["alive"], listener_errors=gathered["errors"],
                server_cpu_percent=driven["server_cpu_percent"], rss_mb=driven["server_rss_mb_max"],
                clients_cpu_percent=(driven["listeners_cpu_percent"] or 0) + (driven["driver_cpu_percent"] or 0),
                machine_cpu_percent=driven["machine_cpu_percent"], driver_errors=driven["errors"],
                other_cpu_percent=max(0.0, driven["machine_cpu_percent"] * len(os.sched_getaffinity(0))
                                      - (driven["server_cpu_percent"] or 0) - (driven["listeners_cpu_percent"] or 0)
                                      - (driven["driver_cpu_percent"] or 0)),
                stopped=driven["stopped"],
            )
            a = row["analysis"]
            log(f"  judgments p50/p95 {fmt(a['latency']['p50'], 1)}/{fmt(a['latency']['p95'], 1)} ms"
                + (f"; delay p50/p95 {fmt(a['delay']['p50'])}/{fmt(a['delay']['p95'])} ms" if "delay" in a else ""))
            results.append(row)
    finally:
        if listeners is not None:
            listeners.stop()
        server.stop()
    return results, server, setup


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--create-accounts"]:
        create_accounts_main(json.loads(argv[1]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", type=lambda s: [int(x) for x in s.split(",")], default=[100, 500, 1000])
    parser.add_argument("--rate", type=float, default=50.0, help="judgments per second")
    parser.add_argument("--drivers", type=int, default=10, help="judging volunteers")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--duration", type=float, default=20.0, help="seconds measured per level")
    parser.add_argument("--idle", type=float, default=3.0, help="idle seconds measured per level")
    parser.add_argument("--settle", type=float, default=2.5, help="seconds to wait for the last broadcasts")
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--processes", type=int, default=4, help="listener processes")
    parser.add_argument("--pin", action="store_true", help="server on the first CPU, clients on the others")
    parser.add_argument("--worker-connections", type=int, default=make_run_worker_connections(),
                        help="--worker-connections of the server (default: as the Makefile's run target)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--json", help="also write the raw figures to this file")
    args = parser.parse_args(argv)
    args.levels = sorted(args.levels)

    raise_fd_limit()
    started = time.time()
    busy_before = machine_busy()
    if busy_before > 25:
        log(f"warning: the machine is already {busy_before:.0f}% busy: figures will be noisy")
    workdir = tempfile.mkdtemp(prefix="bozka-bench-rt-")
    try:
        results, server, setup = benchmark(args, workdir)
    finally:
        if args.keep:
            log(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=1, default=str)
    report(args, results, server, started, busy_before, setup)


if __name__ == "__main__":
    main()
