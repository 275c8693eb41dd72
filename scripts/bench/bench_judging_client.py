"""Load generator for bench_judging.py: simulated volunteers over HTTP.

Runs in its own process (so that its CPU is counted apart from the
server's): one gevent greenlet per volunteer, each with its own keep-alive
``http.client`` connection, in a closed loop with no think time. A
volunteer answers every item with one request, ``POST /c/<slug>/api/judgment``,
whose response carries the next item; control items (found by their source
text, read beforehand from the ``controls`` table) are answered correctly.

Reads a JSON job on stdin, prints a JSON result on stdout:

    job = {"host", "port", "slug", "volunteers": [{"name", "cookie", "csrf"}],
           "controls": {source: better}, "warmup": s, "duration": s,
           "max_judgments": n, "server_pid": pid, "seed": n}
"""
from gevent import monkey

monkey.patch_all()

import http.client  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402

import gevent  # noqa: E402
import gevent.event  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def process_cpu(pid):
    """User + system CPU seconds of a process, from /proc."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK


def machine_cpu():
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat") as handle:
        values = [int(v) for v in handle.readline().split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


def own_cpu():
    times = os.times()
    return times.user + times.system


class Volunteer:
    def __init__(self, job, spec, rng):
        self.job = job
        self.spec = spec
        self.rng = rng
        self.connection = None
        self.headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Cookie": spec["cookie"],
            "X-CSRFToken": spec["csrf"],
            "X-Bench-Volunteer": spec["name"],
        }
        self.item = None
        self.answered = 0

    def _request(self, method, path, body=None):
        if self.connection is None:
            self.connection = http.client.HTTPConnection(self.job["host"], self.job["port"], timeout=60)
        try:
            self.connection.request(method, path, body=body, headers=self.headers)
            response = self.connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException):
            self.connection.close()
            self.connection = None
            raise
        cookie = response.getheader("Set-Cookie")
        if cookie and cookie.startswith("session="):
            self.headers["Cookie"] = cookie.split(";", 1)[0]
        return response.status, data

    def fetch_current(self):
        status, data = self._request("GET", f"/c/{self.job['slug']}/api/item")
        if status != 200:
            raise RuntimeError(f"GET api/item: HTTP {status}: {data[:200]!r}")
        payload = json.loads(data)
        self.item = payload["item"]
        return payload["status"]

    def choose(self):
        item = self.item
        better = self.job["controls"].get(item["source"])
        if better is not None:
            return "left" if item["left"] == better else "right"
        return self.rng.choices(("left", "right", "equal"), (45, 45, 10))[0]

    def answer(self):
        """One judgment: returns (status, latency in seconds, perf_counter when sent)."""
        body = json.dumps({"token": self.item["token"], "choice": self.choose()}).encode()
        started = time.perf_counter()
        status, data = self._request("POST", f"/c/{self.job['slug']}/api/judgment", body)
        latency = time.perf_counter() - started
        if status != 200:
            return f"http-{status}", latency, started
        payload = json.loads(data)
        self.item = payload.get("item")
        return payload["status"], latency, started


def run(job):
    rng = random.Random(job.get("seed", 1))
    volunteers = [Volunteer(job, spec, random.Random(rng.random())) for spec in job["volunteers"]]
    gevent.joinall([gevent.spawn(v.fetch_current) for v in volunteers], raise_error=True)
    start = time.perf_counter()
    window_start = start + job["warmup"]
    window_end = window_start + job["duration"]
    statuses = Counter()
    window_latencies = []
    in_window = [0]
    errors = []
    stop = [False]
    trace = [] if job.get("trace") else None

    def volunteer_loop(volunteer):
        while not stop[0] and volunteer.item is not None:
            try:
                status, latency, sent = volunteer.answer()
            except (OSError, http.client.HTTPException) as exc:
                statuses["connection-error"] += 1
                errors.append(repr(exc))
                gevent.sleep(0.01)
                try:
                    volunteer.fetch_current()
                except Exception as again:  # noqa: BLE001
                    errors.append(repr(again))
                    return
                continue
            done = sent + latency
            statuses[status] += 1
            if trace is not None:
                trace.append((volunteer.spec["name"], round(sent - start, 4), round(latency * 1000, 2), status))
            if window_start <= done <= window_end:
                in_window[0] += 1
                window_latencies.append(latency)
            if status.startswith("http-"):
                errors.append(status)
                try:
                    volunteer.fetch_current()
                except Exception as again:  # noqa: BLE001
                    errors.append(repr(again))
                    return
            elif status != "accepted":
                return  # dismissed, finished or closed: this volunteer stops
            volunteer.answered += 1
            if volunteer.answered >= job.get("max_per_volunteer", 10**9):
                # About to run out of sentences: end the level for everyone.
                if not budget_spent.is_set():
                    ended_early[0] = time.perf_counter()
                    budget_spent.set()
                return

    samples = {}
    budget_spent = gevent.event.Event()
    ended_early = [None]

    def sampler():
        budget_spent.wait(max(0.0, window_start - time.perf_counter()))
        if budget_spent.is_set():
            raise RuntimeError("a volunteer ran out of sentences during the warm-up: use a bigger campaign")
        samples["start"] = (
            time.perf_counter(), own_cpu(), process_cpu(job["server_pid"]), machine_cpu(), in_window[0]
        )
        budget_spent.wait(max(0.0, window_end - time.perf_counter()))
        samples["end"] = (
            time.perf_counter(), own_cpu(), process_cpu(job["server_pid"]), machine_cpu(), in_window[0]
        )
        stop[0] = True

    clock = gevent.spawn(sampler)
    loops = [gevent.spawn(volunteer_loop, v) for v in volunteers]
    clock.join()
    if not clock.successful():
        raise clock.exception
    gevent.joinall(loops, timeout=120)
    (t0, client0, server0, machine0, _), (t1, client1, server1, machine1, count1) = samples["start"], samples["end"]
    elapsed = t1 - t0
    in_window[0] = count1  # completions after an early end do not count
    if ended_early[0] is not None:
        window_latencies[:] = window_latencies[:count1]
    window_latencies.sort()
    return {
        "volunteers": len(volunteers),
        "ended_early": ended_early[0] is not None,
        "window_seconds": elapsed,
        "judgments_in_window": in_window[0],
        "per_second": in_window[0] / elapsed if elapsed else 0.0,
        "latencies_ms": [round(x * 1000, 3) for x in window_latencies],
        "statuses": dict(statuses),
        # Answers the server recorded (a dismissal records the answer too).
        "acknowledged": statuses["accepted"] + statuses["dismissed"],
        "client_cpu_percent": 100 * (client1 - client0) / elapsed,
        "server_cpu_percent": 100 * (server1 - server0) / elapsed if server0 is not None and server1 is not None else None,
        "machine_cpu_percent": 100 * (machine1[0] - machine0[0]) / max(1, machine1[1] - machine0[1]),
        "cores": os.cpu_count(),
        "errors": errors[:10],
        **({"trace": trace} if trace is not None else {}),
    }


if __name__ == "__main__":
    result = run(json.load(sys.stdin))
    json.dump(result, sys.stdout)
