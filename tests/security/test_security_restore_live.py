"""``flask restore`` against a real server, served as ``make run`` serves it
(issue 21, item 2; issue 28): while the server runs, restore refuses, says
how it knows (the server's shared lock on the lock file beside the database,
and which process holds it) and how to stop the server, and changes
nothing: a judgment made after the backup is still there. The same holds
for a restore run with another instance folder, naming the same database
file by another path (a symbolic link). Once the server has stopped, the
same command restores the backup, and the server starts again on it."""
import os
import random
import shutil
import subprocess
import tempfile

from e2e.conftest import ROOT, flask_command
from test_security_faults_live import Site, Volunteer


def flask(site, *args):
    return subprocess.run(flask_command(*args), cwd=ROOT, env=site.env, capture_output=True, text=True, timeout=120)


def answered(site):
    return site.query("SELECT count(*) FROM items WHERE answered_at IS NOT NULL")[0][0]


def test_restore_refuses_while_a_server_runs_and_works_once_it_stopped():
    site = Site()
    try:
        site.start()
        backup = os.path.join(site.instance, "before.sqlite3")
        assert flask(site, "backup", backup).returncode == 0
        before = answered(site)
        volunteer = Volunteer(site.url, "after")
        volunteer.register()
        volunteer.answer_one(random.Random(1))
        assert volunteer.acked and answered(site) == before + 1

        refused = flask(site, "restore", backup, "--yes")
        assert refused.returncode != 0
        message = refused.stderr
        assert "a server is using this database, so nothing was restored" in message
        assert os.path.realpath(site.database) + "-server.lock" in message
        worker = open(f"/proc/{site.process.pid}/task/{site.process.pid}/children").read().split()
        assert f"held by process {worker[0]}" in message  # the gunicorn worker that served
        assert "Stop the server first" in message and "docs/deployment.md" in message
        assert answered(site) == before + 1  # nothing changed
        assert site.query("SELECT count(*) FROM users WHERE username = 'after'")[0][0] == 1
        assert volunteer.item() is not None  # and the server still serves

        # Another instance folder, the same database through a link: refused too.
        other = tempfile.mkdtemp(prefix="bozka-other-instance-")
        try:
            link = os.path.join(other, "same.sqlite3")
            os.symlink(site.database, link)
            elsewhere = subprocess.run(flask_command("restore", backup, "--yes"), cwd=ROOT, capture_output=True,
                                       text=True, timeout=120,
                                       env={**site.env, "BOZKA_INSTANCE": other, "DATABASE_URL": f"sqlite:///{link}"})
            assert elsewhere.returncode != 0
            assert "a server is using this database, so nothing was restored" in elsewhere.stderr
            assert f"held by process {worker[0]}" in elsewhere.stderr
            assert not os.path.exists(os.path.join(other, "server.lock"))
        finally:
            shutil.rmtree(other, ignore_errors=True)
        assert answered(site) == before + 1  # nothing changed
        volunteer.answer_one(random.Random(3))  # and judgments are still acknowledged and kept
        assert answered(site) == before + 2

        site.stop()
        restored = flask(site, "restore", backup, "--yes")
        assert restored.returncode == 0, restored.stdout + restored.stderr
        assert answered(site) == before
        assert site.query("SELECT count(*) FROM users WHERE username = 'after'")[0][0] == 0

        site.start()  # the server comes back on the restored database
        again = Volunteer(site.url, "later")
        again.register()
        again.answer_one(random.Random(2))
        assert answered(site) == before + 1
    finally:
        site.remove()

