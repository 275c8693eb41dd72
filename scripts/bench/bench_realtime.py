"""Live updates (issue 3): ranking broadcasts to many connected pages while volunteers judge.

    .venv/bin/python scripts/bench/bench_realtime.py          (a few minutes)

Bozka served as ``make run`` serves it, with bench_judging's generated
campaign and the rate limits off (everyone logs in from 127.0.0.1). Ten
judging volunteers and up to 1,000 listening ones log in through /login
(their accounts made with the app's models, a cheap password hash sparing
1,010 scrypt hashes). The listeners are real Socket.IO clients
(bench_realtime_listener.py, 4 processes). For 0, 100, 500 and 1,000
connected clients, judgments go at 50 per second (client.py's open loop).

Per level: judgment latency; the delay from a judgment's response to the
*last* client receiving the first ranking that counts it; the fan-out of
one broadcast (first to last client); broadcasts and their period; the
server worker's CPU and RSS. Which ranking counts judgment j: SQLite
commits one at a time, so j is counted in every ranking whose ``collected``
is at least the count of test judgments sent before j's response arrived
(an upper bound: the delay errs on the long side).
"""
import argparse
import bisect
import json
import os
import select
import sqlite3
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from harness import (HERE, PASSWORD, SLUG, Server, bozka_instance, drive, fmt, log, login, machine_busy,
                     percentile, scratch, table)

TARGET_DELAY_P95_MS = 1500  # at 1,000 clients
TARGET_LATENCY_RATIO = 1.5  # judgment latency with 1,000 clients against none
# Every client is 127.0.0.1: no rate limit, no bound on one address's connections (app/worker.py); the
# public progress as it is now (not as it stood at the minute's start), so that each ranking says what it counts.
SERVED = dict(RATELIMIT_ENABLED="false", BOZKA_CONNECTIONS_PER_ADDRESS="0", BOZKA_PUBLIC_FIGURES_SECONDS="0")


def create_accounts(env, database, names):
    """Volunteers of the campaign, made with the app's models (a cheap hash: /login checks it as any other)."""
    os.environ.update(BOZKA_INSTANCE=env["BOZKA_INSTANCE"], SECRET_KEY=env["SECRET_KEY"])
    from sqlalchemy import select as select_
    from werkzeug.security import generate_password_hash

    from app import create_app
    from app.extensions import db
    from app.models import Campaign, User
    from app.services.accounts import join_campaign

    cheap = generate_password_hash(PASSWORD, method="pbkdf2:sha256:1000")
    app = create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{database}", "BOZKA_REALTIME_TICKER": False,
                      "BOZKA_CHECKPOINT_INTERVAL": 0})
    with app.app_context():
        campaign = db.session.scalar(select_(Campaign).where(Campaign.slug == SLUG))
        for name in names:
            user = User(email=f"{name}@bench.example.org", username=name, password_hash=cheap, age_group="26-35",
                        studies_level="university", studies_field="language")
            db.session.add(user)
            db.session.flush()
            join_campaign(user, campaign, "C1-C2", "C1-C2")
        db.session.commit()
        db.engine.dispose()


