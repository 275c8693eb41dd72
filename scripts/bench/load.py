"""Load benchmark (issue 7): N simulated volunteers, over HTTP and Socket.IO,
against (a) one process on SQLite, served as ``make run`` serves, and (b) two
processes on PostgreSQL with Redis behind nginx (scripts/cluster.py: the
deploy/ files). Prints figures; asserts nothing about speed.

    eval "$(bash scripts/services.sh start)"      # PostgreSQL, Redis (and nginx installed)
    .venv/bin/python scripts/bench/load.py --volunteers 32 256 --duration 30
    bash scripts/services.sh stop

For each setup and number of volunteers: judgments per second, p50/p95/p99
latency of submit-and-next, errors, judgments acknowledged versus stored in
the database (must be equal), and the ranking update delay: every volunteer
also has a Socket.IO connection (scripts/bench/bench_realtime_listener.py)
and the delay is the time from the end of the load until every listener has
received a ranking with the final stored count.

The volunteers' HTTP load comes from scripts/bench/bench_judging_client.py
(gevent, keep-alive connections, a closed loop without think time); in (b)
it goes through nginx. Rate limits are off (``RATELIMIT_ENABLED=false``): all
volunteers' HTTP requests come from one address (nginx spreads those over
the processes whatever their address). Their Socket.IO connections come
from many loopback addresses (127.0.X.1), as volunteers on their own
networks would, so nginx's ``ip_hash`` spreads them over the processes too.

``--cpus 0`` runs everything on the CPUs given (this script, the servers,
nginx, the clients, and the running PostgreSQL and Redis, which get their
CPUs back at the end): how each setup scales with the cores it has.
"""
import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, os.path.join(ROOT, "scripts"), os.path.join(ROOT, "tests"), ROOT]

from bench_judging import register_volunteers, summarise, write_campaign  # noqa: E402
from cluster import Cluster  # noqa: E402
from databases import scratch_database  # noqa: E402

SLUG = "test"


def log(message):
    print(message, file=sys.stderr, flush=True)


class Listeners:
    """bench_realtime_listener.py in a subprocess, one socket per volunteer."""

    def __init__(self, url, cookies):
        host, port = url.split("//", 1)[1].split(":")
        # Each from its own network, as volunteers are: nginx's ip_hash
        # (the first three octets) spreads the sockets over the processes.
        addresses = [f"127.0.{10 + number % 200}.1" for number in range(len(cookies))]
        job = {"host": host, "port": int(port), "slug": SLUG, "cookies": cookies, "connect_timeout": 30,
               "source_addresses": addresses}
        self.process = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "bench_realtime_listener.py"), json.dumps(job)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )

    def command(self, **command):
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self):
        try:
            self.command(cmd="quit")
        except (OSError, ValueError):
            pass
        self.process.wait(timeout=30)


def stored_judgments(cluster):
    """Answered items in the database (what the volunteers' answers left)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(cluster.database_url)
    try:
        with engine.connect() as connection:
            answered = connection.scalar(text("SELECT count(*) FROM items WHERE answered_at IS NOT NULL"))
            collected = connection.scalar(text("SELECT collected_judgments FROM campaigns WHERE slug = :s"), {"s": SLUG})
            return answered, collected
    finally:
        engine.dispose()


def run_level(cluster, volunteers_count, args, prefix):
    volunteers = register_volunteers(cluster.url, volunteers_count, prefix)
    answered_before, _ = stored_judgments(cluster)
    listeners = Listeners(cluster.url, [v["cookie"] for v in volunteers])
    try:
        up = listeners.command(cmd="connect", count=len(volunteers))
        controls = {f"Control {i}.": f"Good {i}." for i in range(1, 21)}
        host, port = cluster.url.split("//", 1)[1].split(":")
        job = {
            "host": host, "port": int(port), "slug": SLUG, "volunteers": volunteers, "controls": controls,
            "warmup": args.warmup, "duration": args.duration, "server_pid": cluster.server_pids()[0],
            "seed": args.seed,
        }
        done = subprocess.run(
            [sys.executable, os.path.join(HERE, "bench_judging_client.py")],
            input=json.dumps(job), capture_output=True, text=True, timeout=args.warmup + args.duration + 300,
        )
        ended = time.time()
        if done.returncode:
            raise RuntimeError(f"client failed:\n{done.stderr[-3000:]}")
        result = summarise(json.loads(done.stdout))
        answered_after, collected = stored_judgments(cluster)
        # Ranking delay: until every listener has seen the final count.
        latest = {}
        deadline = time.time() + 30
        while time.time() < deadline:
            got = listeners.command(cmd="collect")
            for number, rankings in enumerate(got["rankings"]):
                for value, at in rankings:
                    if value == collected and number not in latest:
                        latest[number] = at
            if len(latest) >= up["connected"]:
                break
            time.sleep(0.2)
        delays = sorted(max(0.0, at - ended) for at in latest.values())
    finally:
        listeners.close()
    stored = answered_after - answered_before
    return {
        "volunteers": volunteers_count,
        "sockets": up["connected"],
        "per_second": result["per_second"],
        "p50": result["p50"], "p95": result["p95"], "p99": result["p99"],
        "errors": sum(n for s, n in result["statuses"].items() if s.startswith("http-") or s == "connection-error"),
        "statuses": result["statuses"],
        "acknowledged": result["acknowledged"],
        "stored": stored,
        "ranking_delay_s": delays[-1] if delays and len(latest) >= up["connected"] else None,
        "ranking_listeners_current": len(latest),
        "server_cpu_percent": result["server_cpu_percent"],
        "machine_cpu_percent": result["machine_cpu_percent"],
    }


def server_errors(cluster, most=5):
    """The last lines of the servers' tracebacks (what the errors were)."""
    found = []
    for name, text in cluster.logs(10**6).items():
        lines = text.splitlines()
        ends = [n for n, line in enumerate(lines) if line and not line.startswith((" ", "Traceback"))
                and n > 0 and lines[n - 1].startswith(" ")]
        found += [f"{name}: {lines[n]}" for n in ends[-most:]]
    return "\n".join(found) or "no traceback in the server logs"


