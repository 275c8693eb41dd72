"""Clients for the multi-process tests: volunteers over HTTP (each from its
own loopback address, as real volunteers come: rate limits count them
apart) and Socket.IO listeners
speaking the Engine.IO v4 / Socket.IO v5 text protocol over a WebSocket
(``websocket-client``), as scripts/bench/bench_realtime_listener.py does."""
import http.client
import json
import re
import threading
import time
from urllib.parse import urlsplit

import requests
import websocket
from requests.adapters import HTTPAdapter

PASSWORD = "correct horse 1"
SLUG = "test"


class SourceAddressAdapter(HTTPAdapter):
    def __init__(self, address, **kwargs):
        self.address = address
        super().__init__(**kwargs)

    def init_poolmanager(self, *args, **kwargs):
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


def csrf_from(html):
    match = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', html) or re.search(
        r'value="([^"]+)"[^>]*name="csrf_token"', html
    )
    assert match, "no csrf_token on the page"
    return match.group(1)


def register(base, name, address="127.0.0.1"):
    """Register and join through the real pages; returns (cookie, csrf)."""
    session = requests.Session()
    session.mount("http://", SourceAddressAdapter(address))
    page = session.get(f"{base}/c/{SLUG}/register", timeout=30)
    page.raise_for_status()
    response = session.post(
        f"{base}/c/{SLUG}/register",
        data={
            "csrf_token": csrf_from(page.text),
            "username": name,
            "email": f"{name}@example.org",
            "password": PASSWORD,
            "password2": PASSWORD,
            "age_group": "26-35",
            "studies_level": "university",
            "studies_field": "language",
            "source_level": "C1-C2",
            "target_level": "C1-C2",
            "consent": "y",
        },
        allow_redirects=False,
        timeout=30,
    )
    assert response.status_code == 302, f"registering {name}: HTTP {response.status_code}"
    page = session.get(f"{base}/c/{SLUG}/welcome", timeout=30)
    page.raise_for_status()
    return f"session={session.cookies.get('session')}", csrf_from(page.text)


def confirm(base, name, read_logs, address="127.0.0.1", timeout=30):
    """Open the confirmation link mailed to ``name`` at registration, as the
    volunteer does from their mailbox: only confirmed volunteers are ranked.
    With no mail server the processes log their mail; ``read_logs`` returns
    the text of every process's log (whichever sent it)."""
    pattern = re.compile(rf"to {re.escape(name)}@example\.org: .*?\n.*?https?://[^/\s]+(/confirm/\S+)", re.S)
    deadline = time.monotonic() + timeout
    while not (found := pattern.findall(read_logs())):
        assert time.monotonic() < deadline, f"no confirmation mail to {name} in the servers' logs"
        time.sleep(0.2)
    session = requests.Session()  # the link works logged out too (another browser)
    session.mount("http://", SourceAddressAdapter(address))
    page = session.get(base + found[-1], timeout=30)
    page.raise_for_status()
    assert "your email is confirmed" in page.text, f"confirming {name}: {page.url}"


def correct_choice(item, rng):
    """Controls (``Control n.``: ``Good n.`` against ``Bad n.``) answered right."""
    if item["source"].startswith("Control "):
        return "left" if item["left"].startswith("Good ") else "right"
    return rng.choice(("left", "right", "equal"))


