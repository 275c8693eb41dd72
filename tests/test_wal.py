"""SQLite: write-ahead-log checkpoints made in the background (app/wal.py)."""
import os
import sqlite3

import pytest
from sqlalchemy import text

from app import create_app, wal
from app.extensions import db


def _sqlite_path(app):
    with app.app_context():
        if db.engine.dialect.name != "sqlite":
            pytest.skip("SQLite only")
        return os.path.abspath(db.engine.url.database)


def test_request_connections_leave_checkpoints_to_the_background(app):
    path = _sqlite_path(app)
    with app.app_context():
        assert db.session.execute(text("PRAGMA wal_autocheckpoint")).scalar() == wal.BACKSTOP_PAGES
        assert db.session.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        db.session.execute(text("CREATE TABLE scratch (x TEXT)"))
        db.session.execute(text("INSERT INTO scratch VALUES ('some data for the log')"))
        db.session.commit()
    assert (os.getpid(), path) in wal._started  # the first connection started the task
    connection = sqlite3.connect(path)
    try:
        busy, log_frames, checkpointed = wal._checkpoint(connection)
    finally:
        connection.close()
    assert busy == 0 and log_frames > 0 and checkpointed == log_frames


def test_interval_zero_leaves_checkpoints_to_sqlite(tmp_path):
    app = create_app(
        {
            "TESTING": True,
            "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'plain.sqlite3'}",
            "SECRET_KEY": "test-secret",
            "SOCKETIO_ASYNC_MODE": "threading",
            "BOZKA_REALTIME_TICKER": False,
            "BOZKA_CHECKPOINT_INTERVAL": 0,
        }
    )
    with app.app_context():
        assert db.session.execute(text("PRAGMA wal_autocheckpoint")).scalar() == 1000  # SQLite's default
        db.session.remove()
