"""Sequential assignment on the served site (issue 32): volunteers judge
through the API until the anytime-valid test decides pairs; the live ticker
re-plans; the organiser's dashboard shows each pair's decision, the decisions
export downloads from it, and a volunteer sees the community's progress
towards decided pairs and what was decided, in Chromium (phone and desktop)."""
import csv
import io
import os
import re
import sys

from playwright.sync_api import expect

from e2e.i18n_pages import DESKTOP, PASSWORD, PHONE, log_in, new_context, register
from e2e.pages import unfold
from helpers import write_campaign

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "scripts", "bench"))
from players import Player, better_of, confirm  # noqa: E402
from players import register as register_bot  # noqa: E402
from scripts.bench.harness import opening_args  # noqa: E402

SLUG = "decide"
RANK = {"A": 0, "B": 1, "C": 2}  # every bot prefers A to B to C


def _campaign(tmp_path, site_cli):
    folder = write_campaign(str(tmp_path / SLUG), sentences=60, systems=tuple(RANK), slug=SLUG,
                            assignment="sequential", control_source="generated", fast_seconds_per_word=0.0,
                            hold_min_tests=0, hold_fast_run=0)
    site_cli("campaign", "import", folder, *opening_args())


def _preferred(item):
    """The side a bot answers: a control's better translation, else the better-ranked system's
    ("Output N of X.")."""
    better = better_of(item, {})
    if better is None:
        systems = {side: re.search(r" of (\w+)\.$", item[side]).group(1) for side in ("left", "right")}
        return min(("left", "right"), key=lambda side: RANK[systems[side]])
    return "left" if item["left"] == better else "right"


def _judge(base, name, address, read_log, items=60):
    player = Player(name, "honest", (0, 0), items)
    session = register_bot(base, SLUG, player, address)
    confirm(session, player, read_log)
    item = session.get(f"{base}/c/{SLUG}/api/item", timeout=30).json()["item"]
    while item is not None and items:
        reply = session.post(f"{base}/c/{SLUG}/api/judgment", json={"token": item["token"], "choice": _preferred(item)},
                             timeout=60)
        reply.raise_for_status()
        item, items = reply.json()["item"], items - 1


def test_pairs_are_decided_live_shown_exported_and_told(browser, live_server, site_cli, tmp_path, server_log,
                                                        screenshots):
    _campaign(tmp_path, site_cli)
    site_cli("user", "create", "--role", "organiser", "--email", "decide.organiser@example.org",
             "--username", "decide.organiser", "--password", PASSWORD)
    site_cli("campaign", "organisers", "add", SLUG, "decide.organiser")
    for n in range(2):
        _judge(live_server, f"decider{n}", f"10.32.{n}.1", server_log)

    organiser = new_context(browser, "10.32.9.1", viewport=DESKTOP, accept_downloads=True)
    volunteer = new_context(browser, "10.32.9.2", viewport=PHONE, has_touch=True, is_mobile=True)
    try:
        dash = organiser.new_page()
        log_in(dash, live_server, "decide.organiser@example.org")
        # The ticker re-plans within a second or two of the last answer; the panel follows it live.
        dash.goto(f"{live_server}/organiser/c/{SLUG}/")
        fold = unfold(dash, "Decisions per pair")
        expect(fold.locator("tr[data-pair='A|B'] td").last).to_have_text("A better", timeout=20_000)
        expect(fold.locator("tr[data-pair='A|C'] td").last).to_have_text("A better")
        expect(fold.locator("tr[data-pair='B|C'] td").last).to_have_text("B better")
        expect(fold.locator("[data-figure=decided-pairs]")).to_have_text("3 of 3 pairs decided")
        expect(fold.locator("#decisions-rule")).to_contain_text("anytime-valid test")
        # Scrolled in the page: the live panel may replace the section between a lookup and an action.
        show = "document.getElementById('section-decisions').scrollIntoView()"
        dash.evaluate(show)
        dash.screenshot(path=os.path.join(screenshots, "decisions-dashboard-desktop.png"))
        dash.set_viewport_size(PHONE)
        dash.evaluate(show)
        dash.screenshot(path=os.path.join(screenshots, "decisions-dashboard-phone.png"))
        assert dash.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

        # The decisions export, downloaded from the dashboard's exports.
        unfold(dash, "Exports")
        with dash.expect_download() as download:
            dash.locator("tr[data-export=decisions] a", has_text=f"{SLUG}-decisions.csv").click()
        path = os.path.join(tmp_path, "decisions.csv")
        download.value.save_as(path)
        with open(path, encoding="utf-8") as handle:
            rows = {(r["system_a"], r["system_b"]): r for r in csv.DictReader(io.StringIO(handle.read()))}
        assert {pair: r["decided_better"] for pair, r in rows.items()} == {
            ("A", "B"): "A", ("A", "C"): "A", ("B", "C"): "B"}
        assert all(float(r["level"]) == 0.01 and r["assignment"] == "sequential" for r in rows.values())

        # A volunteer: the progress counts decided pairs; the campaign reached its goal; what was decided.
        page = volunteer.new_page()
        register(page, live_server, SLUG, "decide.late")
        page.goto(f"{live_server}/c/{SLUG}/welcome")
        decided = page.locator("#decided li")
        expect(decided).to_have_text(["A translates better than B", "A translates better than C",
                                      "B translates better than C"], timeout=10_000)
        expect(page.locator("#goal-reached")).to_contain_text("The campaign has reached its goal")
        expect(page.get_by_role("link", name="Continue evaluating")).to_have_count(0)
        page.screenshot(path=os.path.join(screenshots, "decisions-welcome-phone.png"), full_page=True)
        page.goto(f"{live_server}/c/{SLUG}/evaluate")  # not even a control: no test item could follow
        expect(page.locator("input[name=token]")).to_have_count(0)
        expect(page.get_by_role("heading", name="The campaign has reached its goal")).to_be_visible()
        page.screenshot(path=os.path.join(screenshots, "decisions-goal-phone.png"))
    finally:
        organiser.close()
        volunteer.close()
