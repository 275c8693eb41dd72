"""Core statements of the judging path, compiled once and run on the driver.

SQLAlchemy's execution of a cached Core statement still costs several times
what SQLite takes to run it (parameter processing, execution context,
result objects). A ``Prepared`` statement is compiled once per dialect into
its SQL text, the order of its parameters and the type conversions of its
parameters and result columns (SQLAlchemy's own: a SQLite datetime is the
same text either way), then run on the DB-API cursor of the session's
connection, inside the session's transaction.

What stays as it was: driver errors are raised as SQLAlchemy's
``DBAPIError`` family, and a lost server connection invalidates the pooled
connection (so ``evaluation.retrying`` and the 503 handler work as before).
While anything listens for the engine's cursor events (a profile, a test
that counts statements), statements take SQLAlchemy's ordinary path, so
they are seen.
"""
from collections import namedtuple

from sqlalchemy import event
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from .extensions import db


class _Plan:
    """A statement compiled for one dialect: its SQL, how to bind its
    parameters and how to convert and name its result rows."""

    __slots__ = ("sql", "names", "defaults", "binds", "types", "make_row", "conversions", "returns_rows")

    def __init__(self, compiled, dialect):
        escaped = compiled.escaped_bind_names or {}
        self.sql = str(compiled)
        self.names = tuple(escaped.get(name, name) for name in compiled.positiontup) if compiled.positional else None
        self.defaults = {escaped.get(name, name): value for name, value in compiled.params.items()}
        self.binds = {}
        for bind, name in compiled.bind_names.items():
            processor = bind.type._cached_bind_processor(dialect)
            if processor is not None:
                self.binds[escaped.get(name, name)] = processor
        columns = compiled._result_columns
        keys = [column[0] for column in columns]
        self.make_row = None
        if keys and all(key.isidentifier() and not key.startswith("_") for key in keys) and len(set(keys)) == len(keys):
            self.make_row = namedtuple("Row", keys)._make
        self.types = [column[3] for column in columns]
        # The result columns' conversions depend on the driver's type codes
        # (PostgreSQL): made at the first run, from the cursor's description.
        self.conversions = None
        self.returns_rows = bool(columns or compiled.returning or getattr(compiled, "effective_returning", None))

    def arguments(self, params):
        """The driver's arguments for these parameters."""
        values = {**self.defaults, **params} if params else dict(self.defaults)
        for name, processor in self.binds.items():
            values[name] = processor(values[name])
        return tuple(values[name] for name in self.names) if self.names is not None else values

    def rows(self, dialect, cursor):
        """The cursor's rows, with SQLAlchemy's conversions, as named rows.
        The description is read only once: psycopg makes it anew at each look."""
        rows = cursor.fetchall()
        if self.conversions is None:
            description = cursor.description
            processors = [
                kind._cached_result_processor(dialect, column[1]) for kind, column in zip(self.types, description)
            ] if len(self.types) == len(description) else []
            self.conversions = tuple((index, convert) for index, convert in enumerate(processors) if convert)
        if rows and self.conversions:
            rows = [_converted(row, self.conversions) for row in rows]
        return [self.make_row(row) for row in rows] if self.make_row is not None else rows


class Prepared:
    """One Core statement without expanding (IN-list) parameters."""

    __slots__ = ("statement", "_by_dialect")

    def __init__(self, statement):
        self.statement = statement
        self._by_dialect = {}

    def plan(self, dialect):
        plan = self._by_dialect.get(dialect)
        if plan is None:
            plan = self._by_dialect[dialect] = _Plan(self.statement.compile(dialect=dialect), dialect)
        return plan

    def run(self, params=None):
        """Run in the session's transaction: a ``Ran`` (rows, rowcount)."""
        connection = _connection()
        if _listened(connection):
            result = connection.execute(self.statement, params or {})
            rows = list(result) if result.returns_rows else None
            return Ran(rows, result.rowcount if rows is None else -1)
        dialect = connection.dialect
        plan = self.plan(dialect)
        arguments = plan.arguments(params)
        cursor = connection.connection.cursor()
        try:
            cursor.execute(plan.sql, arguments)
            rows = plan.rows(dialect, cursor) if plan.returns_rows else None
            return Ran(rows, cursor.rowcount)
        except dialect.loaded_dbapi.Error as error:
            raise _wrapped(error, connection, cursor, plan.sql, arguments) from error
        finally:
            cursor.close()


def _connection():
    """The SQLAlchemy connection of the session's transaction."""
    session = db.session()
    return session.info.get(_CONNECTION) or session.connection()


def dialect_name():
    """The session's database: "sqlite" or "postgresql"."""
    return db.session.get_bind().dialect.name


def _listened(connection):
    """Something listens for cursor events (a profile, a test counting
    statements): statements then take SQLAlchemy's path, to be seen."""
    return connection._has_events or connection.engine._has_events


