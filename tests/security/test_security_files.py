"""Files only their owner reads (issue 21, item 7): the instance folder
0700; the SQLite database, its -wal and -shm files, backups and the secret
key 0600, whatever the umask; the demo organiser's password printed once
and kept nowhere in plain text. The running site's files:
test_security_limits_live.py."""
import os
import re
import sqlite3
import subprocess

from werkzeug.security import check_password_hash

from app import create_app
from app.extensions import db
from app.models import User
from e2e.conftest import ROOT, flask_command

EMAIL = "organiser@bozka.test"


def mode(path):
    return os.stat(path).st_mode & 0o777


def run(instance, *args):
    env = {**os.environ, "BOZKA_INSTANCE": str(instance), "BOZKA_ENV": "development"}
    for name in ("SECRET_KEY", "DATABASE_URL", "SOCKETIO_MESSAGE_QUEUE", "MAIL_SERVER"):
        env.pop(name, None)
    # The usual umask: files would be readable by everyone unless made private.
    done = subprocess.run(flask_command(*args), cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
                          preexec_fn=lambda: os.umask(0o022))
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def all_bytes(folder):
    found = b""
    for parent, _dirs, files in os.walk(folder):
        for name in files:
            with open(os.path.join(parent, name), "rb") as handle:
                found += handle.read()
    return found


def test_upgrade_demo_and_backup_make_private_files(tmp_path):
    instance = tmp_path / "instance"
    run(instance, "db", "upgrade")
    shown = run(instance, "demo")
    assert mode(instance) == 0o700
    assert mode(instance / "bozka.sqlite3") == 0o600
    assert mode(instance / "secret_key") == 0o600
    # The password is printed once, and no file keeps it.
    password = re.search(rf"{re.escape(EMAIL)} / (\S+)", shown).group(1)
    assert not (instance / "demo-organiser.txt").exists()
    assert password.encode() not in all_bytes(instance)
    again = run(instance, "demo")
    assert password not in again
    assert f"flask --app wsgi user password {EMAIL}" in again  # how to get a new one
    backed_up = run(instance, "backup")
    path = re.search(r"Backed up to (\S+)", backed_up).group(1)
    assert mode(instance / "backups") == 0o700
    assert mode(path) == 0o600
    named = tmp_path / "elsewhere.sqlite3"
    run(instance, "backup", str(named))
    assert mode(named) == 0o600


def test_the_files_of_an_older_instance_are_tightened(tmp_path):
    instance = tmp_path / "instance"
    run(instance, "db", "upgrade")
    os.chmod(instance, 0o755)
    os.chmod(instance / "bozka.sqlite3", 0o644)
    os.chmod(instance / "secret_key", 0o644)
    (instance / "demo-organiser.txt").write_text(f"{EMAIL}\nold password\n")  # as older versions wrote it
    shown = run(instance, "demo")
    assert "held the password in plain text" in shown
    assert not (instance / "demo-organiser.txt").exists()
    assert (mode(instance), mode(instance / "bozka.sqlite3"), mode(instance / "secret_key")) == (0o700, 0o600, 0o600)


def test_the_demo_organisers_password_can_be_set_again(tmp_path):
    instance = tmp_path / "instance"
    run(instance, "db", "upgrade")
    run(instance, "demo")
    assert "New password set" in run(instance, "user", "password", EMAIL, "--password", "another horse 7")
    connection = sqlite3.connect(instance / "bozka.sqlite3")
    (digest,) = connection.execute("SELECT password_hash FROM users WHERE email = ?", (EMAIL,)).fetchone()
    connection.close()
    assert check_password_hash(digest, "another horse 7")


def test_the_write_ahead_log_is_private_too(tmp_path, monkeypatch):
    instance = tmp_path / "instance"
    run(instance, "db", "upgrade")
    monkeypatch.setenv("BOZKA_INSTANCE", str(instance))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    old = os.umask(0o022)
    try:
        app = create_app({"SECRET_KEY": "files", "SOCKETIO_ASYNC_MODE": "threading", "BOZKA_CHECKPOINT_INTERVAL": 0})
        with app.app_context():
            db.session.add(User(email="wal@example.org", username="wal", password_hash="x"))
            db.session.commit()  # the connection stays open in the pool: -wal and -shm are there
            for name in ("bozka.sqlite3", "bozka.sqlite3-wal", "bozka.sqlite3-shm"):
                assert mode(instance / name) == 0o600, name
            db.session.remove()
            db.engine.dispose()
    finally:
        os.umask(old)
