"""Issue 31's organiser and researcher items on the served site (a site of
its own, as ``make run`` serves it): the dashboard's top contributors share
ranks as volunteers see them and its raffle figures are the published
list's, saying what is left out; a volunteer's page is short on a phone;
the export documentation opens from the dashboard; the raffle page offers
the checking script, which runs alone; commands run in the terminal are on
the audit page. Screenshots at 360x740 and 1280x800."""
import os
import re
import subprocess
import sys

import pytest
from playwright.sync_api import expect
from sqlalchemy import create_engine, text

from e2e.conftest import ROOT, flask_command, served_site
from e2e.walk import judge_da, report_item
from e2e.pages import DESKTOP, PASSWORD, PHONE, SLUG, choose, judged_text, no_sideways_scrolling, \
    open_evaluation, read_controls, register, unfold

ORGANISER, ADMIN, RESEARCHER = "minor.organiser", "minor.admin", "minor.researcher"
# (username, answers): two equal counts below the first, and one held for review.
VOLUNTEERS = (("minor.first", 30), ("minor.tied.a", 10), ("minor.tied.b", 10), ("minor.held", 10))
SCORER, DA = "minor.scorer", "demo-en-eu-da"
PHONE_HEIGHT_LIMIT = 2 * 1200  # px: the review page was 8,549 px long on a phone


@pytest.fixture(scope="module")
def site():
    with served_site(prefix="bozka-e2e-minor-") as (base_url, env, log_path):
        def cli(*args):
            done = subprocess.run(flask_command(*args), cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=60, stdin=subprocess.DEVNULL)
            assert done.returncode == 0, done.stdout + done.stderr
            return done.stdout

        def log():
            with open(log_path, encoding="utf-8", errors="replace") as handle:
                return handle.read()

        database = env.get("DATABASE_URL") or "sqlite:///" + os.path.join(env["BOZKA_INSTANCE"], "bozka.sqlite3")
        yield {"url": base_url, "cli": cli, "log": log, "database": database}


def context_for(browser, viewport, address):
    context = browser.new_context(viewport=viewport, locale="en-GB", extra_http_headers={"X-Forwarded-For": address})
    context.set_default_timeout(15_000)
    return context


def log_in(page, url, username):
    page.goto(f"{url}/login")
    page.get_by_label("Email", exact=True).fill(f"{username}@example.org")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("header.site")).to_contain_text("Log out")


def judge(page, answers):
    controls = read_controls()
    open_evaluation(page)
    for number in range(1, answers + 1):
        choose(page, controls, number)
        page.get_by_role("button", name="Next").click()
        expect(page.locator(".mine")).to_contain_text(judged_text(number))


def confirm(database, username):
    """The volunteer's email confirmed (the mail's link: tests/e2e/pages.confirm_email)."""
    engine = create_engine(database)
    try:
        with engine.begin() as connection:
            connection.execute(text("UPDATE users SET email_confirmed_at = CURRENT_TIMESTAMP WHERE username = :name"),
                               {"name": username})
            connection.execute(text("UPDATE campaigns SET raffle_version = raffle_version + 1"))
    finally:
        engine.dispose()


def hold(database, username):
    """Held for review, as a sign would (the signs are off on a test site); the
    list is read again, as rewards.list_changed has it."""
    engine = create_engine(database)
    try:
        with engine.begin() as connection:
            connection.execute(text(
                "UPDATE participations SET held_at = CURRENT_TIMESTAMP, held_reason = 'same_side' "
                "WHERE user_id = (SELECT id FROM users WHERE username = :name)"), {"name": username})
            connection.execute(text("UPDATE campaigns SET raffle_version = raffle_version + 1"))
    finally:
        engine.dispose()


def participation_of(database, username, slug=SLUG):
    engine = create_engine(database)
    try:
        with engine.connect() as connection:
            return connection.execute(text(
                "SELECT participations.id FROM participations JOIN users ON users.id = participations.user_id "
                "JOIN campaigns ON campaigns.id = participations.campaign_id "
                "WHERE users.username = :name AND campaigns.slug = :slug"),
                {"name": username, "slug": slug}).scalar_one()
    finally:
        engine.dispose()


