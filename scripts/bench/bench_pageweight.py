"""Page weight of the evaluation page (issue 6): bytes on the wire in Chromium.

    .venv/bin/python scripts/bench/bench_pageweight.py [--items 10] [--campaign demo-en-eu]

Serves Bozka as ``make run`` does (``flask db upgrade``, ``flask demo``,
gunicorn with one gevent WebSocket worker) on a fresh instance, registers a
volunteer through the pages in headless Chromium, then measures with the
Chrome DevTools Protocol's network events:

1. the first load of the evaluation page with an empty cache: every HTTP
   response (HTML, CSS, JavaScript including the Socket.IO client, the
   Socket.IO handshake) as bytes received including headers
   (``encodedDataLength``), the request headers and bodies sent, and the
   WebSocket frames of the first seconds (join, ranking, personal update);
2. each next item: one click on an answer and on Next sends one
   ``POST .../api/judgment`` whose response carries the next item. Its
   bytes (both ways, with headers) are counted per item, and the WebSocket
   frames that arrive in the same window (live ranking) are shown apart.

Prints figures; asserts nothing. Targets: first load < 150 KB, next item < 5 KB
(KB = 1,000 bytes). Bozka serves its files uncompressed; the gzip figure is
what a compressing proxy (nginx ``gzip on``) would send for the same bodies.
"""
import argparse
import gzip
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, ROOT]

from bench_judging import Server, bin_path, make_run_worker_class  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-quic", "--disable-sync"]
PASSWORD = "correct horse battery 9"
FIRST_LOAD_TARGET = 150_000
NEXT_ITEM_TARGET = 5_000


def log(message):
    print(message, file=sys.stderr, flush=True)


class Wire:
    """Bytes seen by Chromium's network stack, from CDP events."""

    def __init__(self, cdp):
        self.requests = {}  # requestId -> dict(url, type, sent, received, body)
        self.frames = []  # (time, direction, bytes)
        cdp.on("Network.requestWillBeSent", self._will_send)
        cdp.on("Network.requestWillBeSentExtraInfo", self._sent_headers)
        cdp.on("Network.responseReceived", self._response)
        cdp.on("Network.loadingFinished", self._finished)
        cdp.on("Network.webSocketCreated", self._ws_created)
        cdp.on("Network.webSocketWillSendHandshakeRequest", self._ws_request)
        cdp.on("Network.webSocketHandshakeResponseReceived", self._ws_response)
        cdp.on("Network.webSocketFrameSent", lambda e: self._frame("sent", e))
        cdp.on("Network.webSocketFrameReceived", lambda e: self._frame("received", e))
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": False})

    def _entry(self, request_id):
        return self.requests.setdefault(request_id, {"url": "", "type": "", "sent": 0, "received": 0,
                                                     "body": 0, "time": time.monotonic()})

    def _will_send(self, event):
        entry = self._entry(event["requestId"])
        entry["url"] = event["request"]["url"]
        entry["type"] = event.get("type", "")
        entry["time"] = time.monotonic()
        entry["sent"] += len(event["request"].get("postData", "").encode())

    def _sent_headers(self, event):
        headers = event.get("headers", {})
        # The request line and headers as sent (HTTP/1.1 text).
        self._entry(event["requestId"])["sent"] += 30 + sum(len(k) + len(v) + 4 for k, v in headers.items())

    def _response(self, event):
        self._entry(event["requestId"])["type"] = event.get("type", "")

    def _finished(self, event):
        entry = self._entry(event["requestId"])
        entry["received"] = int(event["encodedDataLength"])

    def _ws_created(self, event):
        entry = self._entry(event["requestId"])
        entry["url"] = event["url"].replace("ws://", "http://", 1).replace("wss://", "https://", 1)
        entry["type"] = "WebSocket handshake"
        entry["time"] = time.monotonic()

    def _ws_request(self, event):
        headers = event["request"].get("headers", {})
        self._entry(event["requestId"])["sent"] += 30 + sum(len(k) + len(v) + 4 for k, v in headers.items())

    def _ws_response(self, event):
        response = event["response"]
        text = response.get("headersText") or "".join(f"{k}: {v}\r\n" for k, v in response.get("headers", {}).items())
        self._entry(event["requestId"])["received"] += len(text.encode()) + 30

    def _frame(self, direction, event):
        payload = event["response"].get("payloadData", "")
        # Payload plus the WebSocket frame header (2 bytes, 4 more for a
        # client's mask, 2 more past 125 bytes).
        size = len(payload.encode()) + 2 + (4 if direction == "sent" else 0) + (2 if len(payload) > 125 else 0)
        self.frames.append((time.monotonic(), direction, size))

    def mark(self):
        return time.monotonic()

    def http_since(self, start):
        return [r for r in self.requests.values() if r["time"] >= start and r["url"].startswith("http")]

    def frames_since(self, start, end=None):
        return [f for f in self.frames if f[0] >= start and (end is None or f[0] <= end)]


