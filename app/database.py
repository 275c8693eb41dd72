"""The judging path's statements: Core statements on the session's connection,
and the ones that run with the commit.

The judging path's statements are Core statements built once at import,
with bound parameters: SQLAlchemy compiles each once and caches it, where
an ORM query would be built and compiled again at every request. They run
on the session's connection (``Session.connection()``), in its
transaction, without an autoflush: the judging path changes the rows they
read only through such statements.

The rows that many volunteers' answers change (a sentence's and a slot's
counters, the campaign's counters and ticket number) are changed last, just
before the commit (``at_commit``): on PostgreSQL their locks are then held
for the shortest time, and always taken in the same order.
"""
import functools
import sqlite3
import threading
import time

from flask import current_app, g, has_request_context
from sqlalchemy import event
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from .extensions import db

_AT_COMMIT = "bozka_at_commit"
_COMMITTED = "bozka_committed"


def execute(statement, params=None):
    """Run a Core statement on the session's connection (no autoflush)."""
    return db.session.connection().execute(statement, params or {})


def busy(exc):
    """Whether a SQLAlchemy error is SQLite's "database is locked": another
    connection holds the write lock (or committed since this transaction read)."""
    orig = getattr(exc, "orig", None)
    code = getattr(orig, "sqlite_errorcode", 0) & 0xFF  # the primary code of an extended one
    return isinstance(orig, sqlite3.OperationalError) and code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


# Pauses between attempts grow from 20 ms to MAX_PAUSE.
MAX_PAUSE = 0.2
# One request of the process at a time polls a busy database; the others
# queue here (gevent's lock in a gevent worker, monkey-patched), so the
# worker spends at most one short busy timeout per pause in SQLite's C wait.
_polling = threading.Lock()


class BusyWait:
    """The waits of one transaction that found SQLite busy: ``wait()`` before
    each new attempt, ``done()`` at the end. ``time.sleep`` is gevent's in
    a gevent worker, so the worker serves other requests meanwhile."""

    def __init__(self):
        self.deadline = time.monotonic() + current_app.config["BOZKA_BUSY_WAIT"]
        if has_request_context():  # one bound for the whole request, however many waits it nests
            self.deadline = g.setdefault("bozka_busy_deadline", self.deadline)
        self.pause = 0.02
        self.polling = False

    def wait(self):
        """Wait for the next attempt; False once BOZKA_BUSY_WAIT has passed."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            return False
        if not self.polling:  # behind the request polling now; then at once
            self.polling = _polling.acquire(timeout=left)
            return self.polling
        time.sleep(min(self.pause, left))
        self.pause = min(self.pause * 2, MAX_PAUSE)
        return True

    def done(self):
        if self.polling:
            self.polling = False
            _polling.release()


def while_busy(transaction):
    """``transaction()`` (which commits), run again after a rollback each time
    the database is busy, for up to BOZKA_BUSY_WAIT seconds; then the error."""
    waits = None
    try:
        while True:
            try:
                return transaction()
            except OperationalError as exc:
                db.session.rollback()
                if not busy(exc):
                    raise
                waits = waits or BusyWait()
                if not waits.wait():
                    raise
    finally:
        if waits is not None:
            waits.done()


def waits_while_busy(view):
    """A view run again, after a rollback, while SQLite is busy (``while_busy``):
    a view is one transaction, and it flashes and emits only after its commit."""

    @functools.wraps(view)
    def run(*args, **kwargs):
        return while_busy(lambda: view(*args, **kwargs))

    return run


def dialect_name():
    """The session's database: "sqlite" or "postgresql"."""
    return db.session.get_bind().dialect.name


def at_commit(statement, params, key=None):
    """Run a statement with the commit (``run_at_commit``), before the ones
    given there. With a ``key``, its rows are kept for ``committed(key)``."""
    db.session.info.setdefault(_AT_COMMIT, []).append((statement, params, key))


def committed(key):
    """The rows of the ``at_commit`` statement of this key at the last commit."""
    return db.session.info.get(_COMMITTED, {}).pop(key, None)


def run_at_commit(statements):
    """Run the ``at_commit`` statements, then ``(statement, params)`` pairs,
    after flushing everything else: for a ``before_commit`` hook."""
    session = db.session()
    pending = (session.info.pop(_AT_COMMIT, None) or []) + [(statement, params, None) for statement, params in statements]
    results = session.info[_COMMITTED] = {}
    if not pending:
        return
    session.flush()
    connection = session.connection()
    for statement, params, key in pending:
        result = connection.execute(statement, params)
        if key is not None:
            results[key] = result.all()


@event.listens_for(Session, "after_soft_rollback")
def _forget_commit_statements(session, _previous_transaction):
    session.info.pop(_AT_COMMIT, None)


@event.listens_for(Session, "after_begin")
def _forget_committed(session, _transaction, _connection):
    session.info.pop(_COMMITTED, None)  # the last commit's rows are read before the next transaction
