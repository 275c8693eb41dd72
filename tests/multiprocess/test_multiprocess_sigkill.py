"""SIGKILL of one of the two server processes (gunicorn master and worker)
while 25 volunteers judge through nginx, on PostgreSQL with Redis: the load
goes on through the other process, the killed one is started again, and
every judgment a volunteer was acknowledged is stored exactly once.

The volunteers behave as static/js/evaluate.js does: a request that fails
(no answer, or a 5xx from nginx) is sent again, unchanged, until the site
answers. An answer is acknowledged when the reply records it, or when a
resent answer is told "stale" (it was saved before its reply was lost)."""
import json
import os
import random
import re
import signal
import subprocess
import threading
import time
from http.client import HTTPException

import pytest
from sqlalchemy import create_engine, text

from clients import Volunteer, correct_choice, register
from cluster import ROOT, server_command, wait_http
from conftest import running_cluster

VOLUNTEERS = 25
JUDGMENT = re.compile(r'"POST /c/test/api/judgment ')


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """As conftest's, with a campaign large enough for the whole load."""
    yield from running_cluster(tmp_path_factory, "sigkill", sentences=400)


class Judge:
    """One volunteer judging in a thread until ``stop``; keeps what it sent
    and what the site acknowledged."""

    def __init__(self, name, volunteer):
        self.name, self.volunteer = name, volunteer
        self.sent = {}  # token: choice
        self.acked = []  # tokens whose reply recorded the answer
        self.saved = []  # tokens resent after a failure and told "stale": saved before
        self.errors = []  # (monotonic time, HTTP status or exception name) of each failed request
        self.statuses = {}
        self.failure = None

    def call(self, method, path, body=None, deadline=90):
        stop_at = time.monotonic() + deadline
        while True:
            try:
                status, data = self.volunteer.request(method, path, body)
                if status < 500:
                    return status, data
                self.errors.append((time.monotonic(), status))
            except (OSError, HTTPException) as exc:
                self.errors.append((time.monotonic(), type(exc).__name__))
            if time.monotonic() > stop_at:
                raise TimeoutError(f"{self.name}: no answer to {method} {path}")
            time.sleep(0.1)

    def run(self, stop, seed):
        rng = random.Random(seed)
        try:
            status, data = self.call("GET", "/c/test/api/item")
            assert status == 200, (status, data[:200])
            item = json.loads(data)["item"]
            while item is not None and not stop.is_set():
                token, choice = item["token"], correct_choice(item, rng)
                self.sent[token] = choice
                failed_before = len(self.errors)
                body = json.dumps({"token": token, "choice": choice}).encode()
                status, data = self.call("POST", "/c/test/api/judgment", body)
                assert status == 200, (status, data[:200])
                payload = json.loads(data)
                self.statuses[payload["status"]] = self.statuses.get(payload["status"], 0) + 1
                if payload["status"] != "stale":
                    self.acked.append(token)
                elif len(self.errors) > failed_before:
                    self.saved.append(token)
                else:
                    raise AssertionError(f"{self.name}: a first answer told stale: {payload}")
                item = payload["item"]
        except Exception as exc:  # noqa: BLE001 (reported by the test)
            self.failure = exc
        finally:
            self.volunteer.close()


def _served(cluster):
    return [len(JUDGMENT.findall(log)) for log in cluster.logs(10**6).values()]


