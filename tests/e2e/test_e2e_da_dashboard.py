"""The dashboard of a Direct Assessment campaign follows its volunteers live,
in headless Chromium (issue 20).

An organiser keeps the dashboard of a DA campaign open (never reloaded)
while an honest volunteer scores translations and an aggressive optimiser
gives every one the same score: the per-system table fills in, the
quality-control summary counts the quality items, and the optimiser's
dismissal by the live rule appears with its label. The campaign is imported
with ``flask campaign import`` and the accounts made with ``flask user
create``, as an operator would; on a phone the page fits as the pairwise
dashboard's does (e2e.pages.phone_dashboard); the volunteers score through the JSON API
(the slider has its own test, test_e2e_da_volunteer.py).
"""
import os
import re
import time

from playwright.sync_api import expect

from e2e.pages import DESKTOP, PASSWORD, PHONE, phone_dashboard, rate_chart
from helpers import QUIET_SIGNS, write_campaign
from scripts.bench.harness import opening_args

LIVE = 8_000  # ms: a broadcast interval (1 s), then the panel's fetch, with a generous margin
SLUG = "e2e-da-dashboard"
ORGANISER = ("da.organiser", "da.organiser@example.org")
HONEST = ("da.honest", "da.honest@example.org")
OPTIMISER = ("da.optimiser", "da.optimiser@example.org")
QUALITY = {"Neural": 85, "Statistical": 60, "WordByWord": 30}
# Every word of an output names its sentence, so a bad reference (a run of
# words from another sentence, issue 28) is never another system's output.
OUTPUT = re.compile(r"Output (\d+) of (\w+) w\1 x\1 y\1 z\1\.")


def import_campaign(site_cli, folder):
    write_campaign(folder, sentences=40, systems=tuple(QUALITY), protocol="da", reference=True,
                   **(QUIET_SIGNS | {"qc_share": 50, "qc_distance": 2, "qc_min_pairs": 3, "judgments_per_pair": 2}))
    for name in QUALITY:
        with open(os.path.join(folder, "systems", f"{name}.txt"), "w", encoding="utf-8") as handle:
            handle.write("".join(f"Output {i} of {name} w{i} x{i} y{i} z{i}.\n" for i in range(1, 41)))
    manifest = os.path.join(folder, "campaign.toml")
    with open(manifest, encoding="utf-8") as handle:
        text = handle.read().replace('slug = "test"', f'slug = "{SLUG}"').replace(
            'name = "Test campaign"', 'name = "Scores from 0 to 100"')
    with open(manifest, "w", encoding="utf-8") as handle:
        handle.write(text)
    site_cli("campaign", "import", folder, *opening_args())


def log_in(page, base_url, email):
    page.goto(f"{base_url}/login")
    page.get_by_label("Email", exact=True).fill(email)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("header.site")).to_contain_text("Log out")


def join(page, base_url):
    page.goto(f"{base_url}/c/{SLUG}/join")
    page.get_by_label("Your level of English").select_option("B1-B2")
    page.get_by_label("Your level of Basque").select_option("C1-C2")
    page.get_by_label(re.compile(r"^I agree that my answers")).check()
    page.get_by_role("button", name="Take part").click()
    expect(page).to_have_url(re.compile(rf"/c/{SLUG}/instructions$"))


def honest_score(translation, n):
    match = OUTPUT.fullmatch(translation)
    if match:
        return QUALITY[match.group(2)] + (n * 7) % 11 - 5
    if translation.startswith("The reference translation"):
        return 95
    return 10 + n % 7  # a bad reference: words are missing


def score_through_the_api(page, base_url, score_of, limit=200):
    """Score every item served (through the page's own session); returns the last status."""
    csrf = page.locator("input[name=csrf_token]").first.input_value()
    item = page.request.get(f"{base_url}/c/{SLUG}/api/item").json()["item"]
    status = "ok"
    for n in range(limit):
        if item is None:
            break
        answer = page.request.post(f"{base_url}/c/{SLUG}/api/judgment", headers={"X-CSRFToken": csrf},
                                   data={"token": item["token"], "score": score_of(item["translation"], n)})
        assert answer.ok, answer.text()
        body = answer.json()
        status, item = body["status"], body.get("item")
    return status


def wait_for_collected(dash, total):
    """Until the table counts ``total`` judgments collected (the last live update may be under way)."""
    deadline = time.monotonic() + LIVE / 1000
    while True:
        cells = dash.locator("#panel #da-systems [data-cell=collected]").all_inner_texts()
        if sum(int(text) for text in cells) == total:
            return
        assert time.monotonic() < deadline, f"collected {cells}, not {total} in all"
        time.sleep(0.2)


def cell(dash, system, name):
    return dash.locator(f"#panel #da-systems tr[data-system='{system}'] [data-cell={name}]")


