"""End-to-end fixtures: the real site in a subprocess and headless Chromium.

The site is prepared and served exactly as a person would do it from a shell
(``flask db upgrade``, ``flask demo``, then gunicorn with one gevent
WebSocket worker, the command ``make run`` uses), in a fresh instance folder
on a free loopback port. Chromium is Debian's (``/usr/bin/chromium``);
Playwright never downloads a browser here.
"""
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import pytest
from browser import CHROMIUM, CHROMIUM_ARGS  # noqa: F401 (imported from here by other tests)
from databases import scratch_database
from helpers import quiet_demo_commands
from scripts.bench.harness import make_run_command

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
SCREENSHOTS = os.path.join(ROOT, "tests", "screenshots")
_server = {}  # "log": the running server's log file


def flask_command(*args):
    return [os.path.join(BIN, "flask"), "--app", "wsgi", *args]


def serve_command(port):
    """How the site is served: the gunicorn line of ``make run``, read from
    the Makefile (scripts/bench/harness.py, the one place), on ``port``."""
    return make_run_command(port)


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_until_up(url, process, log_path, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            with open(log_path) as log:
                raise RuntimeError(f"the server exited with {process.returncode}:\n{log.read()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status < 500:
                    return
        except urllib.error.HTTPError as exc:
            if exc.code < 500:
                return
        except OSError:
            pass
        time.sleep(0.2)
    with open(log_path) as log:
        raise RuntimeError(f"the server did not answer {url} within {timeout} s:\n{log.read()}")


@contextlib.contextmanager
def served_site(prefix="bozka-e2e-", demo=()):
    """Serve the site as ``make run`` does, in a fresh instance folder with
    the demo campaigns (``demo``: more arguments of ``flask demo``); yields
    (base URL, environment, log path)."""
    instance = tempfile.mkdtemp(prefix=prefix)
    env = {
        **os.environ,
        "BOZKA_INSTANCE": instance,
        "SECRET_KEY": "e2e-secret-key",
        "FLASK_DEBUG": "0",
        "PYTHONUNBUFFERED": "1",
        # As behind nginx: a test may give its browser its own client address
        # (X-Forwarded-For), so per-address limits such as 5 registrations a
        # minute count each test's volunteers apart. Without the header the
        # address is 127.0.0.1, as before.
        "BOZKA_PROXIES": "1",
        "BOZKA_PUBLIC_FIGURES_SECONDS": "0",  # the walk counts the progress after each answer
    }
    # Never let a developer's own settings leak into the test site.
    for name in ("DATABASE_URL", "MAIL_SERVER", "SOCKETIO_MESSAGE_QUEUE", "BOZKA_RANDOM_SEED"):
        env.pop(name, None)
    # On PostgreSQL when the suite runs there (BOZKA_TEST_DATABASE_URL): a database of its own.
    databases = contextlib.ExitStack()
    database = databases.enter_context(scratch_database(instance, "bozka_e2e"))
    if database.startswith("postgresql"):
        env["DATABASE_URL"] = database
    # The browsers answer faster than anyone reads and often pick one side:
    # the reading floor and the signs that hold a volunteer are off.
    for step in (flask_command("db", "upgrade"), flask_command("demo", *demo),
                 *(flask_command(*args) for args in quiet_demo_commands())):
        done = subprocess.run(step, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"{' '.join(step)} failed:\n{done.stdout}\n{done.stderr}"

    port = _free_port()
    base_url = f"http://127.0.0.1:{port}"
    log_path = os.path.join(instance, "server.log")
    log = open(log_path, "w")
    process = subprocess.Popen(
        serve_command(port), cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        _wait_until_up(base_url + "/", process, log_path)
        yield base_url, env, log_path
    finally:
        # SIGQUIT is gunicorn's quick shutdown: open WebSockets would hold a
        # graceful one (SIGTERM) for its whole 30 s timeout.
        process.send_signal(signal.SIGQUIT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # its own session: the master and its worker
            process.wait()
        log.close()
        databases.close()
        shutil.rmtree(instance, ignore_errors=True)


@pytest.fixture(scope="session")
def live_server():
    """Base URL of the real site, with the demo campaign loaded."""
    with served_site() as (base_url, env, log_path):
        _server.update(env=env, log=log_path)
        try:
            yield base_url
        finally:
            _server.clear()


@pytest.fixture
def site_cli(live_server):
    """Run a ``flask`` command on the live site's own instance (database),
    as its operator would from a shell; returns its standard output."""

    def run(*args):
        done = subprocess.run(flask_command(*args), cwd=ROOT, env=_server["env"], capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, f"flask {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    return run


@pytest.fixture
def site_database(live_server):
    """The live site's database URL: for a test to set up what no page does yet."""
    env = _server["env"]
    return env.get("DATABASE_URL") or "sqlite:///" + os.path.join(env["BOZKA_INSTANCE"], "bozka.sqlite3")


def _read_server_log():
    path = _server.get("log")
    if not path or not os.path.exists(path):
        return ""
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


@pytest.fixture
def server_log(live_server):
    """A function returning everything the server has logged so far."""
    return _read_server_log


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed and "live_server" in getattr(item, "fixturenames", ()):
        report.sections.append(("server log (last 60 lines)", "\n".join(_read_server_log().splitlines()[-60:])))


@pytest.fixture(scope="session")
def screenshots():
    os.makedirs(SCREENSHOTS, exist_ok=True)
    return SCREENSHOTS