class Listeners:
    """bench_realtime_listener.py processes, the clients dealt among them."""

    def __init__(self, processes, port, cookies, source_addresses=None):
        self.processes = [subprocess.Popen(
            [sys.executable, os.path.join(HERE, "bench_realtime_listener.py"),
             json.dumps({"host": "127.0.0.1", "port": port, "slug": SLUG, "cookies": cookies[n::processes],
                         "source_addresses": source_addresses})],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for n in range(processes)]

    def ask(self, commands, timeout=120):
        for process, command in zip(self.processes, commands):
            process.stdin.write(json.dumps(command) + "\n")
            process.stdin.flush()
        answers, deadline = [], time.time() + timeout
        for process in self.processes:
            if not select.select([process.stdout], [], [], max(0.0, deadline - time.time()))[0]:
                raise RuntimeError("a listener process did not answer in time")
            answers.append(json.loads(process.stdout.readline()))
        return answers

    def connect(self, total):
        n = len(self.processes)
        answers = self.ask([{"cmd": "connect", "count": len(range(i, total, n))} for i in range(n)])
        return sum(a["connected"] for a in answers), [e for a in answers for e in a["first_errors"]]

    def collect(self):
        return [r for a in self.ask([{"cmd": "collect"}] * len(self.processes)) for r in a["rankings"]]

    def stop(self):
        for process in self.processes:
            try:
                process.stdin.write('{"cmd": "quit"}\n')
                process.stdin.close()
                process.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                process.kill()


def delays(result, rankings, collected_before):
    """Judgment-to-last-client delays and broadcast fan-outs (seconds), broadcasts and their period."""
    if not rankings:
        return [], [], 0, 0, None
    start, end = result["window"]
    tests = [j for j in result["judgments"] if j[2] == "accepted" and j[3]]
    sent = sorted(j[0] for j in tests)
    clients = []  # per client: the running maximum of collected, and when each ranking came
    for messages in rankings:
        top, running, times = -1, [], []
        for collected, received in sorted(messages, key=lambda m: m[1]):
            top = max(top, collected)
            running.append(top)
            times.append(received)
        clients.append((running, times))
    found, missing = [], 0
    for j in tests:
        if start <= j[1] <= end:
            k = collected_before + bisect.bisect_left(sent, j[1])
            firsts = [times[i] for running, times in clients if (i := bisect.bisect_left(running, k)) < len(times)]
            if len(firsts) < len(clients):
                missing += 1
            else:
                found.append(max(firsts) - j[1])
    arrivals = {}  # collected -> its first receipt at each client
    for messages in rankings:
        first = {}
        for collected, received in messages:
            first[collected] = min(received, first.get(collected, received))
        for collected, received in first.items():
            arrivals.setdefault(collected, []).append(received)
    broadcasts = sorted((min(ts), max(ts) - min(ts)) for ts in arrivals.values()
                        if start <= min(ts) <= end and len(ts) == len(rankings))
    gaps = [b[0] - a[0] for a, b in zip(broadcasts, broadcasts[1:])]
    return (sorted(found), sorted(f for _, f in broadcasts), missing, len(broadcasts),
            sum(gaps) / len(gaps) if gaps else None)


def ms(seconds, p):
    value = percentile(seconds, p)
    return None if value is None else 1000 * value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", type=lambda s: [int(x) for x in s.split(",")], default=[100, 500, 1000],
                        help="connected clients, comma-separated (0 is always measured first)")
    parser.add_argument("--rate", type=float, default=50.0, help="judgments per second")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--duration", type=float, default=20.0, help="seconds measured per level")
    args = parser.parse_args(argv)
    started, busy, rows, figures = time.time(), machine_busy(), [], {}
    with scratch() as workdir:
        log("setting up: migrations, campaign, accounts ...")
        env, database = bozka_instance(workdir, 2000, **SERVED)
        drivers, listeners_names = [f"drv{i:03d}" for i in range(10)], [f"lis{i:04d}" for i in range(max(args.levels))]
        create_accounts(env, database, drivers + listeners_names)
        with Server(env, workdir) as server, ThreadPoolExecutor(8) as pool:
            log(f"logging {len(drivers) + len(listeners_names):,} volunteers in ...")
            drivers = list(pool.map(lambda name: login(server.url, name), drivers))
            cookies = [v["cookie"] for v in pool.map(lambda name: login(server.url, name), listeners_names)]
            listeners = Listeners(max(1, min(4, len(cookies) // 100)), server.port, cookies)
            try:
                for level in [0] + sorted(args.levels):
                    connected, errors = listeners.connect(level)
                    log(f"{connected:,} clients connected{f'; errors: {errors}' if errors else ''}; judging ...")
                    listeners.collect()  # forget what came before
                    with sqlite3.connect(database) as connection:
                        before = connection.execute("SELECT collected_judgments FROM campaigns").fetchone()[0]
                    result = drive(server, drivers, args.warmup, args.duration, rate=args.rate, seed=level + 1)
                    time.sleep(2.5)  # the last broadcasts
                    found, fan_out, missing, count, period = delays(result, listeners.collect() if level else [],
                                                                    before)
                    figures[level] = dict(result, delay_p95=ms(found, 95))
                    rows.append([f"{connected:,}", fmt(result["per_second"], 1),
                                 " / ".join(fmt(result[p], 1) for p in ("p50", "p95", "p99")),
                                 " / ".join(fmt(ms(found, p)) for p in (50, 95, 100)) if level else "-",
                                 " / ".join(fmt(ms(fan_out, p)) for p in (50, 95)) if level else "-",
                                 f"{count} ({fmt(period, 2)} s)" if level else "-",
                                 f"{fmt(result['cpu_percent'])} %", f"{fmt(result['server_rss_mb'])} MB",
                                 f"{missing} of {missing + len(found)}" if level else "-"])
            finally:
                listeners.stop()
        command = " ".join(server.command)
    print(f"\nLive updates: {os.cpu_count()} cores, {busy:.0f} % busy before the run; `{command}`; "
          f"{args.rate:g} judgments/s from 10 volunteers, {args.duration:g} s measured per level\n")
    table(["clients connected", "judgments/s", "judgment p50 / p95 / p99 ms", "delay p50 / p95 / max ms",
           "fan-out p50 / p95 ms", "broadcasts (period)", "server CPU", "server RSS", "judgments some client missed"],
          rows)
    top, none = figures[max(args.levels)], figures[0]
    delay = top["delay_p95"]
    print("Targets (issue 3)")
    print(f"- delay p95 at {max(args.levels):,} clients {fmt(delay)} ms (under {TARGET_DELAY_P95_MS}): "
          f"{'MET' if delay is not None and delay < TARGET_DELAY_P95_MS else 'MISSED'}")
    for key in ("p50", "p95"):
        ratio = top[key] / none[key]
        print(f"- judgment latency {key} with {max(args.levels):,} clients against none: {ratio:.2f}x "
              f"(within {TARGET_LATENCY_RATIO}x): {'MET' if ratio <= TARGET_LATENCY_RATIO else 'MISSED'}")
    print(f"\nCommand: .venv/bin/python scripts/bench/bench_realtime.py {' '.join(sys.argv[1:])}".rstrip()
          + f"   ({time.time() - started:.0f} s)")


if __name__ == "__main__":
    main()
