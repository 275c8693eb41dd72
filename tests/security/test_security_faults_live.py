"""Faults of a real server, served as ``make run`` does (gunicorn, one gevent
WebSocket worker; tests/e2e/conftest.py), on loopback, bounded in time:

- SIGKILL in the middle of a load of concurrent volunteers, then a restart:
  every acknowledged judgment is in the database exactly once and every
  volunteer's current item is served again;
- Redis stopped and restarted: judging goes on, live updates resume;
- PostgreSQL restarted under a load of volunteers (in the PostgreSQL pass):
  requests retry or fail with a clean 503, nothing half-written or doubled;
- a phone losing the reply to its answer (headless Chromium): the script
  sends the same answer again and it counts once.
"""
import csv
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time

import pytest
import requests

from databases import on_postgresql, scratch_database
from e2e.conftest import ROOT, _free_port, _wait_until_up, flask_command, serve_command
from e2e.i18n_pages import controls as known_controls
from helpers import quiet_demo_commands

SLUG = "demo-en-eu"
PASSWORD = "correct horse battery 9"
CONTROLS = os.path.join(ROOT, "app", "demo", "en-eu", "controls.tsv")


def _better_texts():
    with open(CONTROLS, newline="", encoding="utf-8") as handle:
        return {row["better"].strip() for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)}


BETTER = _better_texts()
# The demo's pool and its outputs: a generated control (the demo's default,
# issue 28) is told as a reader tells it, the system's own translation is better.
KNOWN = known_controls(SLUG)


