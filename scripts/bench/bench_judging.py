"""Judging benchmark (issue 2): simulated volunteers over HTTP on loopback.

    .venv/bin/python scripts/bench/bench_judging.py        (or: make bench)

Prints figures; asserts nothing about speed. In one run it:

1. Serves Bozka as ``make run`` does (gunicorn, one gevent worker) on a
   fresh SQLite database (``flask db upgrade``) with a generated campaign
   (``flask campaign import``: 2,000 sentences, 5 systems), registers
   volunteers through the real pages, and measures submit-and-next (one
   ``POST /c/<slug>/api/judgment`` per judgment, whose response carries the
   next item) at 1, 8 and 32 concurrent volunteers: judgments per second,
   p50/p95/p99 latency, and the CPU of the server, the client and the machine.
2. Serves the same way a minimal Flask app (bench_judging_ceiling.py) that
   inserts one row and returns the next item from one indexed query: the
   ceiling for this machine, measured at the same levels, taking turns with
   Bozka. Three ways to write it (``--ceiling``): straight to the sqlite3
   module, the same SQL through Flask-SQLAlchemy, and mapped objects through
   Flask-SQLAlchemy. The issue's target is half of the last one
   (``ISSUE_CEILING``): it is the one that reproduces the issue's own figures
   for this machine (600-900/s with a gevent worker, 350-430 with a threaded
   one; docs/benchmarks.md, seventh round). Bozka's share of the other two
   is printed beside it.
3. Checks that judgments acknowledged == items answered in the database.
4. Times the choice of the next item (``assignment.serve_next``) in-process
   at 500 and at 50,000 sentences x 5 systems, and prints SQLite's query
   plan of the next-sentence query.

The load comes from a separate process (bench_judging_client.py: gevent and
keep-alive http.client connections), on the same 2-core machine.
"""
import argparse
import json
import os
import re
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, ROOT]

SLUG = "test"
PASSWORD = "correct horse 1"
TARGET_RATE = 350  # judgments/s at 32 volunteers (issue 2)
TARGET_P95_MS = 100
CEILINGS = ("sqlite3", "flask-sqlalchemy", "flask-sqlalchemy-orm")
ISSUE_CEILING = "flask-sqlalchemy-orm"
TARGET_RATIO = 1.5


def log(message):
    print(message, file=sys.stderr, flush=True)


def bin_path(name):
    candidate = os.path.join(os.path.dirname(sys.executable), name)
    return candidate if os.path.exists(candidate) else shutil.which(name) or name


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def machine_busy(seconds=1.0):
    """Share of the whole machine busy for ``seconds`` (before we start)."""
    def read():
        with open("/proc/stat") as handle:
            values = [int(v) for v in handle.readline().split()[1:]]
        return sum(values) - values[3] - values[4], sum(values)

    busy0, total0 = read()
    time.sleep(seconds)
    busy1, total1 = read()
    return 100 * (busy1 - busy0) / max(1, total1 - total0)


def make_run_option(pattern, default):
    """An option of the gunicorn command in the Makefile's ``run`` target."""
    try:
        with open(os.path.join(ROOT, "Makefile")) as handle:
            makefile = handle.read()
    except OSError:
        return default
    target = re.search(r"^run:.*\n((?:\t.*\n?)+)", makefile, re.MULTILINE)
    if target:
        match = re.search(pattern + r"[ =](\S+)", target.group(1))
        if match:
            return match.group(1)
    return default


def make_run_worker_class(default="gevent"):
    """The gunicorn worker class of the Makefile's ``run`` target."""
    return make_run_option(r"(?:--worker-class|-k)", default)


def make_run_worker_connections(default=None):
    """``--worker-connections`` of the Makefile's ``run`` target, if given."""
    value = make_run_option(r"--worker-connections", default)
    return int(value) if value is not None else None


