"""Scratch databases for tests that need their own (imported as ``databases``).

On PostgreSQL (``BOZKA_TEST_DATABASE_URL``, started by scripts/services.sh)
a new database is created next to the test database and dropped afterwards;
otherwise a SQLite file in the test's temporary folder.
"""
import os
import secrets
from contextlib import contextmanager


def test_database_url():
    return os.environ.get("BOZKA_TEST_DATABASE_URL") or ""


def on_postgresql():
    return test_database_url().startswith("postgresql")


@contextmanager
def scratch_database(folder, prefix="bozka_scratch"):
    base = test_database_url()
    if not base.startswith("postgresql"):
        yield f"sqlite:///{os.path.join(str(folder), prefix + '.sqlite3')}"
        return
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    from sqlalchemy.pool import NullPool

    url = make_url(base)
    name = f"{prefix}_{secrets.token_hex(4)}"
    # A connection each time: the server may have been restarted meanwhile.
    admin = create_engine(url, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


_pg_schema = {"made": False}


def fresh_schema(database):
    """Empty tables for one test. On PostgreSQL (BOZKA_TEST_DATABASE_URL) the
    schema is made once per run and emptied between tests (much faster than
    dropping and creating it); if another fixture dropped it, it is made again.
    Call it inside the app context of the app under test."""
    from app.extensions import db

    if database.startswith("sqlite"):
        db.drop_all()
        db.create_all()
        return
    if _pg_schema["made"]:
        names = ", ".join(f'"{table.name}"' for table in db.metadata.sorted_tables)
        try:
            db.session.execute(db.text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
            db.session.commit()
            return
        except Exception:  # noqa: BLE001 (a table is missing: make them all again)
            db.session.rollback()
    db.drop_all()
    db.create_all()
    _pg_schema["made"] = True
