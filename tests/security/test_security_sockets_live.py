"""Bounded sockets against a real server, served as ``make run`` serves it,
with real python-socketio clients over WebSocket (issue 21, item 5): a
sixth connection of one account closes its first; logging out closes the
rest; another account's socket stays; ``flask user password`` in a process
of its own closes the account's sockets."""
import subprocess
import time

import socketio as python_socketio

from e2e.conftest import ROOT, flask_command
from test_security_faults_live import SLUG, Volunteer


def connect(site, volunteer):
    cookie = "; ".join(f"{name}={value}" for name, value in volunteer.http.cookies.items())
    client = python_socketio.Client(reconnection=False)
    client.connect(site.url, headers={"Cookie": cookie}, transports=["websocket"], wait_timeout=10)
    return client


def until(condition, timeout=10):
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def test_the_oldest_socket_goes_and_logging_out_closes_the_rest(live):
    ane, jon = Volunteer(live.url, "ane"), Volunteer(live.url, "jon")
    ane.register()
    jon.register()
    theirs = connect(live, jon)
    mine = []
    try:
        for _ in range(5):
            mine.append(connect(live, ane))
            time.sleep(0.05)  # in order: the first is the oldest
        assert all(client.connected for client in mine)
        mine.append(connect(live, ane))
        assert until(lambda: not mine[0].connected)
        time.sleep(0.3)
        assert all(client.connected for client in mine[1:]) and theirs.connected

        answer = ane.http.post(live.url + "/logout", data={"csrf_token": ane.csrf}, timeout=10)
        assert answer.status_code == 200
        assert until(lambda: not any(client.connected for client in mine))
        time.sleep(0.3)
        assert theirs.connected
    finally:
        for client in mine + [theirs]:
            client.disconnect()


def test_flask_user_password_closes_the_servers_sockets(live):
    """With one process and no message queue, ``flask user password`` (a
    process of its own) cannot reach the server's sockets: the server sees
    the new password in the database and closes the account's sockets itself
    within a few seconds; another account's socket stays."""
    mia, leo = Volunteer(live.url, "mia"), Volunteer(live.url, "leo")
    mia.register()
    leo.register()
    client, theirs = connect(live, mia), connect(live, leo)
    try:
        assert client.call("join", {"campaign": SLUG}, timeout=10) == {"ok": True}
        done = subprocess.run(flask_command("user", "password", "mia@example.org", "--password", "a brand new horse 4"),
                              cwd=ROOT, env=live.env, capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stdout + done.stderr
        assert until(lambda: not client.connected, timeout=5), "the old session's socket is still open"
        time.sleep(0.3)
        assert theirs.connected
        assert "Traceback" not in live.log()
    finally:
        for one in (client, theirs):
            one.disconnect()
