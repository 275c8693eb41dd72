"""The server lock that ``flask restore`` asks (app/serverlock.py; issue 21,
item 2; keyed to the database file since issue 28): a process takes it with
the first request it serves, command-line commands never take it, and the
tests' apps leave none behind; every name of the database file gives the
same lock. Against a real server: test_security_restore_live.py."""
import os

import pytest

from app import serverlock
from app.extensions import db
from databases import fresh_schema, on_postgresql
from helpers import build_app, write_campaign


def free(database):
    try:
        with serverlock.exclusive(database):
            return True
    except serverlock.ServerRunning:
        return False


@pytest.fixture
def serving_app(tmp_path, monkeypatch):
    """An app as a server makes it (the lock on), in its own instance folder."""
    monkeypatch.setenv("BOZKA_INSTANCE", str(tmp_path / "instance"))
    app = build_app(tmp_path, BOZKA_SERVER_LOCK=True)
    with app.app_context():
        fresh_schema(app.config["SQLALCHEMY_DATABASE_URI"])
        app.database = db.engine.url.database  # None on PostgreSQL
        yield app
        if hasattr(app.wsgi_app, "release"):
            app.wsgi_app.release()
        db.session.remove()
        db.engine.dispose()


SQLITE_ONLY = pytest.mark.skipif(on_postgresql(), reason="the lock and flask restore are SQLite's (PostgreSQL: pg_restore)")


@SQLITE_ONLY
def test_commands_do_not_take_the_lock_and_the_first_request_does(serving_app, tmp_path):
    folder = write_campaign(str(tmp_path / "campaign"))
    imported = serving_app.test_cli_runner().invoke(args=["campaign", "import", folder])
    assert imported.exit_code == 0, imported.output
    assert free(serving_app.database)
    assert serving_app.test_client().get("/").status_code < 500
    assert not free(serving_app.database)
    with pytest.raises(serverlock.ServerRunning) as running:
        with serverlock.exclusive(serving_app.database):
            pass
    assert running.value.pids == [os.getpid()]
    lock = serverlock.path_of(serving_app.database)
    assert lock == serving_app.database + "-server.lock"  # beside the database, not in the instance folder
    assert oct(os.stat(lock).st_mode & 0o777) == "0o600"
    serving_app.wsgi_app.release()
    assert free(serving_app.database)


@SQLITE_ONLY
def test_every_name_of_the_database_file_finds_the_same_lock(serving_app, tmp_path, monkeypatch):
    serving_app.test_client().get("/")
    link = tmp_path / "elsewhere" / "link.sqlite3"
    link.parent.mkdir()
    link.symlink_to(serving_app.database)
    monkeypatch.chdir(os.path.dirname(serving_app.database))
    for name in (str(link), os.path.basename(serving_app.database), serving_app.database):
        assert not free(name), name


@SQLITE_ONLY
def test_restore_refuses_and_says_why(serving_app, tmp_path):
    runner = serving_app.test_cli_runner()
    backup = str(tmp_path / "copy.sqlite3")
    assert runner.invoke(args=["backup", backup]).exit_code == 0
    serving_app.test_client().get("/")
    refused = runner.invoke(args=["restore", backup, "--yes"])
    assert refused.exit_code == 1
    assert "a server is using this database, so nothing was restored" in refused.output
    assert f"held by process {os.getpid()}" in refused.output
    serving_app.wsgi_app.release()
    # Past the lock now (this test schema has no migrations: the backup's check refuses it).
    assert "not a Bozka database" in runner.invoke(args=["restore", backup, "--yes"]).output


@pytest.mark.skipif(not on_postgresql(), reason="PostgreSQL only")
def test_on_postgresql_restore_refuses_and_the_server_takes_no_file_lock(serving_app, tmp_path):
    assert not hasattr(serving_app.wsgi_app, "release")  # nothing to lock: restore is SQLite's
    backup = tmp_path / "copy.sqlite3"
    backup.write_bytes(b"")
    refused = serving_app.test_cli_runner().invoke(args=["restore", str(backup), "--yes"])
    assert refused.exit_code == 1 and "pg_restore" in refused.output


def test_the_tests_apps_take_no_lock(app, client):
    assert client.get("/").status_code < 500
    assert not hasattr(app.wsgi_app, "release")