def test_the_da_dashboard_follows_scores_and_the_live_rule(browser, live_server, site_cli, screenshots, server_log,
                                                           tmp_path):
    import_campaign(site_cli, str(tmp_path / "campaign"))
    for (username, email), role in ((ORGANISER, "organiser"), (HONEST, "volunteer"), (OPTIMISER, "volunteer")):
        site_cli("user", "create", "--role", role, "--email", email, "--username", username, "--password", PASSWORD)
    site_cli("campaign", "organisers", "add", SLUG, ORGANISER[0])  # an organiser manages the campaigns given
    organiser_context = browser.new_context(viewport=DESKTOP, locale="en-GB")
    contexts = [organiser_context] + [browser.new_context(viewport=PHONE, locale="en-GB") for _ in range(2)]
    for context in contexts:
        context.set_default_timeout(10_000)
    dash, honest, optimiser = (context.new_page() for context in contexts)
    try:
        # The organiser opens the dashboard before any score and keeps it open.
        log_in(dash, live_server, ORGANISER[1])
        dash.goto(f"{live_server}/organiser/c/{SLUG}/")
        expect(dash.get_by_role("heading", name="Scores per system")).to_be_visible()
        expect(dash.get_by_role("heading", name="Quality control")).to_be_visible()
        expect(dash.get_by_text("Completion per system pair")).to_have_count(0)
        expect(dash.get_by_text("Control pass rate")).to_have_count(0)
        expect(cell(dash, "Neural", "raw")).to_have_text("–")
        for kind in ("da-judgments.csv", "da-judgments.jsonl", "wmt-da.tsv"):
            expect(dash.get_by_role("link", name=f"{SLUG}-{kind}")).to_be_visible()
        navigations = []
        dash.on("framenavigated", lambda frame: navigations.append(frame.url) if frame == dash.main_frame else None)
        dash.evaluate("window.__e2e = 'dashboard-never-reloaded'")

        # The honest volunteer scores every translation once (every system's
        # of each sentence, issue 28); the table fills in, live.
        log_in(honest, live_server, HONEST[1])
        join(honest, live_server)
        assert score_through_the_api(honest, live_server, honest_score, limit=400) == "finished"
        wait_for_collected(dash, 40 * len(QUALITY))
        expect(dash.locator("#panel [data-figure=judges-reliable]")).to_have_text("1")
        assert all(cell(dash, system, "judges").inner_text() == "1" for system in QUALITY)
        raw = {system: float(cell(dash, system, "raw").inner_text()) for system in QUALITY}
        assert raw["Neural"] > raw["Statistical"] > raw["WordByWord"]
        rows = dash.locator("#panel #da-systems tbody tr")
        expect(rows.first).to_have_attribute("data-system", "Neural")  # best z first
        assert int(dash.locator("#panel [data-figure=quality-answered]").inner_text()) > 0

        # The optimiser gives everything 70 and is dismissed by the live rule.
        log_in(optimiser, live_server, OPTIMISER[1])
        join(optimiser, live_server)
        assert score_through_the_api(optimiser, live_server, lambda translation, n: 70) == "dismissed"
        reason = dash.locator("#panel #da-dismissed li[data-reason=bad_references_not_lower]")
        expect(reason).to_contain_text("bad references scored no lower than their originals", timeout=LIVE)
        expect(reason.locator("[data-cell=count]")).to_have_text("1")
        expect(dash.locator("#panel [data-figure=dismissed]")).to_have_text("1")
        discarded = dash.locator("#panel #da-quality tr[data-kind=bad_reference] [data-cell=discarded]")
        assert int(discarded.inner_text()) >= 3
        assert navigations == [], f"the dashboard navigated: {navigations}"
        assert dash.evaluate("window.__e2e") == "dashboard-never-reloaded"

        # Screenshots, desktop and phone; nothing scrolls sideways on the phone.
        dash.goto(f"{live_server}/organiser/c/{SLUG}/")
        dash.screenshot(path=os.path.join(screenshots, "da-dashboard-desktop.png"), full_page=True)
        dash.set_viewport_size(PHONE)
        dash.evaluate("window.scrollTo(0, 0)")
        time.sleep(0.2)
        dash.screenshot(path=os.path.join(screenshots, "da-dashboard-phone.png"))
        dash.screenshot(path=os.path.join(screenshots, "da-dashboard-phone-full.png"), full_page=True)
        assert rate_chart(dash)["values"]  # drawn by Chart.js
        phone_dashboard(dash)  # no sideways scrolling, no table cut off, folding (issue 22)
    finally:
        for context in contexts:
            context.close()
    log = server_log()
    assert "Traceback" not in log and "broadcast failed" not in log, log[-3000:]