class Server:
    """gunicorn with one worker process, as ``make run`` starts it."""

    def __init__(self, name, app, env, cwd, logdir, worker_class="gevent"):
        self.name = name
        self.port = free_port()
        self.command = [
            bin_path("gunicorn"), "--worker-class", worker_class, "--workers", "1",
            "--bind", f"127.0.0.1:{self.port}", "--access-logfile", "-", app,
        ]
        connections = make_run_worker_connections()
        if connections:
            self.command[-1:-1] = ["--worker-connections", str(connections)]
        self.log_path = os.path.join(logdir, f"{name}-gunicorn.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            self.command, cwd=cwd, env=env, stdout=self.log, stderr=subprocess.STDOUT
        )
        self.worker_pid = None

    def wait_ready(self, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} server exited; see {self.log_path}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    pass
            except OSError:
                time.sleep(0.1)
                continue
            self.worker_pid = self._worker()
            if self.worker_pid:
                return
            time.sleep(0.1)
        raise RuntimeError(f"{self.name} server did not start; see {self.log_path}")

    def _worker(self):
        pid = self.process.pid
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as handle:
                children = handle.read().split()
        except OSError:
            return None
        return int(children[0]) if children else None

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


def run_cli(args, env):
    command = [bin_path("flask"), "--app", "wsgi", *args]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout.strip()


def csrf_from(html):
    match = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', html) or re.search(
        r'value="([^"]+)"[^>]*name="csrf_token"', html
    )
    if match is None:
        raise RuntimeError("no csrf_token input on the page")
    return match.group(1)


def register_volunteers(base, count, prefix):
    """Register through the real pages; return [{name, cookie, csrf}]."""
    import requests

    volunteers = []
    for number in range(1, count + 1):
        name = f"{prefix}{number:03d}"
        session = requests.Session()
        page = session.get(f"{base}/c/{SLUG}/register", timeout=30)
        page.raise_for_status()
        response = session.post(
            f"{base}/c/{SLUG}/register",
            data={
                "csrf_token": csrf_from(page.text),
                "username": name,
                "email": f"{name}@bench.example.org",
                "password": PASSWORD,
                "password2": PASSWORD,
                "age_group": "26-35",
                "studies_level": "university",
                "studies_field": "language",
                "source_level": "C1-C2",
                "target_level": "C1-C2",
                "consent": "y",
            },
            allow_redirects=False,
            timeout=30,
        )
        if response.status_code != 302:
            raise RuntimeError(f"registering {name}: HTTP {response.status_code} (rate limit? form change?)")
        # The API wants the CSRF token in a header: take it from a page.
        page = session.get(f"{base}/c/{SLUG}/welcome", timeout=30)
        page.raise_for_status()
        cookie = session.cookies.get("session")
        volunteers.append({"name": name, "cookie": f"session={cookie}", "csrf": csrf_from(page.text)})
    return volunteers


