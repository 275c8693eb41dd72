"""Faults without a server process: SQLite busy (another connection holds
the write lock), an answer sent again after a lost connection, backup and
restore. The server-process faults (SIGKILL, Redis) are in
test_security_faults_live.py."""
import contextlib
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time

import pytest
from sqlalchemy import event, select

from app.extensions import db
from app.models import Campaign, Control, Item, Participation, User
from helpers import csrf_token, register
from security_helpers import db_snapshot

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def volunteer(app, make_campaign):
    """A registered volunteer's client and CSRF token, on either database."""
    make_campaign(sentences=20)
    client = app.test_client()
    register(client)
    token = csrf_token(client, "/c/test/welcome")
    return client, token


@pytest.fixture
def short_busy_timeout(app):
    """SQLite waits 200 ms for a lock, and a judging step retries for 2 s
    (BOZKA_BUSY_WAIT), so the test is quick (SQLite's write lock;
    PostgreSQL's restart has its own test)."""
    if not app.config["SQLALCHEMY_DATABASE_URI"].startswith("sqlite"):
        pytest.skip("SQLite locking")
    app.config["BOZKA_BUSY_WAIT"] = 2
    db.engine.dispose()

    @event.listens_for(db.engine, "connect")
    def _short(dbapi_connection, _record):
        dbapi_connection.execute("PRAGMA busy_timeout=200")

    yield 0.2
    event.remove(db.engine, "connect", _short)
    db.engine.dispose()


def _database_path(app):
    return app.config["SQLALCHEMY_DATABASE_URI"].replace("sqlite:///", "", 1)


def _hold_write_lock(app, seconds, ready):
    connection = sqlite3.connect(_database_path(app), timeout=5, isolation_level=None)
    connection.execute("BEGIN IMMEDIATE")
    ready.set()
    time.sleep(seconds)
    connection.execute("ROLLBACK")
    connection.close()


@contextlib.contextmanager
def lock_held_for(app, seconds):
    """Another connection holds the write lock for ``seconds`` from the start of the block."""
    db.session.remove()
    ready = threading.Event()
    holder = threading.Thread(target=_hold_write_lock, args=(app, seconds, ready))
    holder.start()
    ready.wait(5)
    try:
        yield
    finally:
        holder.join()


def _answer(client, token):
    item = client.get("/c/test/api/item").get_json()["item"]
    better = set(db.session.scalars(select(Control.better)))
    return item, {"token": item["token"], "choice": "right" if item["right"] in better else "left"}


def test_busy_database_fails_cleanly_with_a_503_and_nothing_half_written(app, volunteer, short_busy_timeout):
    client, token = volunteer
    item, body = _answer(client, token)
    before = db_snapshot()
    db.session.remove()
    locker = sqlite3.connect(_database_path(app), timeout=5, isolation_level=None)
    locker.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        response = client.post("/c/test/api/judgment", json=body, headers={"X-CSRFToken": token})
        waited = time.monotonic() - started
        assert response.status_code == 503
        assert response.get_json() == {"status": "error", "message": response.get_json()["message"]}
        assert "not saved" in response.get_json()["message"]
        assert waited < 10  # retried a few times, then gave up
        # The HTML form answers the same way, with a page.
        page = client.post("/c/test/evaluate", data={"csrf_token": token, **body})
        assert page.status_code == 503 and "not saved" in page.get_data(as_text=True)
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert db_snapshot() == before  # no half-written judgment
    # The volunteer's retry (the same answer) counts, once.
    again = client.post("/c/test/api/judgment", json=body, headers={"X-CSRFToken": token})
    assert again.get_json()["status"] == "accepted"
    third = client.post("/c/test/api/judgment", json=body, headers={"X-CSRFToken": token})
    assert third.get_json()["status"] == "stale"
    answered = db.session.scalar(select(Item).where(Item.token == item["token"]))
    assert answered.answered_at is not None
    assert db.session.scalar(select(Participation.items_answered)) == 1