_AT_COMMIT = "bozka_at_commit"
_COMMITTED = "bozka_committed"


def at_commit(statement, params, key=None):
    """Run a statement with the commit (``commit_after``), before the ones
    given there. With a ``key``, its rows are kept for ``committed(key)``."""
    db.session.info.setdefault(_AT_COMMIT, []).append((statement, params, key))


def committed(key):
    """The rows of the ``at_commit`` statement of this key at the last commit."""
    return db.session.info.get(_COMMITTED, {}).pop(key, None)


@event.listens_for(Session, "after_soft_rollback")
def _forget_commit_statements(session, _previous_transaction):
    session.info.pop(_AT_COMMIT, None)


def commit_after(statements):
    """Run the ``at_commit`` statements, then ``(Prepared, params)`` pairs
    whose results nobody reads, and end the session's transaction with them.

    On PostgreSQL (psycopg) the statements and the COMMIT reach the server
    together, in pipeline mode: one round trip. The rows they lock (the
    campaign's counters, which every judgment changes) are then locked only
    while the server runs them, never while this process, between two round
    trips, serves its other requests. The session's own commit, which the
    caller (a ``before_commit`` hook) is part of, then finds nothing left to
    commit on the driver (psycopg skips a COMMIT outside a transaction) and
    ends as usual. Elsewhere (SQLite, a savepoint, anything listening for
    cursor events) the statements simply run and the session commits.
    """
    session = db.session()
    statements = (session.info.pop(_AT_COMMIT, None) or []) + [(statement, params, None) for statement, params in statements]
    results = session.info[_COMMITTED] = {}
    if not statements:
        return
    session.flush()  # everything else first
    connection = _connection()
    fairy = connection.connection
    pipeline = getattr(fairy.driver_connection, "pipeline", None)
    if pipeline is None or session.in_nested_transaction() or _listened(connection):
        for statement, params, key in statements:
            ran = statement.run(params)
            if key is not None:
                results[key] = ran.rows
        return
    dialect = connection.dialect
    cursors, sql, arguments = [], "COMMIT", ()
    try:
        with pipeline():
            for statement, params, key in statements:
                plan = statement.plan(dialect)
                sql, arguments = plan.sql, plan.arguments(params)
                # A cursor of its own for rows to read after the round trip.
                if key is not None or not cursors or cursors[-1][2] is not None:
                    cursors.append((fairy.cursor(), plan, key))
                cursors[-1][0].execute(sql, arguments)
            sql, arguments = "COMMIT", ()
            fairy.driver_connection.commit()
        for cursor, plan, key in cursors:
            if key is not None:
                results[key] = plan.rows(dialect, cursor)
    except dialect.loaded_dbapi.Error as error:
        raise _wrapped(error, connection, cursors[-1][0] if cursors else None, sql, arguments) from error
    finally:
        for cursor, _plan, _key in cursors:
            cursor.close()


def _wrapped(error, connection, cursor, sql, arguments):
    """A driver's error as SQLAlchemy raises it; a lost server connection
    invalidates the pooled one (so ``evaluation.retrying`` runs again)."""
    dialect = connection.dialect
    lost = dialect.is_disconnect(error, connection.connection, cursor)
    if lost:
        connection.invalidate(error)
    return DBAPIError.instance(
        sql, arguments, error, dialect.loaded_dbapi.Error, connection_invalidated=lost, dialect=dialect
    )


def _converted(row, conversions):
    """A row with SQLAlchemy's result conversions applied, (index, function) each."""
    values = list(row)
    for index, convert in conversions:
        value = values[index]
        if value is not None:
            values[index] = convert(value)
    return values


# The connection of the session's transaction, kept from its start to its
# end (``Session.connection()`` finds it again at some cost every time).
_CONNECTION = "bozka_connection"


@event.listens_for(Session, "after_begin")
def _keep_connection(session, transaction, connection):
    session.info[_CONNECTION] = connection
    session.info.pop(_COMMITTED, None)  # the last commit's rows are read before the next transaction


@event.listens_for(Session, "after_transaction_end")
def _forget_connection(session, transaction):
    if transaction.parent is None:
        session.info.pop(_CONNECTION, None)


class Ran:
    """What a ``Prepared`` statement returned: rows (tuples) and a row count."""

    __slots__ = ("rows", "rowcount")

    def __init__(self, rows, rowcount):
        self.rows = rows
        self.rowcount = rowcount

    def first(self):
        return self.rows[0] if self.rows else None

    def one(self):
        if self.rows is None or len(self.rows) != 1:
            raise LookupError(f"expected one row, got {0 if self.rows is None else len(self.rows)}")
        return self.rows[0]

    def scalar(self):
        return self.rows[0][0] if self.rows else None

    def all(self):
        return self.rows or []
