"""Several processes (issue 7): (a) one gunicorn process on SQLite against
(b) two on PostgreSQL with Redis behind nginx, as docs/deployment.md deploys
them (scripts/cluster.py), everything on this machine.

    eval "$(bash scripts/services.sh start)"      # PostgreSQL and Redis (nginx installed)
    .venv/bin/python scripts/bench/load.py --volunteers 32 256 --duration 30
    bash scripts/services.sh stop

At each number of volunteers, registered through the pages: every one
judges in a closed loop (client.py) and keeps a Socket.IO connection
listening to the ranking (bench_realtime_listener.py, from 200 loopback
addresses as volunteers on their own networks, so that nginx's ``ip_hash``
spreads the sockets). Rate limits are off (the HTTP load comes from one
address). Prints judgments per second, latency, errors, whether every
acknowledged judgment is stored exactly once, and the ranking delay: from
the end of the load until every listener has the final count.
"""
import argparse
import os
import sys
import tempfile
import time
from types import SimpleNamespace

from harness import ROOT, drive, fmt, log, opening_args, register, stored_once, table, write_campaign

sys.path[:0] = [os.path.join(ROOT, "scripts"), os.path.join(ROOT, "tests")]

from bench_realtime import Listeners  # noqa: E402
from cluster import Cluster  # noqa: E402
from databases import scratch_database  # noqa: E402


def collected(cluster):
    from sqlalchemy import create_engine, text

    engine = create_engine(cluster.database_url)
    try:
        with engine.connect() as connection:
            return connection.scalar(text("SELECT collected_judgments FROM campaigns"))
    finally:
        engine.dispose()


def run_level(cluster, count, args, prefix, earlier):
    volunteers = register(cluster.url, count, prefix)
    port = int(cluster.url.rsplit(":", 1)[1])
    listeners = Listeners(1, port, [v["cookie"] for v in volunteers], [f"127.0.{10 + n}.1" for n in range(200)])
    try:
        connected, _errors = listeners.connect(count)
        result = drive(SimpleNamespace(port=port, worker_pid=cluster.server_pids()[0]), volunteers,
                       args.warmup, args.duration)
        ended, final, seen = time.time(), collected(cluster), {}
        while len(seen) < connected and time.time() < ended + 30:  # until every listener has the final count
            for number, rankings in enumerate(listeners.collect()):
                at = next((at for value, at in rankings if value == final), None)
                if at is not None:
                    seen.setdefault(number, at)
            time.sleep(0.2)
    finally:
        listeners.stop()
    check = stored_once(cluster.database_url, result["tokens"], earlier)
    earlier.extend(result["tokens"])  # the next level runs on the same database
    errors = sum(n for status, n in result["statuses"].items() if status.startswith(("http-", "connection")))
    return [count, fmt(result["per_second"], 1), " / ".join(fmt(result[p]) for p in ("p50", "p95", "p99")), errors,
            f"{check['once']:,} of {check['acknowledged']:,}" + (f" (+{check['unacknowledged']} unacknowledged)"
                                                                 if check["unacknowledged"] else ""),
            f"{max(seen.values()) - ended:.2f} s" if len(seen) == connected and seen else f"{len(seen)} of {connected}",
            f"{fmt(result['machine_busy_percent'])} %"]


def run_setup(name, args, database_url=None, redis_url=None, processes=1, nginx=False):
    workdir = tempfile.mkdtemp(prefix="bozka-load-")
    cluster = Cluster(database_url, redis_url, processes=processes, nginx=nginx, workdir=workdir,
                      env={"RATELIMIT_ENABLED": "false", "BOZKA_ACCESS_LOG": "/dev/null"})
    rows, earlier = [], []
    try:
        cluster.start()
        cluster.flask("campaign", "import", write_campaign(os.path.join(workdir, "campaign"), args.sentences),
                      *opening_args())
        for number, count in enumerate(args.volunteers):
            log(f"{name}: {count} volunteers ...")
            rows.append([name] + run_level(cluster, count, args, f"{name[1]}{number}x", earlier))  # usernames a0x0001, ...
            if rows[-1][4]:
                log("errors; the servers' logs end with:\n" + "\n".join(cluster.logs(20).values()))
    finally:
        cluster.cleanup()
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--volunteers", type=int, nargs="+", default=[32, 256])
    parser.add_argument("--duration", type=float, default=30.0, help="seconds measured per level")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--sentences", type=int, default=5000)
    parser.add_argument("--only", choices=["sqlite", "postgresql"])
    args = parser.parse_args(argv)
    database_url, redis_url = os.environ.get("BOZKA_TEST_DATABASE_URL"), os.environ.get("BOZKA_TEST_REDIS_URL")
    if args.only != "sqlite" and not (database_url and redis_url):
        parser.error('(b) needs PostgreSQL and Redis: eval "$(bash scripts/services.sh start)" first')
    rows = []
    if args.only != "postgresql":
        rows += run_setup("(a) SQLite, 1 process", args)
    if args.only != "sqlite":
        import redis

        redis.Redis.from_url(redis_url).flushdb()
        with scratch_database(tempfile.gettempdir(), "bozka_load") as url:  # made next to it, dropped after
            rows += run_setup("(b) PostgreSQL, 2 processes, Redis, nginx", args, url, redis_url, 2, True)
    table(["setup", "volunteers", "judgments/s", "p50 / p95 / p99 ms", "errors", "acknowledged, stored exactly once",
           "ranking delay", "machine busy"], rows)


if __name__ == "__main__":
    main()
