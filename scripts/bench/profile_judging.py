"""Server CPU per judgment, in-process (a companion of bench_judging.py).

    .venv/bin/python scripts/bench/profile_judging.py [--judgments 2000] [--volunteers 8]
        [--profile cprofile|none] [--top 40]

Builds a fresh SQLite database (the migrations, as ``make run`` does) with a
generated campaign (bench_judging.write_campaign), registers volunteers
through the real pages with the default settings (rate limits on: each
volunteer comes from its own address), then has them take turns posting
``POST /c/<slug>/api/judgment`` through the Flask test client, exactly as
bench_judging_client.py does over HTTP (JSON body, CSRF token in a header,
controls answered correctly). Prints the process CPU milliseconds per
judgment (the WSGI request path without gunicorn and the network) and,
with ``--profile cprofile``, the functions where that time goes.

Prints figures; asserts nothing about speed.
"""
import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import random
import re
import secrets
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, ROOT]

SLUG = "test"
PASSWORD = "correct horse 1"


def csrf_from(html):
    match = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', html) or re.search(
        r'value="([^"]+)"[^>]*name="csrf_token"', html
    )
    if match is None:
        raise RuntimeError("no csrf_token input on the page")
    return match.group(1)


def setup(workdir, sentences, volunteers, database_url=None):
    os.environ["BOZKA_INSTANCE"] = os.path.join(workdir, "instance")
    if database_url:
        os.environ["DATABASE_URL"] = database_url
    else:
        os.environ.pop("DATABASE_URL", None)
    os.environ.pop("BOZKA_RANDOM_SEED", None)
    os.environ.setdefault("SECRET_KEY", secrets.token_hex(16))
    from flask_migrate import upgrade

    from app import create_app
    from app.extensions import db
    from app.services.importer import create_campaign, read_campaign
    from sqlalchemy import text
    from bench_judging import write_campaign

    app = create_app({"BOZKA_REALTIME_TICKER": False})
    with app.app_context():
        upgrade()
        create_campaign(read_campaign(write_campaign(os.path.join(workdir, "campaign"), sentences)))
        db.session.commit()
        db.session.remove()
        controls = dict(db.session.execute(text("SELECT source, better FROM controls")).all())
        db.session.remove()

    clients = []
    for number in range(1, volunteers + 1):
        name = f"prof{number:03d}"
        client = app.test_client()
        client.environ_base["REMOTE_ADDR"] = f"10.1.{number // 250}.{number % 250 + 1}"
        page = client.get(f"/c/{SLUG}/register")
        response = client.post(
            f"/c/{SLUG}/register",
            data={
                "csrf_token": csrf_from(page.get_data(as_text=True)),
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
        )
        if response.status_code != 302:
            raise RuntimeError(f"registering {name}: HTTP {response.status_code}")
        page = client.get(f"/c/{SLUG}/welcome")
        headers = {"X-CSRFToken": csrf_from(page.get_data(as_text=True)), "Accept": "application/json"}
        item = client.get(f"/c/{SLUG}/api/item").get_json()["item"]
        clients.append({"client": client, "headers": headers, "item": item})
    return app, controls, clients


def judge(volunteer, controls, rng):
    item = volunteer["item"]
    better = controls.get(item["source"])
    if better is not None:
        choice = "left" if item["left"] == better else "right"
    else:
        choice = rng.choices(("left", "right", "equal"), (45, 45, 10))[0]
    response = volunteer["client"].post(
        f"/c/{SLUG}/api/judgment",
        data=json.dumps({"token": item["token"], "choice": choice}),
        content_type="application/json",
        headers=volunteer["headers"],
    )
    if response.status_code != 200:
        raise RuntimeError(f"HTTP {response.status_code}: {response.get_data(as_text=True)[:300]}")
    payload = response.get_json()
    volunteer["item"] = payload["item"]
    return payload["status"]


def run(clients, controls, count, seed=1):
    rng = random.Random(seed)
    statuses = {}
    cpu0, wall0 = time.process_time(), time.perf_counter()
    done = 0
    while done < count:
        for volunteer in clients:
            if volunteer["item"] is None or done >= count:
                continue
            status = judge(volunteer, controls, rng)
            statuses[status] = statuses.get(status, 0) + 1
            done += 1
        if all(v["item"] is None for v in clients):
            break
    return done, time.process_time() - cpu0, time.perf_counter() - wall0, statuses


def show_sql(app, clients, controls, count):
    """Print each statement the database runs for ``count`` judgments."""
    from sqlalchemy import event

    from app.extensions import db

    with app.app_context():
        engine = db.engine
    statements = []

    def before(conn, cursor, statement, parameters, context, executemany):
        statements.append(" ".join(statement.split())[:200])

    event.listen(engine, "before_cursor_execute", before)
    try:
        for number in range(count):
            statements.clear()
            status = judge(clients[number % len(clients)], controls, random.Random(number))
            print(f"judgment {number + 1} ({status}): {len(statements)} statements")
            for statement in statements:
                print(f"    {statement[:160]}")
    finally:
        event.remove(engine, "before_cursor_execute", before)


@contextlib.contextmanager
def database(base_url):
    """None (SQLite in the instance folder), or a scratch PostgreSQL database."""
    if not base_url:
        yield None
        return
    os.environ["BOZKA_TEST_DATABASE_URL"] = base_url
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from databases import scratch_database

    with scratch_database(tempfile.gettempdir(), "bozka_profile") as url:
        yield url


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judgments", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--batch", type=int, default=200, help="judgments per timed batch")
    parser.add_argument("--volunteers", type=int, default=8)
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--profile", choices=("cprofile", "none"), default="none")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--sort", default="cumulative")
    parser.add_argument("--database-url", help="a scratch database is made next to this PostgreSQL database "
                        "(default: a new SQLite file)")
    parser.add_argument("--sql", type=int, default=0, help="print the SQL of this many judgments first")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bozka-profile-") as workdir, database(args.database_url) as url:
        app, controls, clients = setup(workdir, args.sentences, args.volunteers, url)
        run(clients, controls, args.warmup)
        if args.sql:
            show_sql(app, clients, controls, args.sql)
        profiler = cProfile.Profile(time.process_time) if args.profile == "cprofile" else None
        if profiler:
            profiler.enable()
        # In batches: on a shared machine the quickest batch is the least disturbed.
        batches, done, cpu, wall, statuses = [], 0, 0.0, 0.0, {}
        while done < args.judgments:
            n, c, w, st = run(clients, controls, min(args.batch, args.judgments - done), seed=2 + len(batches))
            if not n:
                break
            batches.append(1000 * c / n)
            done, cpu, wall = done + n, cpu + c, wall + w
            for key, value in st.items():
                statuses[key] = statuses.get(key, 0) + value
        if profiler:
            profiler.disable()
        batches.sort()
        print(f"{done} judgments by {len(clients)} volunteers through the Flask test client "
              f"(POST /c/{SLUG}/api/judgment): {1000 * cpu / done:.2f} ms CPU per judgment "
              f"(batches of {args.batch}: best {batches[0]:.2f}, median {batches[len(batches) // 2]:.2f}), "
              f"{1000 * wall / done:.2f} ms wall; statuses {statuses}"
              + (" (under cProfile: slower than without)" if profiler else ""))
        if profiler:
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).strip_dirs().sort_stats(args.sort).print_stats(args.top)
            print(out.getvalue())


if __name__ == "__main__":
    main()
