"""Page weight of the evaluation page (issue 6): bytes on the wire in Chromium.

    .venv/bin/python scripts/bench/bench_pageweight.py [--items 10] [--campaign demo-en-eu]

Bozka served as ``make run`` serves it (migrations, ``flask demo``); a
volunteer registers in headless Chromium (360x740), then, with an empty
cache, the DevTools protocol's network events count every byte received
and sent, headers included: the first load of the evaluation page (HTML,
CSS, JavaScript with the Socket.IO client, the WebSocket handshake and its
first frames), then each next item (one ``POST .../api/judgment`` whose
response carries it; the live-ranking frames of the same moment apart).
Static files are sent compressed when Chromium accepts it (issue 22): the
encoding of each answer is printed. Bytes do not depend on the machine's load. Targets: first load under
150 KB, next item under 5 KB (KB = 1,000 bytes).
"""
import argparse
import gzip
import os
import re
import statistics
import time
import urllib.request

from harness import ROOT, Server, bozka_env, flask, log, scratch

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-quic", "--disable-sync"]  # nothing but the page on the wire
PASSWORD = "correct horse battery 9"
STATIC = ("/static/css/bozka.css", "/static/js/evaluate.js", "/static/js/vendor/socket.io.min.js")


class Wire:
    """Bytes seen by Chromium's network stack: HTTP exchanges and WebSocket frames, with when they began."""

    def __init__(self, cdp):
        self.requests, self.frames = {}, []
        on = cdp.on
        on("Network.requestWillBeSent", lambda e: self.entry(e, url=e["request"]["url"],
                                                             sent=len(e["request"].get("postData", "").encode())))
        on("Network.requestWillBeSentExtraInfo", lambda e: self.entry(e, sent=self.header_bytes(e["headers"])))
        on("Network.loadingFinished", lambda e: self.entry(e, received=int(e["encodedDataLength"])))
        on("Network.responseReceived", lambda e: self.entry(e, encoding={k.lower(): v for k, v in e["response"].get(
            "headers", {}).items()}.get("content-encoding", "")))
        on("Network.webSocketCreated", lambda e: self.entry(e, url=e["url"].replace("ws", "http", 1)))
        on("Network.webSocketWillSendHandshakeRequest",
           lambda e: self.entry(e, sent=self.header_bytes(e["request"].get("headers", {}))))
        on("Network.webSocketHandshakeResponseReceived", lambda e: self.entry(e, received=(
            30 + len(e["response"]["headersText"].encode()) if e["response"].get("headersText")
            else self.header_bytes(e["response"].get("headers", {})))))
        on("Network.webSocketFrameSent", lambda e: self.frame(e, 4))  # a client's frames carry a 4-byte mask
        on("Network.webSocketFrameReceived", lambda e: self.frame(e, 0))
        cdp.send("Network.enable")

    @staticmethod
    def header_bytes(headers):
        return 30 + sum(len(k) + len(v) + 4 for k, v in headers.items())  # status or request line, "k: v\r\n"

    def entry(self, event, url=None, sent=0, received=0, encoding=None):
        entry = self.requests.setdefault(event["requestId"], {"url": "", "sent": 0, "received": 0, "encoding": "",
                                                              "time": time.monotonic()})
        if url:
            entry.update(url=url, time=time.monotonic())
        if encoding:
            entry["encoding"] = encoding
        entry["sent"] += sent
        entry["received"] += received

    def frame(self, event, mask):  # the payload and the frame's header
        payload = event["response"].get("payloadData", "")
        self.frames.append((time.monotonic(), len(payload.encode()) + 2 + mask + (2 if len(payload) > 125 else 0)))

    def since(self, start, end=float("inf")):
        http = [r for r in self.requests.values() if start <= r["time"] <= end and r["url"].startswith("http")]
        return http, sum(size for at, size in self.frames if start <= at <= end)


def register(page, base, slug):
    page.goto(f"{base}/c/{slug}/register")
    form = page.locator("main form")
    for name, value in (("username", "weigh.volunteer"), ("email", "weigh.volunteer@example.org"),
                        ("password", PASSWORD), ("password2", PASSWORD)):
        form.locator(f"[name={name}]").fill(value)
    for name, value in (("age_group", "26-35"), ("studies_level", "university"), ("studies_field", "language"),
                        ("source_level", "B1-B2"), ("target_level", "C1-C2")):
        form.locator(f"[name={name}]").select_option(value)
    form.locator("[name=consent]").check()
    form.locator("button[type=submit]").click()
    page.wait_for_url(re.compile(rf"/c/{slug}/instructions$"))