class Site:
    """The site in a fresh instance folder; started, killed and restarted."""

    def __init__(self, **env):
        self.instance = tempfile.mkdtemp(prefix="bozka-faults-")
        self.env = {**os.environ, "BOZKA_INSTANCE": self.instance, "SECRET_KEY": "faults-secret",
                    "FLASK_DEBUG": "0", "PYTHONUNBUFFERED": "1"}
        for name in ("DATABASE_URL", "MAIL_SERVER", "BOZKA_RANDOM_SEED"):
            self.env.pop(name, None)
        self.env.update(env)
        self.database_url = env.get("DATABASE_URL")  # None: SQLite in the instance folder
        if "SOCKETIO_MESSAGE_QUEUE" not in env:
            self.env.pop("SOCKETIO_MESSAGE_QUEUE", None)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.database = os.path.join(self.instance, "bozka.sqlite3")
        self.process = None
        self.log_path = os.path.join(self.instance, "server.log")
        for step in (flask_command("db", "upgrade"), flask_command("demo"),
                     *(flask_command(*args) for args in quiet_demo_commands())):
            done = subprocess.run(step, cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stdout + done.stderr

    def start(self):
        log = open(self.log_path, "a")
        self.process = subprocess.Popen(serve_command(self.port), cwd=ROOT, env=self.env, stdout=log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        _wait_until_up(self.url + "/", self.process, self.log_path, timeout=60)

    def kill(self):
        """SIGKILL the master and its worker: no shutdown of any kind."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self):
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGQUIT)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def query(self, sql, *args):
        if self.database_url:
            import psycopg
            from sqlalchemy.engine import make_url

            url = make_url(self.database_url).set(drivername="postgresql")
            with psycopg.connect(url.render_as_string(hide_password=False)) as connection:
                return connection.execute(sql.replace("?", "%s"), args).fetchall()
        connection = sqlite3.connect(self.database, timeout=30)
        try:
            return connection.execute(sql, args).fetchall()
        finally:
            connection.close()

    def log(self):
        with open(self.log_path, encoding="utf-8", errors="replace") as handle:
            return handle.read()

    def remove(self):
        self.stop()
        shutil.rmtree(self.instance, ignore_errors=True)


@pytest.fixture
def site():
    made = []

    def make(**env):
        made.append(Site(**env))
        return made[-1]

    yield make
    for one in made:
        one.remove()


class Volunteer:
    """A phone: registers, then answers; a failed request is sent again,
    unchanged, until the server answers (as static/js/evaluate.js does)."""

    def __init__(self, base, name):
        self.base, self.name = base, name
        self.http = requests.Session()
        self.sent, self.acked, self.stale = [], [], []
        self.current = None
        self.errors = 0
        self.server_errors = []  # HTTP statuses of 5xx answers (retried)
        self.idle = threading.Event()
        self.failure = None

    def call(self, method, path, deadline=90, **kwargs):
        stop_at = time.monotonic() + deadline
        while True:
            try:
                response = self.http.request(method, self.base + path, timeout=10, **kwargs)
                if response.status_code < 500:
                    return response
                self.server_errors.append(response.status_code)
            except requests.RequestException:
                pass
            self.errors += 1
            if time.monotonic() > stop_at:
                raise TimeoutError(f"{self.name}: no answer to {method} {path}")
            time.sleep(0.2)

    def register(self):
        page = self.call("GET", f"/c/{SLUG}/register").text
        token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
        response = self.call("POST", f"/c/{SLUG}/register", allow_redirects=False, data={
            "csrf_token": token, "username": self.name, "email": f"{self.name}@example.org", "password": PASSWORD,
            "password2": PASSWORD, "age_group": "26-35", "studies_level": "university",
            "studies_field": "language", "source_level": "B1-B2", "target_level": "C1-C2", "consent": "y"})
        assert response.status_code == 302, response.text[:500]
        page = self.call("GET", f"/c/{SLUG}/welcome").text
        self.csrf = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page).group(1)

    def confirm(self, read_log, timeout=30):
        """Open the confirmation link the site mailed (logged: no mail server);
        only confirmed volunteers are in the ranking."""
        pattern = re.compile(rf"to {re.escape(self.name)}@example\.org: .*?\n.*?https?://[^/\s]+(/confirm/\S+)", re.S)
        deadline = time.monotonic() + timeout
        while not (found := pattern.findall(read_log())):
            assert time.monotonic() < deadline, f"no confirmation mail to {self.name} in the server log"
            time.sleep(0.2)
        assert self.call("GET", found[-1]).status_code == 200

    def item(self):
        return self.call("GET", f"/c/{SLUG}/api/item").json()["item"]

    def answer_one(self, rng):
        item = self.item()
        if item is None:
            return False
        self.current = item["token"]
        if item["right"] in BETTER or (item["source"], item["right"], item["left"]) in KNOWN:
            choice = "right"
        elif item["left"] in BETTER or (item["source"], item["left"], item["right"]) in KNOWN:
            choice = "left"
        else:
            choice = rng.choice(["left", "right", "equal"])
        self.sent.append((item["token"], choice))
        reply = self.call("POST", f"/c/{SLUG}/api/judgment", json={"token": item["token"], "choice": choice},
                          headers={"X-CSRFToken": self.csrf}).json()
        (self.acked if reply["status"] in ("accepted", "dismissed", "capped") else self.stale).append(item["token"])
        self.current = reply["item"]["token"] if reply["item"] else None
        return reply["item"] is not None

    def run(self, go, stop, seed):
        rng = random.Random(seed)
        try:
            while not stop.is_set():
                if not go.is_set():
                    self.idle.set()
                    go.wait()
                    self.idle.clear()
                    continue
                if not self.answer_one(rng):
                    break
        except Exception as exc:  # reported by the test
            self.failure = exc
        finally:
            self.idle.set()


def check_exactly_once(site, volunteers):
    acked = {token for v in volunteers for token in v.acked}
    sent = dict(pair for v in volunteers for pair in v.sent)
    rows = site.query("SELECT token, choice, answered_at FROM items")
    by_token = {}
    for token, choice, answered_at in rows:
        by_token.setdefault(token, []).append((choice, answered_at))
    for token in acked:
        assert len(by_token.get(token, [])) == 1, f"acknowledged judgment {token} stored {len(by_token.get(token, []))} times"
        choice, answered_at = by_token[token][0]
        assert answered_at is not None and choice == sent[token], token
    answered = {token for token, stored in by_token.items() if any(at is not None for _choice, at in stored)}
    assert answered <= set(sent), "a judgment nobody sent"
    # Every answered item of every volunteer, once, positions without gaps.
    for pid, answered_count in site.query("SELECT id, items_answered FROM participations"):
        positions = [p for (p,) in site.query(
            "SELECT position FROM items WHERE participation_id = ? AND answered_at IS NOT NULL ORDER BY position", pid)]
        assert positions == list(range(1, answered_count + 1)), (pid, positions, answered_count)
    # The counters the next-item choice relies on agree with the rows.
    valid = site.query("SELECT count(*) FROM items WHERE answered_at IS NOT NULL AND discarded_at IS NULL "
                       "AND slot_id IS NOT NULL")[0][0]
    assert site.query("SELECT sum(collected_judgments) FROM campaigns")[0][0] == valid
    assert site.query("SELECT coalesce(sum(collected), 0) FROM slots")[0][0] == valid
    holding = site.query("SELECT count(*) FROM items WHERE holding AND slot_id IS NOT NULL")[0][0]
    assert site.query("SELECT coalesce(sum(pending), 0) - coalesce(sum(collected), 0) FROM slots")[0][0] == holding
    return len(acked)


class Load:
    """Volunteers judging in threads; ``pause`` stops them between answers."""

    def __init__(self, volunteers):
        self.volunteers = volunteers
        self.go, self.stop = threading.Event(), threading.Event()
        self.go.set()
        self.threads = [threading.Thread(target=v.run, args=(self.go, self.stop, n), daemon=True)
                        for n, v in enumerate(volunteers)]

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.go.set()
        for thread in self.threads:
            thread.join(timeout=60)

    def acked(self):
        return sum(len(v.acked) for v in self.volunteers)

    def errors(self):
        return sum(v.errors for v in self.volunteers)

    def wait_for(self, target, timeout=60):
        deadline = time.monotonic() + timeout
        while self.acked() < target and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.acked()

    def pause(self):
        self.go.clear()

    def settle(self):
        """After ``pause``: every phone has its last answer and waits."""
        for volunteer in self.volunteers:
            assert volunteer.idle.wait(90), f"{volunteer.name} never got an answer"
            assert volunteer.failure is None, volunteer.failure

    def resume(self):
        self.go.set()


def _registered(server, prefix, count=6):
    volunteers = [Volunteer(server.url, f"{prefix}{n}") for n in range(count)]
    for volunteer in volunteers:
        volunteer.register()
    return volunteers


def _assert_where_they_were(server, volunteers):
    """Everyone continues where they were: the same current item."""
    for volunteer in volunteers:
        rows = server.query(
            "SELECT i.token FROM items i JOIN participations p ON p.id = i.participation_id "
            "JOIN users u ON u.id = p.user_id WHERE u.username = ? AND i.answered_at IS NULL", volunteer.name)
        assert [token for (token,) in rows] == [volunteer.current], volunteer.name
        assert volunteer.item()["token"] == volunteer.current, volunteer.name


def test_sigkill_under_load_loses_and_doubles_nothing(site):
    # Many volunteers register from one address here: no registration limit.
    server = site(RATELIMIT_ENABLED="false")
    server.start()
    volunteers = _registered(server, "load")
    with Load(volunteers) as load:
        acked_before_kill = load.wait_for(30)
        assert acked_before_kill >= 30, server.log()[-3000:]
        server.kill()  # requests are in flight
        errors_at_kill = load.errors()
        load.pause()
        time.sleep(1.0)  # the phones keep trying meanwhile
        server.start()
        load.settle()
        assert load.errors() > errors_at_kill, "no request met the dead server"
        _assert_where_they_were(server, volunteers)
        load.resume()
        load.wait_for(load.acked() + 12)
    assert all(v.failure is None for v in volunteers), [v.failure for v in volunteers]
    server.stop()
    acknowledged = check_exactly_once(server, volunteers)
    assert acknowledged >= acked_before_kill + 12
    print(f"SIGKILL test: {len(volunteers)} volunteers, {acknowledged} acknowledged judgments "
          f"({acked_before_kill} before the kill), {sum(len(v.stale) for v in volunteers)} answers already "
          f"saved when resent, {sum(v.errors for v in volunteers)} failed requests retried")


@pytest.mark.skipif(not on_postgresql(), reason="PostgreSQL pass only (scripts/services.sh run)")
def test_postgresql_restarted_under_load_loses_and_doubles_nothing(site, tmp_path):
    with scratch_database(tmp_path, "bozka_restart") as url:
        server = site(RATELIMIT_ENABLED="false", DATABASE_URL=url)
        server.start()
        volunteers = _registered(server, "pg")
        with Load(volunteers) as load:
            acked_before = load.wait_for(30)
            assert acked_before >= 30, server.log()[-3000:]
            restart = subprocess.run(["bash", os.path.join(ROOT, "scripts", "services.sh"), "restart-postgres"],
                                     capture_output=True, text=True, timeout=120)
            assert restart.returncode == 0, restart.stderr
            # The same server process goes on: its pool drops the cut connections.
            acked_after = load.wait_for(load.acked() + 30)
            assert acked_after >= acked_before + 30, server.log()[-3000:]
            load.pause()
            load.settle()
            _assert_where_they_were(server, volunteers)
        assert all(v.failure is None for v in volunteers), [v.failure for v in volunteers]
        statuses = sorted({code for v in volunteers for code in v.server_errors})
        errors = [line for line in server.log().splitlines() if "Error" in line or "error" in line]
        assert set(statuses) <= {503}, (statuses, "\n".join(errors))  # a clean 503, never a 500
        server.stop()
        acknowledged = check_exactly_once(server, volunteers)
        print(f"PostgreSQL restart: {acknowledged} acknowledged judgments ({acked_before} before the restart), "
              f"{sum(len(v.stale) for v in volunteers)} answers already saved when resent, "
              f"HTTP 5xx answers {statuses or 'none'}, {sum(v.errors for v in volunteers)} requests retried")


# --- Redis down ---------------------------------------------------------------------


@pytest.fixture
def redis_server():
    binary = shutil.which("redis-server") or ("/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None)
    if binary is None:
        pytest.skip("redis-server is missing (scripts/services.sh install installs it)")
    port = _free_port()
    state = {"process": None}

    def start():
        state["process"] = subprocess.Popen(
            [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import redis

        client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=1)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if client.ping():
                    return
            except redis.RedisError:
                time.sleep(0.1)
        raise RuntimeError("redis-server did not start")

    def stop():
        state["process"].terminate()
        state["process"].wait(timeout=10)

    start()
    yield {"url": f"redis://127.0.0.1:{port}/0", "start": start, "stop": stop}
    if state["process"].poll() is None:
        stop()


class LiveListener:
    """A Socket.IO client speaking the Engine.IO 4 / Socket.IO 5 text protocol
    over one WebSocket (as scripts/bench/bench_realtime_listener.py does),
    keeping every "ranking" payload."""

    def __init__(self, base, cookie):
        import json

        import websocket

        self.json = json
        url = base.replace("http://", "ws://") + "/socket.io/?EIO=4&transport=websocket"
        self.ws = websocket.create_connection(url, timeout=10, cookie=cookie, origin=base)
        assert self.ws.recv().startswith("0")
        self.ws.send("40")
        reply = self.ws.recv()
        assert reply.startswith("40"), reply
        self.ws.send("420" + json.dumps(["join", {"campaign": SLUG}]))
        self.rankings, self.acks = [], []
        self.closed = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        while not self.closed:
            try:
                message = self.ws.recv()
            except Exception:  # noqa: BLE001 (closed)
                return
            if message == "2":
                self.ws.send("3")
            elif message.startswith("42"):
                event, payload = self.json.loads(message[2:])
                if event == "ranking":
                    self.rankings.append(payload)
            elif message.startswith("43"):
                self.acks.append(self.json.loads(message[3:]))

    def top_count(self):
        return self.rankings[-1]["top"][0]["c"] if self.rankings and self.rankings[-1]["top"] else 0

    def close(self):
        self.closed = True
        self.ws.close()


def test_judging_goes_on_without_redis_and_live_updates_resume(site, redis_server):
    server = site(SOCKETIO_MESSAGE_QUEUE=redis_server["url"])
    server.start()
    judge, watcher = Volunteer(server.url, "judge"), Volunteer(server.url, "watcher")
    judge.register()
    judge.confirm(server.log)  # only confirmed volunteers are ranked (issue 28)
    watcher.register()
    listener = LiveListener(server.url, "; ".join(f"{c.name}={c.value}" for c in watcher.http.cookies))
    try:
        _wait_for(lambda: listener.acks, 10, "join acknowledgement")
        assert listener.acks[0] == [{"ok": True}]
        rng = random.Random(1)
        for _ in range(2):
            judge.answer_one(rng)
        _wait_for(lambda: listener.top_count() >= 2, 20, "a live update")

        redis_server["stop"]()
        for _ in range(3):  # judging goes on
            started = time.monotonic()
            response = judge.http.get(f"{server.url}/c/{SLUG}/api/item", timeout=10)
            assert response.status_code == 200
            assert judge.answer_one(rng)
            assert time.monotonic() - started < 8
        assert len(judge.acked) == 5 and judge.errors == 0
        assert judge.http.get(f"{server.url}/c/{SLUG}/welcome", timeout=10).status_code == 200
        assert listener.top_count() < 5  # no live update while Redis is away
        # Logging in (rate limited, its counts in Redis) still works: the
        # limits fall back to this process's memory meanwhile.
        other = requests.Session()
        page = other.get(f"{server.url}/login", timeout=10).text
        token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
        login = other.post(f"{server.url}/login", data={"csrf_token": token, "email": "watcher@example.org",
                                                         "password": PASSWORD}, allow_redirects=False, timeout=10)
        assert login.status_code == 302, login.status_code

        redis_server["start"]()
        judge.answer_one(rng)
        # The watcher hears the new count: live updates are back.
        _wait_for(lambda: listener.top_count() >= 6, 45, "live updates after Redis came back")
    finally:
        listener.close()
    server.stop()
    assert server.query("SELECT items_answered FROM participations p JOIN users u ON u.id = p.user_id "
                        "WHERE u.username = 'judge'") == [(6,)]


def _wait_for(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    pytest.fail(f"no {what} within {seconds} s")


# --- a phone loses the reply to its answer (headless Chromium) ---------------------------

def test_a_lost_reply_is_retried_by_the_page_and_counts_once(site, browser):
    from playwright.sync_api import expect

    server = site()
    server.start()
    phone = Volunteer(server.url, "phone")
    phone.register()
    context = browser.new_context()
    try:
        context.add_cookies([{"name": c.name, "value": c.value, "url": server.url} for c in phone.http.cookies])
        page = context.new_page()
        lost = []

        def drop_first_reply(route):
            if not lost:
                route.fetch()  # the server gets the answer and saves it...
                lost.append(True)
                route.abort("internetdisconnected")  # ...but the phone never hears back
            else:
                route.continue_()

        page.route("**/api/judgment", drop_first_reply)
        page.goto(f"{server.url}/c/{SLUG}/evaluate")
        first = page.locator("input[name=token]").input_value()
        # The first item is a control: answer it right (a wrong answer ends participation).
        right_is_better = page.locator("#text-right").inner_text().strip() in BETTER
        page.get_by_label("The second translation" if right_is_better else "The first translation").check()
        page.locator("#next").click()
        expect(page.locator("input[name=token]")).not_to_have_value(first, timeout=20000)
        assert lost
        second = page.locator("input[name=token]").input_value()
    finally:
        context.close()
    server.stop()
    rows = server.query("SELECT token, answered_at IS NOT NULL FROM items ORDER BY position")
    assert rows[0] == (first, 1) and rows[1] == (second, 0)
    assert server.query("SELECT items_answered FROM participations") == [(1,)]
