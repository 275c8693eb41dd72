"""Socket.IO listeners for bench_realtime.py: many logged-in clients in one process.

One gevent greenlet per client, each with its own WebSocket
(``websocket-client``, monkey-patched by gevent) speaking the Engine.IO v4 /
Socket.IO v5 text protocol directly, which is much lighter than a full
``socketio.Client`` per connection:

    server: 0{"sid": ..., "pingInterval": ...}      Engine.IO open
    client: 40                                       Socket.IO connect, namespace /
    server: 40{"sid": ...}   (44{...} if refused)
    client: 420["join", {"campaign": slug}]          event with ack id 0
    server: 430[{"ok": true}]                        the ack
    server: 42["ranking", {...}]  42["me", {...}]    events
    server: 2   client: 3                            Engine.IO ping / pong

Every "ranking" event is timestamped with ``time.time()`` as soon as the frame
is read, then parsed; the client logs (collected, time) of each.

Commands, one JSON object per line on stdin; one JSON answer per line on stdout:

    {"cmd": "connect", "count": n}   connect and join until n clients are up
    {"cmd": "collect"}               the rankings received since the last collect
    {"cmd": "quit"}                  close every socket and exit

Started with a JSON job as argv[1]: {"host", "port", "slug", "cookies": [...],
"connect_timeout", "concurrency", "source_addresses"}.
"""
from gevent import monkey

monkey.patch_all()

import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import gevent  # noqa: E402
from gevent.fileobject import FileObjectPosix  # noqa: E402
from gevent.lock import BoundedSemaphore  # noqa: E402
import websocket  # noqa: E402


def raise_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class Listener:
    def __init__(self, job, number, cookie):
        self.job = job
        self.number = number
        self.cookie = cookie
        self.ws = None
        self.joined = False
        self.error = None
        self.rankings = []  # (collected, time received)
        self.me = 0
        self.pings = 0
        self.closed = False

    def connect(self):
        url = f"ws://{self.job['host']}:{self.job['port']}/socket.io/?EIO=4&transport=websocket"
        timeout = self.job.get("connect_timeout", 20)
        options = {}
        addresses = self.job.get("source_addresses")
        if addresses:  # as volunteers on their own networks (nginx's ip_hash tells them apart)
            options["socket"] = socket.create_connection(
                (self.job["host"], self.job["port"]), timeout, (addresses[self.number % len(addresses)], 0)
            )
        ws = websocket.create_connection(
            url, timeout=timeout, cookie=self.cookie, skip_utf8_validation=True, enable_multithread=False, **options
        )
        self.ws = ws
        opening = ws.recv()
        if not opening.startswith("0"):
            raise RuntimeError(f"no Engine.IO open packet: {opening[:80]!r}")
        ws.send("40")
        reply = ws.recv()
        while reply == "2":  # a ping may come first
            ws.send("3")
            reply = ws.recv()
        if not reply.startswith("40"):
            raise RuntimeError(f"Socket.IO connect refused: {reply[:120]!r}")
        ws.send('420' + json.dumps(["join", {"campaign": self.job["slug"]}]))
        # Wait for the ack, handling whatever comes first (the initial state).
        while not self.joined:
            self._handle(ws.recv())
        ws.settimeout(None)

    def _handle(self, message):
        received = time.time()
        if message.startswith("42"):
            event, payload = json.loads(message[2:])
            if event == "ranking":
                self.rankings.append((payload["collected"], received))
            elif event == "me":
                self.me += 1
        elif message == "2":
            self.pings += 1
            self.ws.send("3")
        elif message.startswith("43"):
            ack = json.loads(message[3:])
            if not (ack and isinstance(ack[0], dict) and ack[0].get("ok")):
                raise RuntimeError(f"join refused: {message[:120]!r}")
            self.joined = True
        elif message.startswith("41") or message == "1":
            raise RuntimeError(f"disconnected by the server: {message[:80]!r}")

    def run(self, gate):
        try:
            with gate:
                self.connect()
        except Exception as exc:  # noqa: BLE001
            self.error = f"connect: {exc!r}"[:300]
            self.close()
            return
        try:
            while not self.closed:
                message = self.ws.recv()
                if message is None or message == "":
                    if not self.ws.connected:
                        raise RuntimeError("connection closed")
                    continue
                self._handle(message)
        except Exception as exc:  # noqa: BLE001
            if not self.closed:
                self.error = f"receive: {exc!r}"[:300]
        finally:
            self.close()

    def close(self):
        self.closed = True
        if self.ws is not None:
            try:
                self.ws.send_close()  # no waiting for the server's reply
            except Exception:  # noqa: BLE001
                pass
            self.ws.shutdown()


def main():
    job = json.loads(sys.argv[1])
    fd_limit = raise_fd_limit()
    listeners = []
    greenlets = []
    stdin = FileObjectPosix(sys.stdin.fileno(), "rb")

    def answer(obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    started_cpu = os.times()
    while True:
        line = stdin.readline()
        if not line:
            break
        command = json.loads(line)
        if command["cmd"] == "connect":
            target = min(command["count"], len(job["cookies"]))
            started = time.time()
            fresh = []
            while len(listeners) < target:
                listener = Listener(job, len(listeners), job["cookies"][len(listeners)])
                listeners.append(listener)
                fresh.append(listener)
            # A limited number of handshakes at a time, as browsers arriving would.
            gate = BoundedSemaphore(job.get("concurrency", 50))
            for listener in fresh:
                greenlets.append(gevent.spawn(listener.run, gate))
            deadline = time.time() + job.get("connect_timeout", 20) + 5
            while time.time() < deadline and any(not l.joined and l.error is None for l in fresh):
                gevent.sleep(0.05)
            up = sum(1 for l in listeners if l.joined and not l.closed)
            errors = [l.error for l in listeners if l.error]
            answer({
                "connected": up,
                "wanted": target,
                "seconds": time.time() - started,
                "errors": len(errors),
                "first_errors": errors[:3],
                "fd_limit": fd_limit,
            })
        elif command["cmd"] == "collect":
            rankings = []
            for listener in listeners:
                rankings.append(listener.rankings)
                listener.rankings = []
            cpu = os.times()
            answer({
                "rankings": rankings,
                "alive": sum(1 for l in listeners if l.joined and not l.closed),
                "errors": [l.error for l in listeners if l.error][:3],
                "pings": sum(l.pings for l in listeners),
                "me": sum(l.me for l in listeners),
                "cpu": cpu.user + cpu.system - started_cpu.user - started_cpu.system,
            })
        elif command["cmd"] == "quit":
            break
    for listener in listeners:
        listener.closed = True
    gevent.killall(greenlets, timeout=10)  # each closes its own socket
    answer({"quit": True})


if __name__ == "__main__":
    main()
