"""Many logged-in Socket.IO clients in one process, for bench_realtime.py and load.py.

One gevent greenlet per client, each with its own WebSocket
(``websocket-client``) speaking the Engine.IO v4 / Socket.IO v5 text
protocol directly, much lighter than a ``socketio.Client`` each:

    server: 0{"sid": ...}            client: 40                 connect, namespace /
    server: 40{"sid": ...}           client: 420["join", {"campaign": slug}]
    server: 430[{"ok": true}]        (the join's ack)
    server: 42["ranking", {...}]     each timestamped with time.time() as it is read
    server: 2                        client: 3                  ping / pong

Started with a JSON job as argv[1]: {"host", "port", "slug", "cookies": [...],
"source_addresses": [...] (optional: one per network, as volunteers come)}.
Commands, one JSON line each on stdin, answered by one JSON line on stdout:
{"cmd": "connect", "count": n} (until n clients have joined), {"cmd":
"collect"} (each client's [collected, received] since the last collect),
{"cmd": "quit"}.
"""
from gevent import monkey

monkey.patch_all()

import json  # noqa: E402
import resource  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import gevent  # noqa: E402
import websocket  # noqa: E402
from gevent.fileobject import FileObjectPosix  # noqa: E402
from gevent.lock import BoundedSemaphore  # noqa: E402

CONNECT_TIMEOUT = 30


class Listener:
    def __init__(self, job, number):
        self.job, self.number, self.cookie = job, number, job["cookies"][number]
        self.ws, self.joined, self.closed, self.error, self.rankings = None, False, False, None, []

    def connect(self):
        host, port = self.job["host"], self.job["port"]
        addresses = self.job.get("source_addresses")
        options = {}
        if addresses:
            options["socket"] = socket.create_connection(
                (host, port), CONNECT_TIMEOUT, (addresses[self.number % len(addresses)], 0))
        self.ws = websocket.create_connection(
            f"ws://{host}:{port}/socket.io/?EIO=4&transport=websocket", timeout=CONNECT_TIMEOUT,
            cookie=self.cookie, skip_utf8_validation=True, enable_multithread=False, **options)
        if not self.ws.recv().startswith("0"):
            raise RuntimeError("no Engine.IO open packet")
        self.ws.send("40")
        reply = self.ws.recv()
        while reply == "2":
            self.ws.send("3")
            reply = self.ws.recv()
        if not reply.startswith("40"):
            raise RuntimeError(f"Socket.IO connect refused: {reply[:120]!r}")
        self.ws.send("420" + json.dumps(["join", {"campaign": self.job["slug"]}]))
        while not self.joined:
            self.handle(self.ws.recv())
        self.ws.settimeout(None)

    def handle(self, message):
        received = time.time()
        if message.startswith("42"):
            event, payload = json.loads(message[2:])
            if event == "ranking":
                self.rankings.append((payload["collected"], received))
        elif message == "2":
            self.ws.send("3")
        elif message.startswith("43"):
            ack = json.loads(message[3:])
            if not (ack and isinstance(ack[0], dict) and ack[0].get("ok")):
                raise RuntimeError(f"join refused: {message[:120]!r}")
            self.joined = True
        elif message.startswith("41") or message == "1":
            raise RuntimeError("disconnected by the server")

    def run(self, gate):
        try:
            with gate:  # a few handshakes at a time, as browsers arriving would
                self.connect()
            while not self.closed:
                message = self.ws.recv()
                if not message and not self.ws.connected:
                    raise RuntimeError("connection closed")
                if message:
                    self.handle(message)
        except Exception as exc:  # noqa: BLE001
            if not self.closed:
                self.error = repr(exc)[:300]
        finally:
            self.close()

    def close(self):
        self.closed = True
        if self.ws is not None:
            try:
                self.ws.send_close()
            except Exception:  # noqa: BLE001
                pass
            self.ws.shutdown()


def main():
    job = json.loads(sys.argv[1])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    listeners, greenlets, gate = [], [], BoundedSemaphore(50)
    stdin = FileObjectPosix(sys.stdin.fileno(), "rb")

    def answer(obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    while line := stdin.readline():
        command = json.loads(line)
        if command["cmd"] == "connect":
            started, fresh = time.time(), []
            while len(listeners) < min(command["count"], len(job["cookies"])):
                fresh.append(Listener(job, len(listeners)))
                listeners.append(fresh[-1])
            greenlets += [gevent.spawn(listener.run, gate) for listener in fresh]
            deadline = time.time() + CONNECT_TIMEOUT + 5
            while time.time() < deadline and any(not x.joined and x.error is None for x in fresh):
                gevent.sleep(0.05)
            errors = [x.error for x in listeners if x.error]
            answer({"connected": sum(1 for x in listeners if x.joined and not x.closed),
                    "seconds": time.time() - started, "errors": len(errors), "first_errors": errors[:3]})
        elif command["cmd"] == "collect":
            rankings = []
            for listener in listeners:
                rankings.append(listener.rankings)
                listener.rankings = []
            answer({"rankings": rankings, "alive": sum(1 for x in listeners if x.joined and not x.closed),
                    "errors": [x.error for x in listeners if x.error][:3]})
        elif command["cmd"] == "quit":
            break
    for listener in listeners:
        listener.closed = True
    gevent.killall(greenlets, timeout=10)
    answer({"quit": True})


if __name__ == "__main__":
    main()