def drive(server, volunteers, controls, warmup, duration, seed, max_per_volunteer=10**9, trace=None):
    """Run the load generator against a server. With ``trace`` (a folder), every
    judgment's volunteer, send time, latency and status go to a JSON file there."""
    job = {
        "trace": bool(trace),
        "max_per_volunteer": max_per_volunteer,
        "host": "127.0.0.1",
        "port": server.port,
        "slug": SLUG,
        "volunteers": volunteers,
        "controls": controls,
        "warmup": warmup,
        "duration": duration,
        "server_pid": server.worker_pid,
        "seed": seed,
    }
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, "bench_judging_client.py")],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        timeout=warmup + duration + 180,
    )
    if done.returncode:
        raise RuntimeError(f"client failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout)
    if trace:
        os.makedirs(trace, exist_ok=True)
        with open(os.path.join(trace, f"{server.name}-{len(volunteers)}.json"), "w") as handle:
            json.dump(result.pop("trace"), handle)
    return result


def percentile(ordered, p):
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def summarise(result):
    latencies = result.pop("latencies_ms")
    result.update(
        p50=percentile(latencies, 50),
        p95=percentile(latencies, 95),
        p99=percentile(latencies, 99),
        max=latencies[-1] if latencies else float("nan"),
        mean=sum(latencies) / len(latencies) if latencies else float("nan"),
    )
    return result


def write_campaign(folder, sentences, systems=("A", "B", "C", "D", "E"), controls=20):
    """A valid campaign folder (docs/campaign-format.md) with generated texts."""
    os.makedirs(os.path.join(folder, "systems"), exist_ok=True)
    with open(os.path.join(folder, "source.txt"), "w") as handle:
        handle.write("".join(f"Source sentence number {i}.\n" for i in range(1, sentences + 1)))
    for name in systems:
        with open(os.path.join(folder, "systems", f"{name}.txt"), "w") as handle:
            handle.write("".join(f"Output {i} of {name}.\n" for i in range(1, sentences + 1)))
    with open(os.path.join(folder, "controls.tsv"), "w") as handle:
        handle.write("source\tbetter\tworse\n")
        handle.write("".join(f"Control {i}.\tGood {i}.\tBad {i}.\n" for i in range(1, controls + 1)))
    with open(os.path.join(folder, "campaign.toml"), "w") as handle:
        handle.write(
            f'slug = "{SLUG}"\nname = "Benchmark"\nsource_language = "en"\ntarget_language = "eu"\n'
            'source = "source.txt"\ncontrols = "controls.tsv"\n[systems]\n'
            + "".join(f'{name} = "systems/{name}.txt"\n' for name in systems)
        )
    return folder


def http_benchmark(args, workdir):
    from bench_judging_ceiling import answered as ceiling_answered, prepare as ceiling_prepare

    instance = os.path.join(workdir, "instance")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "BOZKA_RANDOM_SEED")}
    env.update(BOZKA_INSTANCE=instance, SECRET_KEY=secrets.token_hex(16), PYTHONPATH=ROOT)
    log("setting up: flask db upgrade; generating and importing the campaign ...")
    run_cli(["db", "upgrade"], env)
    folder = write_campaign(
        os.path.join(workdir, "campaign"), sentences=args.sentences, systems=("A", "B", "C", "D", "E"), controls=20
    )
    imported = run_cli(["campaign", "import", folder], env)
    log(f"  {imported}")
    database = os.path.join(instance, "bozka.sqlite3")
    with sqlite3.connect(database) as connection:
        controls = dict(connection.execute("SELECT source, better FROM controls"))

    ceiling_dbs = {}
    for stack in args.ceiling:
        ceiling_dbs[stack] = os.path.join(workdir, f"ceiling-{stack}.sqlite3")
        ceiling_prepare(ceiling_dbs[stack], args.sentences)

    # Volunteers register through the real pages, on a setup server with
    # the rate limits off (all of them come from one address); the server
    # measured afterwards runs with the default settings.
    setup = Server("setup", "wsgi:app", dict(env, RATELIMIT_ENABLED="0"), ROOT, workdir, args.worker_class)
    try:
        setup.wait_ready()
        total = sum(args.levels)
        log(f"registering {total} volunteers through /c/{SLUG}/register ...")
        started = time.time()
        volunteers = register_volunteers(f"http://127.0.0.1:{setup.port}", total, "bench")
        log(f"  done in {time.time() - started:.1f} s")
    finally:
        setup.stop()

    servers = {}
    try:
        servers["bozka"] = Server("bozka", "wsgi:app", env, ROOT, workdir, args.worker_class)
        for stack, ceiling_db in ceiling_dbs.items():
            servers[f"ceiling {stack}"] = Server(
                f"ceiling-{stack}", "bench_judging_ceiling:app",
                dict(env, BENCH_CEILING_DB=ceiling_db, BENCH_CEILING_STACK=stack), HERE, workdir, args.worker_class,
            )
        for server in servers.values():
            server.wait_ready()

        results = {name: {} for name in servers}
        # One fresh set of volunteers per level: nobody runs out of sentences.
        # Bozka and the ceilings take turns, so that load from elsewhere on
        # the machine affects them alike.
        offset = 0
        for level in args.levels:
            group = volunteers[offset:offset + level]
            offset += level
            log(f"bozka: {level} volunteer(s), {args.warmup:g} s warm-up + {args.duration:g} s ...")
            # A volunteer judges each sentence once: stop the level before
            # anyone runs out (only if the server is very fast).
            results["bozka"][level] = summarise(
                drive(servers["bozka"], group, controls, args.warmup, args.duration, seed=level,
                      max_per_volunteer=args.sentences, trace=args.trace)
            )
            group = [{"name": f"c{i}", "cookie": "x=1", "csrf": "x"} for i in range(level)]
            for stack in ceiling_dbs:
                log(f"ceiling {stack}: {level} volunteer(s), {args.warmup:g} s warm-up + {args.duration:g} s ...")
                results[f"ceiling {stack}"][level] = summarise(
                    drive(servers[f"ceiling {stack}"], group, {}, args.warmup, args.duration, seed=level,
                          trace=args.trace)
                )
    finally:
        for server in servers.values():
            server.stop()

    with sqlite3.connect(database) as connection:
        answered = connection.execute("SELECT count(*) FROM items WHERE answered_at IS NOT NULL").fetchone()[0]
        answered_tests = connection.execute(
            "SELECT count(*) FROM items WHERE answered_at IS NOT NULL AND sentence_id IS NOT NULL "
            "AND discarded_at IS NULL"
        ).fetchone()[0]
        collected = connection.execute("SELECT collected_judgments FROM campaigns WHERE slug = ?", (SLUG,)).fetchone()[0]
        slot_sum = connection.execute("SELECT coalesce(sum(collected), 0) FROM slots").fetchone()[0]
        dismissed = connection.execute(
            "SELECT count(*) FROM participations WHERE dismissed_at IS NOT NULL"
        ).fetchone()[0]
    acknowledged = sum(r["acknowledged"] for r in results["bozka"].values())
    ceilings = {
        stack: (sum(r["acknowledged"] for r in results[f"ceiling {stack}"].values()), ceiling_answered(db_path))
        for stack, db_path in ceiling_dbs.items()
    }
    results["check"] = {
        "acknowledged": acknowledged,
        "answered_in_db": answered,
        "answered_tests": answered_tests,
        "campaign_collected": collected,
        "slots_collected": slot_sum,
        "dismissed": dismissed,
        "ceilings_acknowledged_and_rows": ceilings,
    }
    results["commands"] = {name: " ".join(s.command) for name, s in servers.items()}
    return results


