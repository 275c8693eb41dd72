"""Simulated judging volunteers for harness.drive, in a process of their own
(so that their CPU is not the server's).

One gevent greenlet per volunteer, each with one keep-alive connection. A
volunteer answers its item with ``POST /c/<slug>/api/judgment``, whose
response carries the next item, answered as ``harness.answer_for`` says. Closed loop without think
time, or with ``rate`` an open loop: judgment n is due at start + n / rate
and is sent by volunteer n mod V (at once if that volunteer is late).

The measured window is ``warmup`` seconds after the start, for ``duration``
seconds, or until a volunteer has nothing left to judge or the file
``until`` exists. Reads the job as JSON on stdin (see harness.drive); prints
JSON: every judgment as [sent, responded, status, is test item, token]
(``time.time()``), the window, the server worker's CPU seconds over it and
its largest RSS.
"""
from gevent import monkey

monkey.patch_all()

import http.client  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import gevent  # noqa: E402
import gevent.event  # noqa: E402

from harness import answer_for, cpu_seconds  # noqa: E402


class Volunteer:
    def __init__(self, job, spec, rng):
        self.job, self.rng, self.item, self.connection, self.used = job, rng, None, None, 0.0
        self.headers = {"Content-Type": "application/json", "Accept": "application/json",
                        "Cookie": spec["cookie"], "X-CSRFToken": spec["csrf"], "X-Bench-Volunteer": spec["name"]}

    def request(self, method, path, body=None):
        # The server closes a connection idle for 10 s (app/worker.py): a new one after 5 s idle.
        if self.connection is not None and time.monotonic() - self.used > 5:
            self.connection.close()
            self.connection = None
        if self.connection is None:
            self.connection = http.client.HTTPConnection(self.job["host"], self.job["port"], timeout=60)
        try:
            self.connection.request(method, f"/c/{self.job['slug']}/api/{path}", body=body, headers=self.headers)
            response = self.connection.getresponse()
            data = response.read()
            self.used = time.monotonic()
        except (OSError, http.client.HTTPException):
            self.connection.close()
            self.connection = None
            raise
        return response.status, data

    def fetch(self):
        status, data = self.request("GET", "item")
        if status != 200:
            raise RuntimeError(f"GET api/item: HTTP {status}: {data[:200]!r}")
        self.item = json.loads(data)["item"]

    def answer(self):
        """One judgment: [sent, responded, status, is test item, token]."""
        item = self.item
        answer = answer_for(item, self.rng)
        better = self.job["controls"].get(item["source"])
        sent = time.time()
        try:
            status, data = self.request("POST", "judgment", json.dumps({"token": item["token"], **answer}))
        except (OSError, http.client.HTTPException):
            status, data = "connection-error", None
        record = [sent, time.time(), status, better is None, item["token"]]
        if status == 200:
            payload = json.loads(data)
            record[2], self.item = payload["status"], payload.get("item")
        else:
            record[2] = f"http-{status}" if isinstance(status, int) else status
            gevent.sleep(0.05)
            self.fetch()
        return record


def run(job):
    rng = random.Random(job["seed"])
    volunteers = [Volunteer(job, spec, random.Random(rng.random())) for spec in job["volunteers"]]
    gevent.joinall([gevent.spawn(v.fetch) for v in volunteers], raise_error=True, timeout=60)
    start = time.time()
    window = [start + job["warmup"], start + job["warmup"] + job["duration"]]
    judgments, done, rss = [], gevent.event.Event(), []

    def judge(volunteer):
        judgments.append(volunteer.answer())
        if volunteer.item is None:
            done.set()  # dismissed, or nothing left to judge: the window ends for everyone

    def closed_loop(volunteer):
        while not done.is_set():
            judge(volunteer)

    def open_loop(number, volunteer):
        while not done.wait(max(0.0, start + number / job["rate"] - time.time())):
            judge(volunteer)
            number += len(volunteers)

    def sample():
        with open("/proc/stat") as handle:
            values = [int(v) for v in handle.readline().split()[1:]]
        return time.time(), cpu_seconds(job["server_pid"]), values

    if job.get("rate"):
        loops = [gevent.spawn(open_loop, n, v) for n, v in enumerate(volunteers)]
    else:
        loops = [gevent.spawn(closed_loop, v) for v in volunteers]
    if done.wait(max(0.0, window[0] - time.time())):
        raise SystemExit("a volunteer stopped during the warm-up (nothing left to judge?)")
    t0, cpu0, machine0 = sample()
    while (not done.wait(max(0.0, min(0.5, window[1] - time.time()))) and time.time() < window[1]
           and not (job.get("until") and os.path.exists(job["until"]))):
        with open(f"/proc/{job['server_pid']}/status") as handle:
            rss += [int(line.split()[1]) / 1024 for line in handle if line.startswith("VmRSS:")]
    t1, cpu1, machine1 = sample()
    done.set()
    gevent.joinall(loops, timeout=60)
    busy = [sum(m) - m[3] - m[4] for m in (machine0, machine1)]
    return {
        "judgments": judgments,
        "window": [t0, t1],
        "ended_early": t1 < window[1] - 0.1,
        "server_cpu": cpu1 - cpu0,
        "machine_busy_percent": 100 * (busy[1] - busy[0]) / max(1, sum(machine1) - sum(machine0)),
        "server_rss_mb": max(rss, default=None),
    }


if __name__ == "__main__":
    json.dump(run(json.load(sys.stdin)), sys.stdout)