def measure(base, slug, items):
    """The first load's requests and frame bytes, and per answer (judgment request bytes, frame bytes, other)."""
    from playwright.sync_api import sync_playwright

    controls = os.path.join(ROOT, "app", "demo", slug.removeprefix("demo-"), "controls.tsv")
    with open(controls, encoding="utf-8") as handle:  # answered right, so that the volunteer stays
        better = {line.split("\t")[1].strip() for line in list(handle)[1:] if line.strip()}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            setup = browser.new_context(viewport={"width": 360, "height": 740})
            register(setup.new_page(), base, slug)
            state = setup.storage_state()
            setup.close()
            context = browser.new_context(viewport={"width": 360, "height": 740}, storage_state=state)
            page = context.new_page()  # the same session cookie, an empty cache
            wire = Wire(context.new_cdp_session(page))
            start = time.monotonic()
            page.goto(f"{base}/c/{slug}/evaluate", wait_until="networkidle")
            page.wait_for_timeout(2000)  # the join and the first live updates
            first = wire.since(start)
            answers = []
            for number in range(items):
                if page.locator("#task").count() == 0:
                    break
                token = page.locator("input[name=token]").input_value()
                texts = [page.locator(f"#text-{side}").inner_text().strip() for side in ("left", "right")]
                choice = ("left" if texts[0] in better else "right" if texts[1] in better
                          else ("left", "right")[number % 2])
                page.locator(f"label.answer-{choice}").click()
                t0 = time.monotonic()
                page.locator("#next").click()
                page.wait_for_function("(token) => { const t = document.querySelector('input[name=token]');"
                                       " return !t || t.value !== token; }", arg=token)
                page.wait_for_load_state("networkidle")
                page.wait_for_timeout(1500)  # live updates come at most once a second
                http, frames = wire.since(t0, time.monotonic())
                answers.append((sum(r["sent"] + r["received"] for r in http if "/api/judgment" in r["url"]), frames,
                                sum(r["sent"] + r["received"] for r in http if "/api/judgment" not in r["url"])))
        finally:
            browser.close()
    return first, answers


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=10, help="next items to measure")
    parser.add_argument("--campaign", default="demo-en-eu", help="demo-en-eu or demo-en-ur")
    args = parser.parse_args(argv)
    if not os.path.exists(CHROMIUM):
        raise SystemExit(f"{CHROMIUM} is missing (make chromium installs it)")
    with scratch() as workdir:
        env = bozka_env(workdir)
        flask(["db", "upgrade"], env)
        flask(["demo"], env)
        with Server(env, workdir) as server:
            log(f"serving {server.url}; measuring in Chromium ...")
            (requests, frames), answers = measure(server.url, args.campaign, args.items)
            gzipped = {path: len(gzip.compress(urllib.request.urlopen(server.url + path).read(), 6))
                       for path in STATIC}
    print(f"Page weight of /c/{args.campaign}/evaluate (headless Chromium, empty cache; bytes on the wire "
          "with HTTP headers; KB = 1,000 bytes)\n\nFirst load")
    for entry in sorted(requests, key=lambda e: -e["received"]):
        path = re.sub(r"([?&](t|sid)=)[^&]+", r"\1…", re.sub(r"^https?://[^/]+", "", entry["url"]))
        print(f"  {entry['sent'] + entry['received']:>8,} B  {entry['encoding'] or '-':<4}  {path[:80]}")
    total = sum(r["sent"] + r["received"] for r in requests) + frames
    print(f"  {frames:>8,} B  WebSocket frames\n  {total:>8,} B  in all (target under 150 KB): "
          f"{'MET' if total < 150_000 else 'MISSED'}")
    print("  gzip -6 of the static files, as a compressing proxy would send them: "
          + ", ".join(f"{os.path.basename(path)} {size:,} B" for path, size in gzipped.items()))
    if answers:
        judgment, frames, other = zip(*answers)
        print(f"\nNext item ({len(answers)} answers, one POST /api/judgment each)\n"
              f"  request and response with headers: median {statistics.median(judgment):,.0f} B, max "
              f"{max(judgment):,} B (target under 5 KB): {'MET' if max(judgment) < 5_000 else 'MISSED'}\n"
              f"  WebSocket frames meanwhile (live ranking, personal update): median "
              f"{statistics.median(frames):,.0f} B, max {max(frames):,} B\n"
              f"  other HTTP requests: {sum(other):,} B")


if __name__ == "__main__":
    main()
