"""The organiser's side of an ESA campaign on the site as ``make run``
serves it (issue 33): the dashboard's panel, the review page of a volunteer
with the spans they marked, and the two exports downloaded from the
dashboard and analysed by scripts/analyse.py, at phone and desktop sizes."""
import json
import os
import subprocess
import sys

from playwright.sync_api import expect
from sqlalchemy import create_engine, text

from e2e.i18n_pages import DESKTOP, PHONE, new_context, register, start_judging
from e2e.pages import PASSWORD, no_sideways_scrolling, unfold

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SLUG = "demo-en-eu-esa"
ORGANISER = ("esa.organiser", "esa.organiser@example.org")


def annotate_two(browser, live_server, username):
    """Two segments through the page: a major error on the first word, then nothing marked."""
    context = new_context(browser, "10.7.40.1", viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    try:
        register(page, live_server, SLUG, username)
        start_judging(page, SLUG)
        for n, marks in enumerate((True, False)):
            if marks:
                page.locator("#esa-text .esa-word").first.tap()
                page.get_by_role("button", name="Mark the selection as a major error").tap()
            page.locator("#score-number").evaluate("(el, v) => { el.value = v; }", str(30 + 40 * n))
            page.wait_for_timeout(1500)  # read as a volunteer would: quicker counts for nothing (the reading floor)
            before = page.locator("input[name=token]").input_value()
            page.locator("#next").tap()
            expect(page.locator("input[name=token]")).not_to_have_value(before)
    finally:
        context.close()


def rows(database, sql, **params):
    engine = create_engine(database)
    try:
        with engine.connect() as connection:
            return connection.execute(text(sql), params).all()
    finally:
        engine.dispose()


def test_dashboard_review_and_exports_of_an_esa_campaign(browser, live_server, site_cli, site_database, tmp_path,
                                                         screenshots):
    site_cli("user", "create", "--role", "organiser", "--email", ORGANISER[1], "--username", ORGANISER[0],
             "--password", PASSWORD)
    site_cli("campaign", "organisers", "add", SLUG, ORGANISER[0])
    annotate_two(browser, live_server, "esa.reviewed")
    answered = rows(site_database,
                    "SELECT systems.name, items.score, items.spans, participations.id FROM items "
                    "JOIN participations ON participations.id = items.participation_id "
                    "JOIN users ON users.id = participations.user_id JOIN systems ON systems.id = items.left_system_id "
                    "WHERE users.username = 'esa.reviewed' AND items.answered_at IS NOT NULL ORDER BY items.position")
    assert [score for _n, score, _s, _p in answered] == [30, 70]
    participation = answered[0][3]
    context = new_context(browser, "10.7.41.1", viewport=DESKTOP)
    page = context.new_page()
    try:
        page.goto(f"{live_server}/login")
        page.get_by_label("Email", exact=True).fill(ORGANISER[1])
        page.get_by_label("Password", exact=True).fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        expect(page.locator("header.site")).to_contain_text("Log out")

        # The panel: the system annotated has its segments and mean score.
        page.goto(f"{live_server}/organiser/c/{SLUG}/")
        system = answered[0][0]
        counted = rows(site_database,
                       "SELECT count(*), avg(items.score) FROM items JOIN systems ON systems.id = items.left_system_id "
                       "JOIN campaigns ON campaigns.id = items.campaign_id "
                       "JOIN participations ON participations.id = items.participation_id WHERE campaigns.slug = :slug "
                       "AND systems.name = :name AND items.answered_at IS NOT NULL AND items.discarded_at IS NULL "
                       "AND NOT items.too_fast AND participations.dismissed_at IS NULL AND participations.held_at IS NULL",
                       slug=SLUG, name=system)[0]
        cells = page.locator(f"#esa-systems tr[data-system='{system}']")
        expect(cells.locator("[data-cell=segments]")).to_have_text(str(counted[0]))
        expect(cells.locator("[data-cell=mean]")).to_have_text(f"{float(counted[1]):.1f}")
        for size, name in ((PHONE, "phone"), (DESKTOP, "desktop")):
            page.set_viewport_size(size)
            page.screenshot(path=f"{screenshots}/esa-dashboard-{name}.png", full_page=True)
        no_sideways_scrolling(page, DESKTOP["width"])

        # The review page shows each segment with the words marked.
        page.goto(f"{live_server}/organiser/c/{SLUG}/volunteer/{participation}")
        unfold(page, "Annotations (2)")
        first = page.locator("#judgments tr[data-position]").first
        expect(first.locator("[data-cell=score]")).to_have_text("30")
        expect(first.locator("[data-cell=spans]")).to_contain_text("major")
        expect(page.locator("#judgments tr[data-position]").nth(1).locator("[data-cell=spans]")).to_have_text("none")
        page.set_viewport_size(PHONE)
        no_sideways_scrolling(page)
        page.screenshot(path=f"{screenshots}/esa-review-phone.png", full_page=True)
        page.set_viewport_size(DESKTOP)

        # Both exports, downloaded from the dashboard, read by the analysis.
        page.goto(f"{live_server}/organiser/c/{SLUG}/")
        unfold(page, "Exports")
        for kind, fmt, read_as in (("esa-judgments", "jsonl", "bozka-esa"), ("wmt24-esa", "csv", "wmt24-esa")):
            with page.expect_download() as download:
                page.locator(f"[data-export] a[href$='/export/{kind}.{fmt}']").click()
            path = str(tmp_path / download.value.suggested_filename)
            download.value.save_as(path)
            done = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "analyse.py"), path,
                                   "--format", read_as, "--json", path + ".json"],
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stdout + done.stderr
            with open(path + ".json", encoding="utf-8") as handle:
                result = json.load(handle)
            assert system in {s["system"] for s in result["systems"]}
            if kind == "esa-judgments":
                with open(path, encoding="utf-8") as handle:
                    mine = [json.loads(line) for line in handle if line.strip()]
                marked = [r for r in mine if r["judgment_id"] and r["spans"]]
                assert any(r["spans"][0]["severity"] == "major" and r["spans"][0]["start"] == 0 for r in marked)
    finally:
        context.close()