def run_cli(args, env):
    done = subprocess.run([bin_path("flask"), "--app", "wsgi", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode:
        raise RuntimeError(f"flask {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def control_answers(slug):
    """The better translations of a demo campaign's controls."""
    folder = os.path.join(ROOT, "app", "demo", slug.removeprefix("demo-"))
    with open(os.path.join(folder, "controls.tsv"), encoding="utf-8") as handle:
        return {line.rstrip("\n").split("\t")[1].strip() for line in list(handle)[1:] if line.strip()}


def register(page, base, slug, username):
    page.goto(f"{base}/c/{slug}/register")
    form = page.locator("main form")
    form.locator("[name=username]").fill(username)
    form.locator("[name=email]").fill(f"{username}@example.org")
    form.locator("[name=password]").fill(PASSWORD)
    form.locator("[name=password2]").fill(PASSWORD)
    for name, value in (("age_group", "26-35"), ("studies_level", "university"), ("studies_field", "language"),
                        ("source_level", "B1-B2"), ("target_level", "C1-C2")):
        form.locator(f"[name={name}]").select_option(value)
    form.locator("[name=consent]").check()
    form.locator("button[type=submit]").click()
    page.wait_for_url(re.compile(rf"/c/{slug}/instructions$"))


def gzip_size(base, path):
    with urllib.request.urlopen(base + path) as response:
        return len(gzip.compress(response.read(), 6))


def measure(base, slug, items):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            setup = browser.new_context(viewport={"width": 360, "height": 740})
            register(setup.new_page(), base, slug, "weigh.volunteer")
            state = setup.storage_state()
            setup.close()

            # A fresh context: the same session cookie, an empty HTTP cache.
            context = browser.new_context(viewport={"width": 360, "height": 740}, storage_state=state)
            page = context.new_page()
            wire = Wire(context.new_cdp_session(page))
            start = wire.mark()
            page.goto(f"{base}/c/{slug}/evaluate", wait_until="load")
            page.wait_for_function("() => window.io !== undefined")
            page.wait_for_load_state("networkidle")
            page.wait_for_timeout(2000)  # the join and the first live updates over the WebSocket
            first_http = wire.http_since(start)
            first_frames = wire.frames_since(start)

            better = control_answers(slug)
            per_item = []
            for number in range(items):
                if page.locator("#task").count() == 0:
                    break
                before = page.locator("input[name=token]").input_value()
                # A control's better translation (so the volunteer stays), else alternate.
                texts = [page.locator(f"#text-{part}").inner_text().strip() for part in ("left", "right")]
                choice = "left" if texts[0] in better else "right" if texts[1] in better else ("left", "right")[number % 2]
                page.locator(f"label.answer-{choice}").click()
                t0 = wire.mark()
                page.locator("#next").click()
                page.wait_for_function(
                    "(token) => { const t = document.querySelector('input[name=token]');"
                    " return !t || t.value !== token; }", arg=before)
                page.wait_for_load_state("networkidle")
                page.wait_for_timeout(1500)  # live updates are sent at most once a second
                t1 = wire.mark()
                http = [r for r in wire.http_since(t0) if "/api/judgment" in r["url"]]
                other = [r for r in wire.http_since(t0) if "/api/judgment" not in r["url"]]
                per_item.append({
                    "api": sum(r["sent"] + r["received"] for r in http),
                    "other_http": sum(r["sent"] + r["received"] for r in other),
                    "frames": sum(f[2] for f in wire.frames_since(t0, t1)),
                    "requests": len(http),
                    "navigated": bool(other),
                })
            context.close()
        finally:
            browser.close()
    return first_http, first_frames, per_item


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=10, help="next items to measure (default 10)")
    parser.add_argument("--campaign", default="demo-en-eu", help="demo-en-eu or demo-en-ur")
    args = parser.parse_args(argv)
    if not os.path.exists(CHROMIUM):
        sys.exit(f"{CHROMIUM} is missing (make chromium installs it)")

    workdir = tempfile.mkdtemp(prefix="bozka-pageweight-")
    env = {**os.environ, "BOZKA_INSTANCE": workdir, "SECRET_KEY": "pageweight-secret", "FLASK_DEBUG": "0"}
    for name in ("DATABASE_URL", "SOCKETIO_MESSAGE_QUEUE", "MAIL_SERVER"):
        env.pop(name, None)
    server = None
    try:
        run_cli(["db", "upgrade"], env)
        run_cli(["demo"], env)
        server = Server("bozka", "wsgi:app", env, ROOT, workdir,
                        worker_class=make_run_worker_class("geventwebsocket.gunicorn.workers.GeventWebSocketWorker"))
        server.wait_ready()
        base = f"http://127.0.0.1:{server.port}"
        log(f"serving {base}; measuring in Chromium")
        first_http, first_frames, per_item = measure(base, args.campaign, args.items)
        gz = {path: gzip_size(base, path) for path in
              ("/static/css/bozka.css", "/static/js/evaluate.js", "/static/js/vendor/socket.io.min.js")}
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    def kind(entry):
        url = entry["url"]
        if "/socket.io/" in url:
            return entry["type"] if entry["type"] == "WebSocket handshake" else "Socket.IO polling"
        if url.endswith(".css"):
            return "CSS"
        if url.endswith(".js"):
            return "JavaScript"
        return entry["type"] or "other"

    print(f"Page weight of /c/{args.campaign}/evaluate (headless Chromium, 360x740, empty cache; "
          "bytes on the wire including HTTP headers; KB = 1,000 bytes)")
    print()
    print("First load")
    total_http = 0
    for entry in sorted(first_http, key=lambda e: -e["received"]):
        size = entry["sent"] + entry["received"]
        total_http += size
        path = re.sub(r"^https?://[^/]+", "", entry["url"])
        path = re.sub(r"([?&](t|sid)=)[^&]+", r"\1…", path)
        print(f"  {size:>8,} B  {kind(entry):<28} {path[:70]}")
    frames = sum(f[2] for f in first_frames)
    print(f"  {frames:>8,} B  WebSocket frames ({len(first_frames)}: join, ranking, personal update)")
    first_total = total_http + frames
    print(f"  {first_total:>8,} B  total ({first_total / 1000:.1f} KB; target < {FIRST_LOAD_TARGET // 1000} KB)"
          f" {'OK' if first_total < FIRST_LOAD_TARGET else 'OVER'}")
    print("  for comparison, gzip -6 of the static files: " +
          ", ".join(f"{os.path.basename(p)} {s:,} B" for p, s in gz.items()))
    print()
    print(f"Next item ({len(per_item)} answers, one POST /api/judgment each: answer up, next item down)")
    if per_item:
        api = [p["api"] for p in per_item]
        frames = [p["frames"] for p in per_item]
        print(f"  request + response with headers: median {statistics.median(api):,.0f} B, "
              f"max {max(api):,} B (target < {NEXT_ITEM_TARGET // 1000} KB) "
              f"{'OK' if max(api) < NEXT_ITEM_TARGET else 'OVER'}")
        print(f"  WebSocket frames in the same window (live ranking, personal update): median "
              f"{statistics.median(frames):,.0f} B, max {max(frames):,} B")
        print(f"  with them: max {max(a + f for a, f in zip(api, frames)):,} B")
        reloads = sum(p["navigated"] for p in per_item)
        print(f"  other HTTP requests during answers: {sum(p['other_http'] for p in per_item):,} B "
              f"({reloads} answers caused one)")


if __name__ == "__main__":
    main()