def _wait_for(judges, target, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        acked = sum(len(j.acked) + len(j.saved) for j in judges)
        if acked >= target or all(j.failure for j in judges):
            return acked
        time.sleep(0.05)
    return sum(len(j.acked) + len(j.saved) for j in judges)


def _restart(cluster, index):
    """Start the killed process again on its port (as systemd would)."""
    port, _dead, log_path = cluster.servers[index]
    with open(log_path, "a") as log:
        process = subprocess.Popen(server_command(port), cwd=ROOT, env=cluster.env, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    cluster.servers[index] = (port, process, log_path)
    wait_http(f"http://127.0.0.1:{port}/", process, log_path)


def test_sigkill_of_one_process_under_load_loses_and_doubles_nothing(cluster):
    judges = []
    for number in range(VOLUNTEERS):
        address = f"127.0.{100 + number}.1"
        cookie, csrf = register(cluster.url, f"k{number:02d}", address)
        judges.append(Judge(f"k{number:02d}", Volunteer(cluster.url, cookie, csrf, address)))
    stop = threading.Event()
    threads = [threading.Thread(target=j.run, args=(stop, n), daemon=True) for n, j in enumerate(judges)]
    for thread in threads:
        thread.start()
    try:
        before_kill = _wait_for(judges, 300)
        assert before_kill >= 300, cluster.logs()
        served = _served(cluster)
        assert all(n > 0 for n in served), served  # both processes were judging
        _port, victim, _log = cluster.servers[1]
        killed_at = time.monotonic()
        os.killpg(victim.pid, signal.SIGKILL)  # master and worker, requests in flight
        victim.wait(timeout=10)
        served_by_victim = _served(cluster)[1]
        # The load goes on through nginx onto the other process alone.
        assert _wait_for(judges, before_kill + 300) >= before_kill + 300, cluster.logs()
        _restart(cluster, 1)
        restarted_at = time.monotonic()
        while_down = _wait_for(judges, 0) - before_kill
        # nginx tries a failed process again after its fail_timeout (10 s).
        deadline = time.monotonic() + 60
        while _served(cluster)[1] == served_by_victim and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _served(cluster)[1] > served_by_victim, "the restarted process served no judgment"
        back = _wait_for(judges, 0)
        assert _wait_for(judges, back + 200) >= back + 200, cluster.logs()
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    assert [j.failure for j in judges if j.failure] == []
    errors = [what for j in judges for at, what in j.errors]
    at_kill = [what for j in judges for at, what in j.errors if killed_at <= at < restarted_at]
    assert at_kill, "no request met the killed process"
    assert len(at_kill) == len(errors), "failed requests outside the kill"
    statuses = {}
    for judge in judges:
        for name, count in judge.statuses.items():
            statuses[name] = statuses.get(name, 0) + count
    assert statuses.get("dismissed", 0) == 0, statuses

    acked = [token for j in judges for token in j.acked]
    saved = [token for j in judges for token in j.saved]
    sent = {token: choice for j in judges for token, choice in j.sent.items()}
    engine = create_engine(cluster.database_url)
    try:
        with engine.connect() as db:
            rows = db.execute(text(
                "SELECT i.token, i.choice FROM items i JOIN participations p ON p.id = i.participation_id "
                "JOIN users u ON u.id = p.user_id WHERE u.username LIKE 'k%' AND i.answered_at IS NOT NULL"
            )).all()
            stored = {}
            for token, choice in rows:
                stored.setdefault(token, []).append(choice)
            lost = [t for t in acked + saved if t not in stored]
            doubled = [t for t, choices in stored.items() if len(choices) > 1]
            unacknowledged = set(stored) - set(acked) - set(saved)
            assert (lost, doubled, sorted(unacknowledged)) == ([], [], [])
            assert len(acked) + len(saved) == len(set(acked + saved)) == len(rows)
            assert all(stored[t] == [sent[t]] for t in stored)
            assert db.execute(text("SELECT token FROM items GROUP BY token HAVING count(*) > 1")).all() == []
            # Each volunteer's answered positions run 1..items_answered, once each.
            for pid, answered in db.execute(text("SELECT id, items_answered FROM participations")).all():
                positions = db.execute(text(
                    "SELECT position FROM items WHERE participation_id = :p AND answered_at IS NOT NULL "
                    "ORDER BY position"), {"p": pid}).scalars().all()
                assert positions == list(range(1, answered + 1)), (pid, positions, answered)
            # The counters the next item's choice relies on agree with the rows.
            valid = db.scalar(text(
                "SELECT count(*) FROM items WHERE slot_id IS NOT NULL AND answered_at IS NOT NULL "
                "AND discarded_at IS NULL"))
            assert db.scalar(text("SELECT sum(collected_judgments) FROM campaigns")) == valid
            for slot_id, collected, pending, judged, holding in db.execute(text(
                "SELECT s.id, s.collected, s.pending, "
                " (SELECT count(*) FROM items i WHERE i.slot_id = s.id AND i.answered_at IS NOT NULL "
                "   AND i.discarded_at IS NULL), "
                " (SELECT count(*) FROM items i WHERE i.slot_id = s.id AND i.holding) "
                "FROM slots s")).all():
                assert (collected, pending) == (judged, judged + holding), slot_id
    finally:
        engine.dispose()
    kinds = {}
    for what in errors:
        kinds[what] = kinds.get(what, 0) + 1
    total = len(acked) + len(saved)
    print(f"\nSIGKILL on two processes (PostgreSQL, Redis, nginx): {VOLUNTEERS} volunteers, {total} acknowledged "
          f"({before_kill} before the kill, {while_down} until the killed process was back, "
          f"{total - before_kill - while_down} after), {len(rows)} stored, 0 lost, 0 doubled; "
          f"{len(saved)} answers saved before their reply was lost; {len(errors)} failed requests "
          f"during the kill, resent ({kinds}); judgments served by the killed process: {served_by_victim} "
          f"before the kill, {_served(cluster)[1] - served_by_victim} after its restart")
