"""One hostile client against the site served as ``make run`` serves it
(issue 28, item 5; app/worker.py), with small bounds so the test is quick:
connections from one address beyond the bound are closed unanswered while
the ones within it are served, another address still gets pages; a
request head that never completes is closed; Socket.IO (WebSocket
or long-polling) outlives twice the head timeout. The figures with 4,050
connections: scripts/bench/bench_flood.py."""
import socket
import time

import pytest
import requests
import socketio as python_socketio

from test_security_faults_live import SLUG, Site, Volunteer

LIMIT, EXTRA, HEAD_TIMEOUT = 20, 10, 5
CSS = b"GET /static/css/bozka.css HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


@pytest.fixture(scope="module")
def live():
    site = Site(BOZKA_CONNECTIONS_PER_ADDRESS=str(LIMIT), BOZKA_HEAD_TIMEOUT=str(HEAD_TIMEOUT),
                RATELIMIT_ENABLED="false")
    try:
        site.start()
        yield site
    finally:
        site.remove()


def first_bytes(sock):
    """What the server sends first: bytes of an answer, or b"" if it closed the connection."""
    sock.settimeout(30)
    try:
        return sock.recv(64)
    except ConnectionResetError:
        return b""


def test_connections_beyond_the_bound_are_closed_and_others_still_get_pages(live):
    port = live.port
    # Each sends a whole request at once: the ones within the bound are
    # answered; the server closes the others without reading them.
    socks = []
    try:
        for _ in range(LIMIT + EXTRA):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(CSS)
            socks.append(sock)
        answers = [first_bytes(sock) for sock in socks]
        served = [answer for answer in answers if answer.startswith(b"HTTP/1.1 200")]
        closed = [answer for answer in answers if answer == b""]
        assert (len(served), len(closed)) == (LIMIT, EXTRA), answers
        assert all(answer == b"" for answer in answers[LIMIT:])  # the last comers are the ones refused

        # While 127.0.0.1 holds its bound, another address gets a page.
        other = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=("127.0.0.2", 0))
        with other:
            other.sendall(b"GET /c/demo-en-eu/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert first_bytes(other).startswith(b"HTTP/1.1 200")
    finally:
        for sock in socks:
            sock.close()
    # Once they are closed, 127.0.0.1 is served again.
    assert requests.get(live.url + "/static/css/bozka.css", timeout=10).status_code == 200


def test_a_head_that_never_completes_is_closed(live):
    with socket.create_connection(("127.0.0.1", live.port), timeout=10) as idle, \
            socket.create_connection(("127.0.0.1", live.port), timeout=10) as slow:
        slow.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the blank line never comes
        assert first_bytes(idle) == b""
        answer = first_bytes(slow)
        assert answer == b"" or answer.startswith(b"HTTP/1.1 400"), answer
    assert "request headers not complete within" in live.log()


@pytest.mark.parametrize("transport", ["websocket", "polling"])
def test_socketio_outlives_the_head_timeout(live, transport):
    """A WebSocket, or Socket.IO's long-polling (a request held open for up
    to 25 s), is not timed once its request's head has arrived."""
    volunteer = Volunteer(live.url, f"long{transport}")
    volunteer.register()
    cookie = "; ".join(f"{name}={value}" for name, value in volunteer.http.cookies.items())
    client = python_socketio.Client(reconnection=False)
    client.connect(live.url, headers={"Cookie": cookie}, transports=[transport], wait_timeout=10)
    try:
        time.sleep(2 * HEAD_TIMEOUT)
        assert client.connected
        assert client.call("join", {"campaign": SLUG}, timeout=10) == {"ok": True}  # still carries traffic
    finally:
        client.disconnect()


def test_the_bounds_are_settings_and_off_per_address_behind_a_proxy(monkeypatch):
    from app.config import connection_bounds

    for name in ("BOZKA_PROXIES", "BOZKA_CONNECTIONS_PER_ADDRESS", "BOZKA_HEAD_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    assert connection_bounds() == (1000, 10.0)
    monkeypatch.setenv("BOZKA_PROXIES", "1")  # every connection comes from nginx: its limit_conn bounds addresses
    assert connection_bounds() == (0, 10.0)
    monkeypatch.setenv("BOZKA_CONNECTIONS_PER_ADDRESS", "50")
    monkeypatch.setenv("BOZKA_HEAD_TIMEOUT", "0")
    assert connection_bounds() == (50, None)