def next_item_benchmark(args, workdir):
    os.environ["BOZKA_INSTANCE"] = os.path.join(workdir, "instance-next")
    os.environ.setdefault("SECRET_KEY", secrets.token_hex(16))
    import bench_judging_nextitem as nextitem

    built = {}
    for size in args.next_sizes:
        path = os.path.join(workdir, f"next-{size}.sqlite3")
        log(f"next item: building {size:,} sentences x 5 systems ...")
        started = time.time()
        built[size] = nextitem.build(path, size)
        log(f"  built in {time.time() - started:.1f} s: {built[size]['stats']}")
    log("next item: timing serve_next ...")
    return nextitem.measure_all(
        {size: os.path.join(workdir, f"next-{size}.sqlite3") for size in args.next_sizes},
        built,
        volunteers=args.next_volunteers,
        rounds=args.next_rounds,
    )


def fmt(value, digits=0):
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def report(args, http, nxt, started, busy_before):
    lines = []
    out = lines.append
    out("")
    out(f"Judging benchmark (issue 2): {os.cpu_count()} cores; machine busy {busy_before:.0f}% before the run")
    if http:
        out("")
        out(f"Submit-and-next over HTTP (one POST per judgment; gunicorn, one worker of class "
            f"{args.worker_class}; SQLite; {args.sentences:,} sentences x 5 systems)")
        out("| server | volunteers | judgments/s | p50 ms | p95 ms | p99 ms | max ms | server CPU | "
            "server CPU ms/judgment | client CPU | machine busy |")
        out("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        servers = [("bozka", "Bozka")] + [
            (f"ceiling {stack}", f"ceiling, {stack} (1 insert + 1 indexed select)") for stack in args.ceiling
        ]
        for name, label in servers:
            for level, r in http[name].items():
                per_judgment = (
                    10 * r["server_cpu_percent"] / r["per_second"]
                    if r["server_cpu_percent"] is not None and r["per_second"] else None
                )
                early = " (ended early: sentence budget)" if r.get("ended_early") else ""
                out(
                    f"| {label} | {level}{early} | {fmt(r['per_second'])} | {fmt(r['p50'], 1)} | {fmt(r['p95'], 1)} | "
                    f"{fmt(r['p99'], 1)} | {fmt(r['max'], 1)} | {fmt(r['server_cpu_percent'])}% | "
                    f"{fmt(per_judgment, 2)} | {fmt(r['client_cpu_percent'])}% | {fmt(r['machine_cpu_percent'])}% |"
                )
        statuses = {level: r["statuses"] for level, r in http["bozka"].items()}
        out("")
        out(f"Bozka responses by status: {statuses}")
        errors = [e for name, _label in servers for r in http[name].values() for e in r["errors"]]
        if errors:
            out(f"Errors (first few): {errors[:5]}")
        c = http["check"]
        consistent = c["acknowledged"] == c["answered_in_db"]
        out(
            f"Check: judgments acknowledged {c['acknowledged']:,} == items answered in the database "
            f"{c['answered_in_db']:,}: {'yes' if consistent else 'NO'}; test judgments {c['answered_tests']:,}, "
            f"campaign counter {c['campaign_collected']:,}, sum of slot counters {c['slots_collected']:,}; "
            f"volunteers dismissed: {c['dismissed']}; "
            + "; ".join(
                f"ceiling {stack}: rows {rows:,} == acknowledged {acked:,}: {'yes' if rows == acked else 'NO'}"
                for stack, (acked, rows) in c["ceilings_acknowledged_and_rows"].items()
            )
        )
    if nxt:
        out("")
        out("Next-item choice in-process (assignment.serve_next of a test item, then rollback), microseconds")
        out("| sentences x 5 systems | open (partly filled) | judgments | calls | mean | p50 | p95 | p99 |")
        out("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for size, r in nxt["sizes"].items():
            s, t = r["stats"], r["serve_next"]
            out(
                f"| {size:,} | {s['open_sentences']:,} ({s['partly_filled']:,}) | {s['judgments']:,} | {t['n']} | "
                f"{fmt(t['mean_us'])} | {fmt(t['p50_us'])} | {fmt(t['p95_us'])} | {fmt(t['p99_us'])} |"
            )
        lengths = list(next(iter(nxt["sizes"].values()))["history"])
        out("")
        out("The next-sentence query alone (the captured SQL run with the sqlite3 module), microseconds:")
        out("| sentences x 5 systems | calls | mean | p50 | p95 | p99 |")
        out("|---:|---:|---:|---:|---:|---:|")
        for size, r in nxt["sizes"].items():
            q = r["query"]["pool"]
            out(f"| {size:,} | {q['n']} | {fmt(q['mean_us'], 1)} | {fmt(q['p50_us'], 1)} | "
                f"{fmt(q['p95_us'], 1)} | {fmt(q['p99_us'], 1)} |")
        out("")
        out("A volunteer who has judged the h fullest open sentences, all still open (as in a campaign with "
            "fewer volunteers than judgments per sentence): p50 microseconds, serve_next / query alone")
        out("| sentences x 5 systems | " + " | ".join(f"h = {h}" for h in lengths) + " |")
        out("|---:|" + "---:|" * len(lengths))
        for size, r in nxt["sizes"].items():
            out(f"| {size:,} | " + " | ".join(
                f"{fmt(r['history'][h]['p50_us'])} / {fmt(r['query'][h]['p50_us'], 1)}" for h in lengths
            ) + " |")
        plan = nxt["plan"]
        out("")
        out("EXPLAIN QUERY PLAN of the next-sentence query (largest database):")
        out(f"  {plan['sql'] if plan else '(not captured)'}")
        for line in plan["plan"] if plan else ():
            out(f"    {line}")
        if nxt["scans"]:
            out("Full scans in serve_next's statements:")
            for sql, line in nxt["scans"]:
                out(f"    {line}   <- {sql[:120]}")
        else:
            out("No statement of serve_next scans a whole table (every plan line is a SEARCH).")
    out("")
    out("Targets")
    verdicts = []
    if http:
        top = max(args.levels)
        b = http["bozka"][top]
        shares = ", ".join(
            f"{stack} {fmt(http[f'ceiling {stack}'][top]['per_second'])}/s "
            f"(Bozka {b['per_second'] / http[f'ceiling {stack}'][top]['per_second']:.2f} of it)"
            for stack in args.ceiling
        )
        out(f"- {top} volunteers: Bozka {fmt(b['per_second'])} judgments/s; ceilings in the same run: {shares}")
        if ISSUE_CEILING in args.ceiling:
            half = http[f"ceiling {ISSUE_CEILING}"][top]["per_second"] / 2
            ok_rate = b["per_second"] >= half and b["per_second"] >= TARGET_RATE
            verdicts.append(ok_rate)
            out(
                f"- {top} volunteers: {fmt(b['per_second'])} judgments/s; half the issue's ceiling "
                f"({ISSUE_CEILING}) is {fmt(half)}, the target at least {TARGET_RATE} and half of it: "
                f"{'MET' if ok_rate else 'MISSED'}"
            )
        ok_p95 = b["p95"] < TARGET_P95_MS
        verdicts.append(ok_p95)
        out(f"- {top} volunteers: p95 {fmt(b['p95'], 1)} ms, target under {TARGET_P95_MS} ms: {'MET' if ok_p95 else 'MISSED'}")
    if nxt and len(nxt["sizes"]) >= 2:
        ratio = nxt["ratio_p50"]
        ok = ratio <= TARGET_RATIO
        verdicts.append(ok)
        small, large = min(nxt["sizes"]), max(nxt["sizes"])
        q_small = nxt["sizes"][small]["query"]["pool"]["p50_us"]
        q_large = nxt["sizes"][large]["query"]["pool"]["p50_us"]
        out(
            f"- next item at {large:,} vs {small:,} sentences: {ratio:.2f}x (serve_next p50; mean "
            f"{nxt['ratio_mean']:.2f}x; the query alone {q_large / q_small:.2f}x), "
            f"target within {TARGET_RATIO}x: {'MET' if ok else 'MISSED'}"
        )
    out("")
    out(f"Command: {' '.join(['.venv/bin/python', 'scripts/bench/bench_judging.py'] + sys.argv[1:])}"
        f"   (total {time.time() - started:.0f} s)")
    print("\n".join(lines), flush=True)


def _ceilings(text):
    stacks = [stack.strip() for stack in text.split(",") if stack.strip()]
    unknown = [stack for stack in stacks if stack not in CEILINGS]
    if unknown or not stacks:
        raise argparse.ArgumentTypeError(f"choose among {', '.join(CEILINGS)}")
    return list(dict.fromkeys(stacks))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", type=lambda s: [int(x) for x in s.split(",")], default=[1, 8, 32])
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds before measuring, per level")
    parser.add_argument("--duration", type=float, default=8.0, help="seconds measured per level")
    parser.add_argument("--sentences", type=int, default=2000, help="sentences of the HTTP campaign")
    parser.add_argument("--next-sizes", type=lambda s: [int(x) for x in s.split(",")], default=[500, 50000])
    parser.add_argument("--next-volunteers", type=int, default=300)
    parser.add_argument("--next-rounds", type=int, default=3)
    parser.add_argument(
        "--worker-class",
        default=make_run_worker_class(),
        help="gunicorn worker class for both servers (default: the one `make run` uses)",
    )
    parser.add_argument(
        "--ceiling",
        type=_ceilings,
        default=list(CEILINGS),
        help="comma-separated: how each ceiling app reaches SQLite: the sqlite3 module on one connection (the "
             "least there is), the same SQL through Flask-SQLAlchemy's session, mapped objects through it (the "
             f"issue's ceiling) (bench_judging_ceiling.py; default all: {','.join(CEILINGS)})",
    )
    parser.add_argument("--skip-http", action="store_true")
    parser.add_argument("--skip-next-item", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--trace", help="write every judgment (volunteer, sent at, latency ms, status) of each "
                        "server and level to a JSON file in this folder")
    parser.add_argument("--json", help="also write the raw figures to this file")
    args = parser.parse_args(argv)

    started = time.time()
    busy_before = machine_busy()
    if busy_before > 25:
        log(f"warning: the machine is already {busy_before:.0f}% busy: figures will be low and noisy")
    workdir = tempfile.mkdtemp(prefix="bozka-bench-")
    try:
        http = None if args.skip_http else http_benchmark(args, workdir)
        nxt = None if args.skip_next_item else next_item_benchmark(args, workdir)
    finally:
        if args.keep:
            log(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"http": http, "next_item": nxt}, handle, indent=1, default=str)
    report(args, http, nxt, started, busy_before)


if __name__ == "__main__":
    main()
