"""Bounded requests against a real server, served as ``make run`` serves it
(gunicorn, one gevent WebSocket worker): a 100 MB body is answered 413 at
once, before the client has sent it, and four of them at the same time
leave the worker's memory as it was (issue 21 measured 100 MB to 522 MB
before the limit). Under gevent's server the unread rest of a refused body
is then read and dropped in 16 KB pieces, to keep the connection alive."""
import os
import socket
import threading
import time

import pytest
import requests

from test_security_faults_live import Volunteer

MB = 1024 * 1024
BODY = 100 * MB
PIECE = b"x" * MB


@pytest.fixture(scope="module")
def volunteer(live):
    """A logged-in volunteer's cookie and CSRF token: the judging API reads
    the body of such a request (an anonymous one stops at the CSRF check)."""
    phone = Volunteer(live.url, "big")
    phone.register()
    cookie = "; ".join(f"{name}={value}" for name, value in phone.http.cookies.items())
    return f"Cookie: {cookie}\r\nX-CSRFToken: {phone.csrf}\r\n"


def worker_pid(site):
    """The gunicorn worker: the master's only child."""
    with open(f"/proc/{site.process.pid}/task/{site.process.pid}/children") as handle:
        children = handle.read().split()
    assert len(children) == 1, children
    return int(children[0])


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def headers(site, path, length, content_type="application/json", extra=""):
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{site.port}\r\nContent-Type: {content_type}\r\n"
            f"{extra}Content-Length: {length}\r\n\r\n").encode()


def read_answer(sock):
    """The status code and body of one HTTP answer (Content-Length framed)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection: {data!r}"
        data += chunk
    head, _sep, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
    while len(body) < length:
        body += sock.recv(65536)
    return int(head.split()[1]), body[:length]


@pytest.mark.parametrize("path, content_type, kind", [
    ("/c/demo-en-eu/api/judgment", "application/json", b'"status":'),
    ("/login", "application/x-www-form-urlencoded", b"<html"),
])
def test_a_100_mb_post_is_answered_413_before_it_is_sent(live, volunteer, path, content_type, kind):
    with socket.create_connection(("127.0.0.1", live.port), timeout=10) as sock:
        started = time.monotonic()
        sock.sendall(headers(live, path, BODY, content_type, volunteer) + PIECE[:64 * 1024])
        status, body = read_answer(sock)  # 64 KB of the 100 MB sent
        elapsed = time.monotonic() - started
    assert status == 413
    assert kind in body
    assert elapsed < 2, f"the 413 took {elapsed:.2f} s"


def test_four_concurrent_100_mb_posts_leave_the_workers_memory_as_it_was(live, volunteer):
    pid = worker_pid(live)
    requests.get(live.url + "/c/demo-en-eu/", timeout=10)  # warm
    before = rss_mb(pid)
    peak = [before]
    done = threading.Event()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], rss_mb(pid))
            time.sleep(0.02)

    answers = []

    def post():
        with socket.create_connection(("127.0.0.1", live.port), timeout=60) as sock:
            started = time.monotonic()
            sock.sendall(headers(live, "/c/demo-en-eu/api/judgment", BODY, extra=volunteer))
            first = None
            for _piece in range(BODY // MB):
                sock.sendall(PIECE)
                if first is None:  # the answer is there before the rest is sent
                    sock.setblocking(False)
                    try:
                        if sock.recv(1, socket.MSG_PEEK):
                            first = time.monotonic() - started
                    except BlockingIOError:
                        pass
                    sock.setblocking(True)
            status, _body = read_answer(sock)
            sent = time.monotonic() - started
            # The connection stays usable: the worker dropped the rest.
            sock.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{live.port}\r\n\r\n".encode())
            again, _body = read_answer(sock)
            answers.append((status, again, first, sent))

    watcher = threading.Thread(target=watch)
    watcher.start()
    posters = [threading.Thread(target=post) for _ in range(4)]
    for poster in posters:
        poster.start()
    for poster in posters:
        poster.join(timeout=120)
    done.set()
    watcher.join()
    after = rss_mb(pid)
    print(f"worker RSS: {before:.0f} MB before, {peak[0]:.0f} MB at most, {after:.0f} MB after; "
          f"answers (status, next, s to the 413, s to send): {answers}")
    assert len(answers) == 4
    assert all(status == 413 and again in (200, 302) for status, again, _first, _sent in answers)
    assert all(first is not None and first < 2 for _status, _again, first, _sent in answers)
    assert peak[0] - before < 30, f"the worker grew from {before:.0f} MB to {peak[0]:.0f} MB"
    assert requests.get(live.url + "/login", timeout=10).status_code == 200


def test_the_database_and_instance_are_private_while_the_site_runs(live):
    """Issue 21, item 7, on the running site (its -wal and -shm files too;
    the commands' files: test_security_files.py)."""
    requests.get(live.url + "/login", timeout=10)
    assert os.stat(live.instance).st_mode & 0o777 == 0o700
    for name in ("bozka.sqlite3", "bozka.sqlite3-wal", "bozka.sqlite3-shm"):
        assert os.stat(os.path.join(live.instance, name)).st_mode & 0o777 == 0o600, name
