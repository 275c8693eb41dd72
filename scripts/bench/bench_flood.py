"""One hostile client (issue 28, item 5): 4,050 idle connections from one address.

    .venv/bin/python scripts/bench/bench_flood.py [--connections 4050] [--seconds 30] [--unbounded | --nginx]

Bozka served as ``make run`` serves it (harness.Server: the Makefile's
gunicorn line). The attacker, 127.0.0.1, opens ``--connections`` TCP
connections, sends nothing, and opens a new one for each the server closes,
so it holds as many as the server lets it for ``--seconds``. Meanwhile
another client, 127.0.0.2 (Linux routes all of 127/8 to loopback), fetches
the CSS, the campaign page and a volunteer's judging page, each on a new
connection with a 10 s timeout, one after another; the same fetches are
timed first without the flood. ``--unbounded`` turns app/worker.py's bounds
off (BOZKA_CONNECTIONS_PER_ADDRESS=0, BOZKA_HEAD_TIMEOUT=0): the worker as it
was before, for comparison. ``--nginx`` floods the public setup instead: one
process of deploy/gunicorn.conf.py behind deploy/nginx.conf (scripts/cluster.py,
on SQLite). The open-files limit of this process and the server's is raised
to its hard limit.
"""
import argparse
import contextlib
import http.client
import os
import selectors
import socket
import sys
import threading
import time

from harness import (ROOT, SLUG, Server, bozka_instance, log, machine_busy, opening_args, percentile, raise_fd_limit,
                     register, scratch, table, write_campaign)

OTHER = "127.0.0.2"
PAGES = ("/static/css/bozka.css", f"/c/{SLUG}/", f"/c/{SLUG}/evaluate")


class Flood(threading.Thread):
    """Holds up to ``count`` idle connections from 127.0.0.1; replaces each one the server closes."""

    def __init__(self, port, count, seconds):
        super().__init__(daemon=True)
        self.port, self.count, self.seconds = port, count, seconds
        self.selector = selectors.DefaultSelector()
        self.opened = self.closed_by_server = self.refused = 0
        self.held = []  # open connections, sampled every second
        self.ready = threading.Event()
        self.stop = threading.Event()

    def connect(self):
        sock = socket.socket()
        sock.settimeout(2)
        try:
            sock.connect(("127.0.0.1", self.port))
        except OSError:
            sock.close()
            self.refused += 1
            return
        sock.setblocking(False)
        self.selector.register(sock, selectors.EVENT_READ)
        self.opened += 1

    def run(self):
        for _ in range(self.count):
            self.connect()
        self.ready.set()
        deadline = time.monotonic() + self.seconds
        next_sample = time.monotonic()
        while time.monotonic() < deadline and not self.stop.is_set():
            for key, _ in self.selector.select(timeout=0.2):
                try:
                    data = key.fileobj.recv(4096)
                except OSError:
                    data = b""
                if not data:  # closed by the server (a byte would be a response: none is asked for)
                    self.selector.unregister(key.fileobj)
                    key.fileobj.close()
                    self.closed_by_server += 1
            missing = self.count - len(self.selector.get_map())
            for _ in range(min(missing, 500)):  # in batches: the other client's fetches go on meanwhile
                self.connect()
            if time.monotonic() >= next_sample:
                self.held.append(len(self.selector.get_map()))
                next_sample += 1
        for key in list(self.selector.get_map().values()):
            key.fileobj.close()
        self.selector.close()


def fetch(port, path, cookie):
    """(status or error, seconds) of one GET from 127.0.0.2 on a new connection."""
    start = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(OTHER, 0))
    try:
        connection.request("GET", path, headers={"Cookie": cookie} if "evaluate" in path else {})
        response = connection.getresponse()
        response.read()
        outcome = response.status
    except (OSError, http.client.HTTPException) as exc:
        outcome = type(exc).__name__
    finally:
        connection.close()
    return outcome, time.perf_counter() - start


def measure(port, cookie, seconds):
    """{path: (outcomes, times)} of fetches in turn for ``seconds``."""
    results = {path: ([], []) for path in PAGES}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for path in PAGES:
            outcome, elapsed = fetch(port, path, cookie)
            results[path][0].append(outcome)
            results[path][1].append(elapsed)
        time.sleep(0.05)
    return results


def rows(label, results):
    out = []
    for path, (outcomes, times) in results.items():
        ordered = sorted(times)
        good = sum(1 for outcome in outcomes if outcome == 200)
        others = sorted({str(o) for o in outcomes if o != 200})
        out.append([label, path, len(outcomes), good, ", ".join(others) or "-",
                    f"{1000 * percentile(ordered, 50):.0f}", f"{1000 * percentile(ordered, 95):.0f}",
                    f"{1000 * ordered[-1]:.0f}"])
    return out


@contextlib.contextmanager
def serve(args, workdir, settings):
    """(port, gunicorn log) of make run's server, or of nginx in front of deploy/gunicorn.conf.py."""
    if not args.nginx:
        env, _ = bozka_instance(workdir, sentences=200, **settings)
        with Server(env, workdir) as server:
            yield server.port, server.log_path
        return
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    from cluster import Cluster

    with Cluster(processes=1, nginx=True, env=settings, workdir=os.path.join(workdir, "cluster")) as cluster:
        cluster.flask("campaign", "import", write_campaign(os.path.join(workdir, "campaign"), 200), *opening_args())
        yield cluster.nginx_port, cluster.servers[0][2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=4050)
    parser.add_argument("--seconds", type=float, default=30, help="how long the flood is held")
    parser.add_argument("--unbounded", action="store_true", help="app/worker.py's bounds off (as before)")
    parser.add_argument("--nginx", action="store_true", help="through deploy/nginx.conf (scripts/cluster.py)")
    args = parser.parse_args()
    raise_fd_limit()
    log(f"machine busy: {machine_busy():.0f} %")
    settings = {"RATELIMIT_ENABLED": "false"}
    if args.unbounded:
        settings.update(BOZKA_CONNECTIONS_PER_ADDRESS="0", BOZKA_HEAD_TIMEOUT="0")
    with scratch() as workdir:
        with serve(args, workdir, settings) as (port, log_path):
            url = f"http://127.0.0.1:{port}"
            volunteer = register(url, 1, "flood")[0]
            before = measure(port, volunteer["cookie"], 5)
            flood = Flood(port, args.connections, args.seconds)
            flood.start()
            flood.ready.wait()
            log(f"flood: {flood.opened} connections opened, {flood.refused} not")
            during = measure(port, volunteer["cookie"], max(1, args.seconds - 5))
            flood.stop.set()
            flood.join()
            with open(log_path) as handle:
                bounds = [line.strip() for line in handle if "connections per address" in line]
    print(f"served {'through nginx (deploy/)' if args.nginx else 'as make run serves it'}; gunicorn: "
          f"{bounds[-1].split('] ')[-1] if bounds else 'bounds line not found'}")
    print(f"flood from 127.0.0.1: {args.connections} asked, {flood.opened} opened in all, "
          f"{flood.closed_by_server} closed by the server, {flood.refused} refused or timed out; "
          f"held each second: min {min(flood.held, default=0)}, max {max(flood.held, default=0)}")
    table(["phase", "page (from 127.0.0.2)", "fetches", "200", "other outcomes", "p50 ms", "p95 ms", "max ms"],
          rows("before", before) + rows("during", during))
    return 0


if __name__ == "__main__":
    sys.exit(main())
