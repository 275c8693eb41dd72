"""The served walk (issue 27): every page, action and download of the three
audiences, on the site as ``make run`` serves it (gunicorn, one gevent
worker; SQLite, or PostgreSQL in the suite's second pass) and, in the
PostgreSQL pass, on two processes behind nginx with Redis as ``make test``
starts them. The walk itself is tests/e2e/walk.py.

Served means no test holds an application context while the site answers:
a streamed download, an ``after_request`` hook or a background greenlet
meets exactly what a person's request meets. The walk then checks its own
coverage against the application's URL map: a page or action added later
and never walked fails here, and so does any answer of 500 or more.
"""
import glob
import os
import sys

import pytest

from e2e.conftest import ROOT, served_site
from e2e.walk import PAIRWISE, Site, walk
from databases import on_postgresql, scratch_database
from helpers import quiet_demo_commands

sys.path.insert(0, os.path.join(ROOT, "scripts"))

# The pairwise demo stays a draft: the walk's organiser sets its end,
# publishes its raffle's commitment and opens it on the dashboard.
WALKED = ("--draft", PAIRWISE)


def endpoints_of_the_site():
    """{endpoint: adapter} of every page and action, from the application itself."""
    from app.factory import create_app

    return create_app({"SQLALCHEMY_DATABASE_URI": "sqlite://"}).url_map


def check_coverage(visits):
    url_map = endpoints_of_the_site()
    adapter = url_map.bind("localhost")
    failed = sorted({(m, p, s) for m, p, s in visits.seen if s >= 500})
    assert not failed, f"the served site failed: {failed}"
    walked = set()
    for method, path, status in visits.seen:
        if path.startswith("/static/") or path.startswith("/socket.io/"):
            continue
        try:
            endpoint, _args = adapter.match(path, method=method)
        except Exception:  # a 404 the walk asked for, or a method the page does not take
            continue
        walked.add(endpoint)
    every = {rule.endpoint for rule in url_map.iter_rules() if rule.endpoint != "static"}
    assert every - walked == set(), f"never walked on the served site: {sorted(every - walked)}"


def _output_of(paths):
    def read():
        text = []
        for path in paths():
            with open(path, encoding="utf-8", errors="replace") as handle:
                text.append(handle.read())
        return "\n".join(text)
    return read


@pytest.mark.skipif(on_postgresql(), reason="make run serves SQLite; the PostgreSQL pass walks the two-process setup")
def test_the_walk_as_make_run_serves_it(browser, tmp_path, screenshots):
    import subprocess

    from e2e.conftest import flask_command

    with served_site("bozka-walk-", demo=WALKED) as (url, env, log_path):
        def cli(*args):
            done = subprocess.run(flask_command(*args), cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=60, stdin=subprocess.DEVNULL)
            assert done.returncode == 0, f"flask {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
            return done.stdout

        database = env.get("DATABASE_URL") or "sqlite:///" + os.path.join(env["BOZKA_INSTANCE"], "bozka.sqlite3")
        site = Site(url, cli, database, _output_of(lambda: [log_path]))
        check_coverage(walk(browser, site, tmp_path, screenshots))


@pytest.mark.skipif(not on_postgresql(), reason="the PostgreSQL pass of make test starts PostgreSQL, Redis and nginx")
def test_the_walk_on_two_processes_behind_nginx(browser, tmp_path, screenshots):
    from multiprocess.conftest import required_services
    from cluster import Cluster

    _database, redis_url = required_services()
    with scratch_database(tmp_path, "bozka_walk") as database:
        cluster = Cluster(database, redis_url, processes=2, nginx=True, workdir=str(tmp_path / "cluster"))
        try:
            cluster.start()
            cluster.flask("demo", *WALKED)
            for args in quiet_demo_commands():
                cluster.flask(*args)
            site = Site(cluster.url, cluster.flask, database,
                        _output_of(lambda: sorted(glob.glob(os.path.join(cluster.workdir, "server-*.log")))))
            check_coverage(walk(browser, site, tmp_path, screenshots))
        finally:
            cluster.stop()