SERVICES = ("postgres", "redis-server")


def _threads_of(names):
    """Thread ids of the running processes with these command names."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as comm:
                if comm.read().strip() not in names:
                    continue
            yield from (int(tid) for tid in os.listdir(f"/proc/{pid}/task"))
        except OSError:
            continue  # ended meanwhile


@contextlib.contextmanager
def pinned(cpus):
    """This process (and so everything it starts) and the running PostgreSQL
    and Redis on ``cpus``; their own CPUs back afterwards. None: no change."""
    if not cpus:
        yield
        return
    before = {}
    for tid in _threads_of(SERVICES):
        with contextlib.suppress(OSError):
            before[tid] = os.sched_getaffinity(tid)
            os.sched_setaffinity(tid, cpus)
    own = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, own)
        for tid, mask in before.items():
            with contextlib.suppress(OSError):
                os.sched_setaffinity(tid, mask)


def run_setup(name, args, database_url=None, redis_url=None, processes=1, nginx=False):
    workdir = tempfile.mkdtemp(prefix=f"bozka-load-{name}-")
    cluster = Cluster(
        database_url, redis_url, processes=processes, nginx=nginx, workdir=workdir,
        env={"RATELIMIT_ENABLED": "false", "BOZKA_ACCESS_LOG": "/dev/null"},
    )
    rows = []
    try:
        cluster.start()
        campaign = write_campaign(os.path.join(workdir, "campaign"), args.sentences)
        cluster.flask("campaign", "import", campaign)
        for number, count in enumerate(args.volunteers):
            log(f"{name}: {count} volunteers")
            rows.append({"setup": name, **run_level(cluster, count, args, f"{name[0]}{number}x")})
            log(json.dumps(rows[-1]))
            if rows[-1]["errors"]:
                log(server_errors(cluster))
    finally:
        cluster.cleanup()
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--volunteers", type=int, nargs="+", default=[32, 256])
    parser.add_argument("--duration", type=float, default=30.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--sentences", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", choices=["sqlite", "postgresql"])
    parser.add_argument("--database-url", default=os.environ.get("BOZKA_TEST_DATABASE_URL"))
    parser.add_argument("--redis-url", default=os.environ.get("BOZKA_TEST_REDIS_URL"))
    parser.add_argument("--cpus", type=int, nargs="+", help="run everything on these CPUs (numbers from 0)")
    args = parser.parse_args(argv)
    with pinned(args.cpus):
        rows = run_all(parser, args)
    report(rows)


def run_all(parser, args):
    rows = []
    if args.only != "postgresql":
        rows += run_setup("sqlite-1-process", args)
    if args.only != "sqlite":
        if not (args.database_url and args.redis_url):
            parser.error("(b) needs PostgreSQL and Redis: eval \"$(bash scripts/services.sh start)\" first")
        import redis

        redis.Redis.from_url(args.redis_url).flushdb()
        os.environ["BOZKA_TEST_DATABASE_URL"] = args.database_url
        with scratch_database(tempfile.gettempdir(), "bozka_load") as url:  # created next to it, dropped after
            rows += run_setup("postgresql-2-processes-nginx", args, url, args.redis_url, 2, True)
    return rows


def report(rows):
    print(f"{'setup':30} {'vol':>4} {'judg/s':>7} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} "
          f"{'errors':>6} {'ack':>6} {'stored':>6} {'rank s':>6} {'cpu %':>6}")
    for row in rows:
        delay = "n/a" if row["ranking_delay_s"] is None else f"{row['ranking_delay_s']:.2f}"
        print(f"{row['setup']:30} {row['volunteers']:>4} {row['per_second']:>7.1f} {row['p50']:>7.1f} "
              f"{row['p95']:>7.1f} {row['p99']:>7.1f} {row['errors']:>6} {row['acknowledged']:>6} "
              f"{row['stored']:>6} {delay:>6} {row['machine_cpu_percent']:>6.0f}")
    for row in rows:
        if row["acknowledged"] != row["stored"]:
            print(f"MISMATCH {row['setup']} at {row['volunteers']}: acknowledged {row['acknowledged']}, "
                  f"stored {row['stored']}")


if __name__ == "__main__":
    main()