def test_the_organisers_and_researchers_pages_of_issue_31(browser, site, screenshots, tmp_path):
    url, cli = site["url"], site["cli"]
    for username, role in ((ORGANISER, "organiser"), (ADMIN, "admin"), (RESEARCHER, "researcher")):
        cli("user", "create", "--role", role, "--email", f"{username}@example.org", "--username", username,
            "--password", PASSWORD)
    cli("campaign", "organisers", "add", SLUG, ORGANISER)
    cli("campaign", "organisers", "add", DA, ORGANISER)
    # Every DA answer of a browser is faster than reading once the floor is on (the fast-run hold stays off).
    cli("campaign", "settings", DA, "fast_seconds_per_word=5")

    for n, (username, answers) in enumerate(VOLUNTEERS):
        context = context_for(browser, PHONE, f"10.31.7.{n + 1}")
        try:
            page = context.new_page()
            register(page, url, username)
            confirm(site["database"], username)  # only confirmed volunteers are ranked and drawn
            judge(page, answers)
            if n == 0:
                report_item(page)  # reported by minor.first: a researcher sees the pseudonym only
        finally:
            context.close()
    hold(site["database"], VOLUNTEERS[3][0])
    scorer = context_for(browser, PHONE, "10.31.7.9")
    try:
        page = scorer.new_page()
        register(page, url, SCORER)
        page.goto(f"{url}/c/{DA}/join")
        page.locator("main form [name=source_level]").select_option("B1-B2")
        page.locator("main form [name=target_level]").select_option("C1-C2")
        page.locator("main form [name=consent]").check()
        page.locator("main form button[type=submit]").click()
        expect(page).to_have_url(re.compile(rf"/c/{DA}/instructions$"))
        page.goto(f"{url}/c/{DA}/evaluate")
        judge_da(page, 6)
    finally:
        scorer.close()

    desktop, phone = context_for(browser, DESKTOP, "10.31.7.20"), context_for(browser, PHONE, "10.31.7.21")
    try:
        dash, small = desktop.new_page(), phone.new_page()
        log_in(dash, url, ORGANISER)
        log_in(small, url, ORGANISER)

        # Top contributors: equal counts share a rank, as on the volunteers' ranking (1, 2, 2).
        dash.goto(f"{url}/organiser/c/{SLUG}/")
        top = dash.locator("#dash-top li")
        expect(top).to_have_count(3)
        assert [top.nth(i).locator(".rank").inner_text() for i in range(3)] == ["1", "2", "2"]
        assert VOLUNTEERS[3][0] not in dash.locator("#dash-top").inner_text()
        # The raffle: the published list's figure (4 tickets) and the held volunteer's ticket named apart.
        public = dash.request.get(f"{url}/c/{SLUG}/raffle/tickets.csv").text().splitlines()[1:]
        expect(dash.locator("[data-figure=raffle-eligible]")).to_have_text(str(len(public)))
        assert len(public) == 3 + 1 + 1
        expect(dash.locator("#raffle-left-out")).to_have_text("1 more valid ticket is not in the list:")
        expect(dash.locator("[data-left-out=held]")).to_have_text(
            "1 ticket of a volunteer held for review (back in the list if the hold is cleared)")
        expect(dash.locator("[data-figure=raffle-valid]")).to_have_text("6")
        dash.screenshot(path=f"{screenshots}/issue31-dashboard-desktop.png", full_page=True)
        small.goto(f"{url}/organiser/c/{SLUG}/")
        expect(small.locator("[data-left-out=held]")).to_be_visible()
        small.evaluate("document.getElementById('raffle-left-out').scrollIntoView()")  # #panel is fetched anew live
        small.screenshot(path=f"{screenshots}/issue31-top-raffle-phone.png")

        # The review page of the volunteer with the most answers: short on a phone, judgments a page at a time.
        review = f"{url}/organiser/c/{SLUG}/volunteer/{participation_of(site['database'], VOLUNTEERS[0][0])}"
        small.goto(review)
        no_sideways_scrolling(small)
        height = small.evaluate("document.documentElement.scrollHeight")
        assert height <= PHONE_HEIGHT_LIMIT, f"the review page is {height} px long on a phone"
        expect(small.get_by_role("button", name="Dismiss the volunteer")).to_be_visible()
        small.screenshot(path=f"{screenshots}/issue31-review-phone.png", full_page=True)
        unfold(small, "Judgments (30)")
        expect(small.locator("#judgments tbody tr")).to_have_count(10)
        expect(small.locator("nav.pager").first).to_contain_text("Rows 1–10 of 30")
        small.locator("nav.pager").first.get_by_role("link", name="Next page").click()
        expect(small).to_have_url(re.compile(r"\?page=2#judgments$"))
        expect(small.locator("nav.pager").first).to_contain_text("Rows 11–20 of 30")
        expect(small.locator("#judgments tbody tr")).to_have_count(10)
        height = small.evaluate("document.documentElement.scrollHeight")
        assert height <= 2 * PHONE_HEIGHT_LIMIT, f"a page of judgments is {height} px long on a phone"
        expect(small.locator("#judgments")).to_be_visible()  # the fold opens on its own pages
        no_sideways_scrolling(small)
        small.screenshot(path=f"{screenshots}/issue31-review-phone-page2.png", full_page=True)
        dash.goto(review)
        dash.screenshot(path=f"{screenshots}/issue31-review-desktop.png", full_page=True)

        # The DA review's evidence of answers below the reading floor counts the scores (it read "6 of 0").
        small.goto(f"{url}/organiser/c/{DA}/volunteer/{participation_of(site['database'], SCORER, DA)}")
        expect(small.locator("#sign-fast td").first).to_have_text(
            "Below the reading floor: 6 of 6 test answers; longest run: 6")
        small.locator("#sign-fast").scroll_into_view_if_needed()
        small.screenshot(path=f"{screenshots}/issue31-da-review-phone.png")

        # The raffle page offers the checking script: the site's own file, and it runs alone.
        small.goto(f"{url}/c/{SLUG}/raffle")
        link = small.locator("a[href$='/raffle/verify_raffle.py']")
        expect(link).to_be_visible()
        with small.expect_download() as download:
            link.click()
        script = os.path.join(tmp_path, "verify_raffle.py")
        download.value.save_as(script)
        with open(script, "rb") as served, open(os.path.join(ROOT, "scripts", "verify_raffle.py"), "rb") as ours:
            assert served.read() == ours.read()
        alone = subprocess.run([sys.executable, "-I", "-S", script, "--help"], cwd=tmp_path, capture_output=True,
                               text=True, timeout=60)
        assert alone.returncode == 0 and "--tickets" in alone.stdout, alone.stdout + alone.stderr
        link.scroll_into_view_if_needed()
        small.screenshot(path=f"{screenshots}/issue31-raffle-script-phone.png")
    finally:
        desktop.close()
        phone.close()

    # A researcher opens the export documentation from the dashboard.
    researcher = context_for(browser, PHONE, "10.31.7.22")
    try:
        page = researcher.new_page()
        log_in(page, url, RESEARCHER)
        page.goto(f"{url}/organiser/c/{SLUG}/")
        unfold(page, "Exports")
        page.locator("a#export-format").click()
        expect(page).to_have_url(re.compile(r"/organiser/docs/export-format\.md$"))
        expect(page.locator("body")).to_contain_text("# Research exports")
        page.screenshot(path=f"{screenshots}/issue31-export-format-phone.png")
        # Reported items: the reporter's export pseudonym, never the username (as in the exports).
        page.goto(f"{url}/organiser/c/{SLUG}/")
        reports = unfold(page, "Reported items").locator("#reports tbody tr")
        expect(reports).to_have_count(1)
        expect(reports.first).to_contain_text(re.compile(r"v-[0-9a-f]{10}"))
        assert VOLUNTEERS[0][0] not in page.locator("#reports").inner_text()
        assert VOLUNTEERS[0][0] not in page.content()
    finally:
        researcher.close()

    # The commands run above are on the audit page, by the command line.
    for viewport, name in ((DESKTOP, "desktop"), (PHONE, "phone")):
        admin = context_for(browser, viewport, "10.31.7.23")
        try:
            page = admin.new_page()
            log_in(page, url, ADMIN)
            page.goto(f"{url}/organiser/audit")
            row = page.locator("tbody tr", has_text="Organiser given the campaign").first
            expect(row).to_contain_text(re.compile(r"Command line \(system user [^)]+\)"))
            expect(page.locator("tbody tr", has_text="Account created")).to_have_count(3)
            page.screenshot(path=f"{screenshots}/issue31-audit-{name}.png", full_page=name == "desktop")
        finally:
            admin.close()
