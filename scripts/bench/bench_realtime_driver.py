"""Judging driver for bench_realtime.py: judgments at a fixed rate over HTTP.

Open loop: judgment i is due at start + i / rate and is sent by volunteer
i mod V (each volunteer keeps one keep-alive connection and has at most one
request in flight; a late volunteer sends at once). Each judgment is one
``POST /c/<slug>/api/judgment`` (bench_judging_client.Volunteer), controls
answered correctly. Records, for every judgment, the wall-clock time
(``time.time()``) it was sent and its response arrived, its status and
whether it was a test item (which moves the campaign's ``collected``
counter) or a control. Over the measurement window it also reads the CPU
time of the server's worker, of the listener processes and of itself, the
server's resident memory, and the whole machine's CPU, from /proc.

Reads a JSON job on stdin, prints a JSON result on stdout:

    job = {"host", "port", "slug", "volunteers": [{"name", "cookie", "csrf"}],
           "controls": {source: better}, "rate", "warmup", "duration",
           "server_pid", "listener_pids": [...], "seed", "timeout"}

If the volunteers cannot even fetch their first item within ``timeout``
seconds (a server that accepts no more connections), the result is just
{"blocked": reason}.
"""
import http.client
import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_judging_client import Volunteer, machine_cpu, own_cpu, process_cpu  # noqa: E402 (patches gevent)

import gevent  # noqa: E402


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def run(job):
    rng = random.Random(job.get("seed", 1))
    volunteers = [Volunteer(job, spec, random.Random(rng.random())) for spec in job["volunteers"]]
    for volunteer in volunteers:  # shorter than Volunteer's 60 s: a full server must show quickly
        volunteer.connection = http.client.HTTPConnection(job["host"], job["port"], timeout=job.get("timeout", 10))
    try:
        gevent.joinall([gevent.spawn(v.fetch_current) for v in volunteers], raise_error=True)
    except Exception as exc:  # noqa: BLE001
        return {"blocked": f"GET /c/{job['slug']}/api/item: {exc!r}"[:300]}
    rate = float(job["rate"])
    start = time.time() + 0.2
    window_start = start + job["warmup"]
    window_end = window_start + job["duration"]
    total = int((window_end - start) * rate)
    judgments = []  # [sent, responded, status, is_test, lag]
    errors = []
    stopped = []

    def volunteer_loop(index, volunteer):
        for number in range(index, total, len(volunteers)):
            due = start + number / rate
            pause = due - time.time()
            if pause > 0:
                gevent.sleep(pause)
            if volunteer.item is None:
                stopped.append((volunteer.spec["name"], "no item"))
                return
            is_test = volunteer.item["source"] not in job["controls"]
            sent = time.time()
            try:
                status, _latency, _started = volunteer.answer()
            except Exception as exc:  # noqa: BLE001
                errors.append(repr(exc)[:200])
                judgments.append([sent, time.time(), "connection-error", is_test, sent - due])
                gevent.sleep(0.05)
                try:
                    volunteer.fetch_current()
                except Exception as again:  # noqa: BLE001
                    errors.append(repr(again)[:200])
                    return
                continue
            judgments.append([sent, time.time(), status, is_test, sent - due])
            if status.startswith("http-"):
                errors.append(status)
                volunteer.fetch_current()
            elif status != "accepted":
                stopped.append((volunteer.spec["name"], status))
                return

    samples = {}
    rss = []

    def sample():
        return {
            "t": time.time(),
            "own": own_cpu(),
            "server": process_cpu(job["server_pid"]),
            "listeners": [process_cpu(pid) for pid in job.get("listener_pids", [])],
            "machine": machine_cpu(),
        }

    def sampler():
        gevent.sleep(max(0.0, window_start - time.time()))
        samples["start"] = sample()
        while time.time() < window_end:
            rss.append(rss_mb(job["server_pid"]))
            gevent.sleep(min(0.5, max(0.0, window_end - time.time())))
        samples["end"] = sample()

    clock = gevent.spawn(sampler)
    loops = [gevent.spawn(volunteer_loop, i, v) for i, v in enumerate(volunteers)]
    clock.join()
    gevent.joinall(loops, timeout=60)
    a, b = samples["start"], samples["end"]
    elapsed = b["t"] - a["t"]

    def percent(x0, x1):
        return None if x0 is None or x1 is None else 100 * (x1 - x0) / elapsed

    listeners = [percent(x0, x1) for x0, x1 in zip(a["listeners"], b["listeners"])]
    return {
        "window": [window_start, window_end],
        "judgments": judgments,
        "errors": errors[:10],
        "stopped": stopped,
        "server_cpu_percent": percent(a["server"], b["server"]),
        "server_rss_mb_max": max((r for r in rss if r is not None), default=None),
        "server_rss_mb_end": rss_mb(job["server_pid"]),
        "listeners_cpu_percent": sum(x for x in listeners if x is not None),
        "driver_cpu_percent": percent(a["own"], b["own"]),
        "machine_cpu_percent": 100 * (b["machine"][0] - a["machine"][0]) / max(1, b["machine"][1] - a["machine"][1]),
    }


if __name__ == "__main__":
    json.dump(run(json.load(sys.stdin)), sys.stdout)
