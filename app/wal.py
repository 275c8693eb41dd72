"""SQLite: write-ahead-log checkpoints off the request path.

By default SQLite checkpoints (copies the log into the database file and
syncs it) inside the commit that takes the log past 1,000 pages: every ~70
judgments one request paid ~4 ms more, and under gevent every volunteer
waiting on that worker paid it too. Here the application's connections
checkpoint on their own only past ``BACKSTOP_PAGES`` (so the log stays
bounded if the background task stops), and a background task runs
``PRAGMA wal_checkpoint(PASSIVE)`` every ``BOZKA_CHECKPOINT_INTERVAL``
seconds on a connection of its own, in an OS thread (gevent's thread pool
under gevent: sqlite3 releases the GIL while it works). A passive checkpoint
never waits for, nor blocks, readers or writers
(https://www.sqlite.org/c3ref/wal_checkpoint_v2.html,
https://www.sqlite.org/wal.html#ckpt).

PostgreSQL: nothing here applies.
"""
import logging
import os
import sqlite3
import threading
import weakref

from sqlalchemy import event

log = logging.getLogger("bozka.wal")

BACKSTOP_PAGES = 10000  # about 40 MB of log with 4 KB pages
_started = {}  # (process id, database path) -> True
_lock = threading.Lock()


def init_app(app, db, socketio):
    interval = float(app.config.get("BOZKA_CHECKPOINT_INTERVAL", 1.0))
    with app.app_context():
        engine = db.engine
    if engine.dialect.name != "sqlite" or interval <= 0:
        return
    path = engine.url.database
    if not path or path == ":memory:" or path.startswith("file:"):
        return
    path = os.path.abspath(path)
    engine_ref = weakref.ref(engine)

    @event.listens_for(engine, "connect")
    def _backstop(dbapi_connection, _record):
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA wal_autocheckpoint={BACKSTOP_PAGES}")
        cursor.close()
        # Started by the first connection of each process (a server forks
        # its workers after the app is made), once per database.
        key = (os.getpid(), path)
        with _lock:
            if key in _started:
                return
            _started[key] = True
        socketio.start_background_task(_run, path, interval, engine_ref, socketio)


def _run(path, interval, engine_ref, socketio):
    """Checkpoint every ``interval`` seconds while the application's engine lives."""
    checkpoint = _in_os_thread(socketio)
    connection = None
    try:
        connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        connection.execute("PRAGMA synchronous=NORMAL")
        while True:
            socketio.sleep(interval)
            if engine_ref() is None or not os.path.exists(path):
                return  # the application is gone (tests make many)
            try:
                checkpoint(_checkpoint, connection)
            except sqlite3.Error as exc:  # the backstop keeps the log bounded meanwhile
                log.warning("WAL checkpoint failed: %s", exc)
    except Exception:  # never take the process down; the backstop remains
        log.exception("WAL checkpoints stopped; SQLite checkpoints every %d pages instead", BACKSTOP_PAGES)
    finally:
        if connection is not None:
            connection.close()
        with _lock:
            _started.pop((os.getpid(), path), None)


def _checkpoint(connection):
    return connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()


def _in_os_thread(socketio):
    """How to run a blocking call: gevent's thread pool under gevent (the
    worker's other greenlets go on), else directly (this is a thread)."""
    if socketio.async_mode == "gevent":
        import gevent

        pool = gevent.get_hub().threadpool
        return lambda function, *args: pool.apply(function, args)
    return lambda function, *args: function(*args)