class Volunteer:
    """One volunteer's keep-alive connection to one address."""

    def __init__(self, base, cookie, csrf, address="127.0.0.1"):
        parts = urlsplit(base)
        self.host, self.port, self.address = parts.hostname, parts.port, address
        self.headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Cookie": cookie,
            "X-CSRFToken": csrf,
        }
        self.connection = None
        self.used = 0.0
        self.item = None

    def request(self, method, path, body=None):
        # gunicorn closes a connection idle for 10 s (app/worker.py), nginx after 15 s: a new one after 5 s.
        if self.connection is not None and time.monotonic() - self.used > 5:
            self.connection.close()
            self.connection = None
        if self.connection is None:
            self.connection = http.client.HTTPConnection(
                self.host, self.port, timeout=60, source_address=(self.address, 0)
            )
        try:
            self.connection.request(method, path, body=body, headers=self.headers)
            response = self.connection.getresponse()
            data = response.read()
            self.used = time.monotonic()
        except (OSError, http.client.HTTPException):
            self.connection.close()
            self.connection = None
            raise
        cookie = response.getheader("Set-Cookie")
        if cookie and cookie.startswith("session="):
            self.headers["Cookie"] = cookie.split(";", 1)[0]
        return response.status, data

    def fetch(self):
        status, data = self.request("GET", f"/c/{SLUG}/api/item")
        assert status == 200, f"GET api/item: HTTP {status}: {data[:200]!r}"
        payload = json.loads(data)
        self.item = payload["item"]
        return payload

    def answer(self, choice):
        """(HTTP status, payload or None)."""
        body = json.dumps({"token": self.item["token"], "choice": choice}).encode()
        status, data = self.request("POST", f"/c/{SLUG}/api/judgment", body)
        if status != 200:
            return status, None
        payload = json.loads(data)
        self.item = payload.get("item")
        return status, payload

    def close(self):
        if self.connection is not None:
            self.connection.close()


class Listener:
    """A logged-in Socket.IO client in a thread; keeps every event received."""

    def __init__(self, base, cookie, slug=SLUG):
        parts = urlsplit(base)
        self.url = f"ws://{parts.hostname}:{parts.port}/socket.io/?EIO=4&transport=websocket"
        self.cookie, self.slug = cookie, slug
        self.events = []  # (time received, event, payload)
        self.joined = threading.Event()
        self.error = None
        self.closed = False
        self.ws = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self, timeout=20):
        self.thread.start()
        if not self.joined.wait(timeout):
            raise AssertionError(f"Socket.IO join did not complete: {self.error}")
        return self

    def disconnected(self, timeout=10):
        """Whether the server closed the connection within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(event == "disconnected" for _at, event, _payload in list(self.events)):
                return True
            time.sleep(0.05)
        return False

    def rankings(self):
        return [(at, payload) for at, event, payload in list(self.events) if event == "ranking"]

    def wait_for(self, predicate, timeout=15):
        """The first ranking payload satisfying ``predicate``, and when it came."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for at, payload in self.rankings():
                if predicate(payload):
                    return at, payload
            time.sleep(0.02)
        return None, None

    def _run(self):
        try:
            ws = websocket.create_connection(self.url, timeout=20, cookie=self.cookie)
            self.ws = ws
            assert ws.recv().startswith("0"), "no Engine.IO open packet"
            ws.send("40")
            reply = ws.recv()
            while reply == "2":
                ws.send("3")
                reply = ws.recv()
            assert reply.startswith("40"), f"Socket.IO connect refused: {reply[:120]!r}"
            ws.send("420" + json.dumps(["join", {"campaign": self.slug}]))
            ws.settimeout(None)
            while not self.closed:
                message = ws.recv()
                received = time.monotonic()
                if not message:
                    if not ws.connected:
                        break
                    continue
                if message == "2":
                    ws.send("3")
                elif message.startswith("430"):
                    ack = json.loads(message[3:])
                    assert ack and ack[0].get("ok"), f"join refused: {message[:120]!r}"
                    self.joined.set()
                elif message.startswith("41"):  # the server closed this Socket.IO connection
                    self.events.append((received, "disconnected", None))
                elif message.startswith("42"):
                    event, payload = json.loads(message[2:])
                    self.events.append((received, event, payload))
        except Exception as exc:  # noqa: BLE001 (reported by start() or the test)
            if not self.closed:
                self.error = repr(exc)

    def close(self):
        self.closed = True
        if self.ws is not None:
            try:
                self.ws.send_close()
            except Exception:  # noqa: BLE001
                pass
            self.ws.shutdown()
        self.thread.join(timeout=5)
