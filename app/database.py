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
from sqlalchemy import event
from sqlalchemy.orm import Session

from .extensions import db

_AT_COMMIT = "bozka_at_commit"
_COMMITTED = "bozka_committed"


def execute(statement, params=None):
    """Run a Core statement on the session's connection (no autoflush)."""
    return db.session.connection().execute(statement, params or {})


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