def test_a_short_lock_is_waited_out_by_retrying(app, volunteer, short_busy_timeout):
    client, token = volunteer
    item, body = _answer(client, token)
    with lock_held_for(app, 0.5):
        response = client.post("/c/test/api/judgment", json=body, headers={"X-CSRFToken": token})
    assert response.status_code == 200 and response.get_json()["status"] == "accepted"
    assert db.session.scalar(select(Participation.items_answered)) == 1


def test_every_write_waits_out_a_short_lock_then_answers_503(app, make_campaign, short_busy_timeout):
    """Not only judging: a registration (any view) is run again while SQLite
    is busy, up to BOZKA_BUSY_WAIT, and then refused whole with a 503."""
    make_campaign(sentences=5)
    with lock_held_for(app, 0.6):
        waited_out = register(app.test_client(), username="patient", email="patient@example.org")
    assert waited_out.status_code == 302
    assert db.session.scalar(select(User.username).where(User.username == "patient")) == "patient"

    db.session.remove()
    app.config["BOZKA_BUSY_WAIT"] = 0.5
    locker = sqlite3.connect(_database_path(app), timeout=5, isolation_level=None)
    locker.execute("BEGIN IMMEDIATE")
    try:
        refused = register(app.test_client(), username="hasty", email="hasty@example.org")
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert refused.status_code == 503 and refused.headers["Retry-After"]
    assert db.session.scalar(select(User.id).where(User.username == "hasty")) is None


def test_an_answer_sent_again_after_a_lost_reply_counts_once(app, volunteer):
    """The phone sent the answer, the server saved it, the reply was lost:
    the script sends the same token and choice again (static/js/evaluate.js).
    The second reply says "stale" and carries the current item: the volunteer
    goes on from there."""
    client, token = volunteer
    campaign = db.session.scalar(select(Campaign))
    item, body = _answer(client, token)
    first = client.post("/c/test/api/judgment", json=body, headers={"X-CSRFToken": token}).get_json()
    assert first["status"] == "accepted"
    for _ in range(3):  # retried again and again
        again = client.post("/c/test/api/judgment", json=body, headers={"X-CSRFToken": token}).get_json()
        assert again["status"] == "stale"
        assert again["item"]["token"] == first["item"]["token"]  # where the volunteer is now
        assert again["answered"] == 1
    db.session.refresh(campaign)
    assert db.session.scalar(select(db.func.count(Item.id)).where(Item.answered_at.is_not(None))) == 1
    assert db.session.scalar(select(Participation.items_answered)) == 1


def test_the_script_resends_the_same_answer_after_a_failure():
    """What the test above relies on: evaluate.js keeps the pending answer
    (token and choice) and sends that same body again on a network error
    or a 5xx, with a growing delay, and sends nothing new meanwhile."""
    with open(os.path.join(ROOT, "static", "js", "evaluate.js"), encoding="utf-8") as handle:
        script = handle.read()
    send = script[script.index("function send(attempt)"):script.index('form.addEventListener("submit"')]
    assert "body: JSON.stringify(pending)" in send
    assert re.search(r"response\.status >= 500\) throw", send)
    assert re.search(r"\.catch\(function \(\) \{.*setTimeout\(function \(\) \{ send\(attempt \+ 1\); \}", send, re.S)
    assert "pending = null" in send.split(".catch")[0]  # cleared only on a reply
    assert "if (pending) return;" in script  # no second answer while one is on its way


# --- backup and restore ---------------------------------------------------------------

def _flask(instance, *args, check=True):
    env = {**os.environ, "BOZKA_INSTANCE": instance, "SECRET_KEY": "backup-test", "FLASK_DEBUG": "0"}
    for name in ("DATABASE_URL", "SOCKETIO_MESSAGE_QUEUE"):
        env.pop(name, None)
    done = subprocess.run([os.path.join(os.path.dirname(sys.executable), "flask"), "--app", "wsgi", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    return done


def _count(database, table):
    connection = sqlite3.connect(database)
    try:
        return connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        connection.close()


def test_backup_then_restore(tmp_path):
    instance = str(tmp_path / "instance")
    database = os.path.join(instance, "bozka.sqlite3")
    _flask(instance, "db", "upgrade")
    _flask(instance, "demo")
    users = _count(database, "users")
    # A backup while another connection is writing (online backup).
    writer = sqlite3.connect(database, isolation_level=None)
    writer.execute("BEGIN")
    writer.execute("UPDATE campaigns SET description = 'being edited'")
    backup = str(tmp_path / "copy.sqlite3")
    done = _flask(instance, "backup", backup)
    writer.execute("ROLLBACK")
    writer.close()
    assert "Backed up to" in done.stdout and os.path.exists(backup)
    check = sqlite3.connect(backup)
    assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert check.execute("SELECT count(*) FROM campaigns WHERE description = 'being edited'").fetchone()[0] == 0
    check.close()
    # Backing up onto an existing file is refused.
    assert _flask(instance, "backup", backup, check=False).returncode != 0
    # Changes after the backup...
    _flask(instance, "user", "create", "--role", "researcher", "--email", "late@example.org",
           "--username", "late", "--password", "a long secret 77")
    assert _count(database, "users") == users + 1
    # ...are undone by the restore.
    done = _flask(instance, "restore", backup, "--yes")
    assert "Restored" in done.stdout
    assert _count(database, "users") == users
    assert _count(database, "campaigns") >= 1
    # A backup in the default place, named by time.
    done = _flask(instance, "backup")
    assert re.search(r"backups/bozka-\d{8}-\d{6}\.sqlite3", done.stdout)


def test_restore_refuses_damaged_or_foreign_files(tmp_path):
    instance = str(tmp_path / "instance")
    database = os.path.join(instance, "bozka.sqlite3")
    _flask(instance, "db", "upgrade")
    _flask(instance, "demo")
    users = _count(database, "users")
    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(b"not a database at all" * 100)
    foreign = tmp_path / "foreign.sqlite3"
    connection = sqlite3.connect(foreign)
    connection.execute("CREATE TABLE t (x)")
    connection.commit()
    connection.close()
    for path in (garbage, foreign):
        done = _flask(instance, "restore", str(path), "--yes", check=False)
        assert done.returncode != 0
        assert str(path) in done.stderr
    assert _count(database, "users") == users


def test_no_database_connection_in_time_is_a_clean_503_too(app, volunteer, monkeypatch):
    """The pool's TimeoutError (every connection busy for DB_POOL_TIMEOUT
    seconds) is answered like a busy database, on the JSON endpoint and the
    form alike, and nothing is written."""
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    from app.services import evaluation

    client, token = volunteer
    item, body = _answer(client, token)
    before = db_snapshot()

    def no_connection(*args, **kwargs):
        raise PoolTimeout("QueuePool limit of size 8 overflow 0 reached, connection timed out, timeout 30.00")

    monkeypatch.setattr(evaluation, "answer", no_connection)
    response = client.post("/c/test/api/judgment", json=body, headers={"X-CSRFToken": token})
    assert response.status_code == 503 and "not saved" in response.get_json()["message"]
    page = client.post("/c/test/evaluate", data={"csrf_token": token, **body})
    assert page.status_code == 503 and "not saved" in page.get_data(as_text=True)
    assert db_snapshot() == before
    monkeypatch.undo()
    assert client.post("/c/test/api/judgment", json=body, headers={"X-CSRFToken": token}).get_json()["status"] == "accepted"


def test_a_database_error_before_the_user_is_loaded_is_a_503_page_for_a_visitor(app, volunteer, monkeypatch):
    """The campaign's look-up fails first: the 503 page is made without the
    database, as for a visitor, never by loading the volunteer (a 500)."""
    from sqlalchemy.exc import OperationalError

    from app import web
    from app.services import security

    client, _token = volunteer

    def database_away(*args, **kwargs):
        raise OperationalError("SELECT", {}, RuntimeError("the database system is shutting down"))

    monkeypatch.setattr(web, "campaign_row", database_away)
    monkeypatch.setattr(security, "user_from_session_id", database_away)
    page = client.get("/c/test/")
    assert page.status_code == 503
    text = page.get_data(as_text=True)
    assert "not saved" in text and "ane" not in text  # nobody's name: the page is a visitor's
