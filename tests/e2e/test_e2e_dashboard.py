"""The organisers' dashboard follows a volunteer live, in headless Chromium.

An organiser keeps the dashboard open (never reloaded) while a volunteer
joins and judges in another browser context: the registered count, the
judgments, the contribution bands, the chart (Chart.js, with its axis
titles and legend) and the top contributors change on the dashboard without
a reload, and the sections the organiser unfolded stay so. An announcement
the organiser types reaches the volunteer's page at once, as text. Along the way, the
volunteer's answer whose response is lost on the way back is sent again and
counted once. The accounts are made with ``flask user create`` on the
live site, as an operator would. On a phone (360x740, issue 22) the page
never scrolls sideways, every table's last column can be seen inside its
own scroll box, and the sections fold and unfold, as left across visits.
"""
import os
import re
import time

from playwright.sync_api import expect

from e2e.pages import (
    DESKTOP, PASSWORD, PHONE, SLUG, choose, confirm_email, judged_text, open_evaluation, phone_dashboard, rate_chart,
    read_controls, unfold,
)

LIVE = 8_000  # ms: a broadcast interval (1 s), then the panel's fetch, with a generous margin
ORGANISER = ("dash.organiser", "dash.organiser@example.org")
VOLUNTEER = ("amaia.dash", "amaia.dash@example.org")


def log_in(page, base_url, email):
    page.goto(f"{base_url}/login")
    page.get_by_label("Email", exact=True).fill(email)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("header.site")).to_contain_text("Log out")


def figure(page, name):
    """The first number of a dashboard figure ("1,234 / 6,000" gives 1234)."""
    text = page.locator(f"#panel [data-figure={name}]").inner_text()
    return int(re.sub(r"\D", "", text.split("/")[0]))


def band_count(page, band):
    row = page.locator("#panel table", has=page.locator("caption", has_text="Judgments per volunteer")).locator(
        "tr", has=page.locator("td", has_text=re.compile(rf"^{re.escape(band)}$")))
    return int(row.locator("td").nth(1).inner_text())


def test_dashboard_updates_live_while_a_volunteer_judges(browser, live_server, site_cli, screenshots, server_log):
    for (username, email), role in ((ORGANISER, "organiser"), (VOLUNTEER, "volunteer")):
        site_cli("user", "create", "--role", role, "--email", email, "--username", username, "--password", PASSWORD)
    site_cli("campaign", "organisers", "add", SLUG, ORGANISER[0])  # an organiser manages the campaigns given
    controls = read_controls()
    organiser_context = browser.new_context(viewport=DESKTOP, locale="en-GB")
    volunteer_context = browser.new_context(viewport=PHONE, locale="en-GB")
    for context in (organiser_context, volunteer_context):
        context.set_default_timeout(10_000)
    dash, page = organiser_context.new_page(), volunteer_context.new_page()
    try:
        # The organiser opens the dashboard and keeps it open from now on.
        log_in(dash, live_server, ORGANISER[1])
        dash.goto(f"{live_server}/organiser/")
        dash.locator(f"a[href$='/organiser/c/{SLUG}/']").click()
        expect(dash).to_have_url(re.compile(rf"/organiser/c/{SLUG}/$"))
        expect(dash.get_by_role("heading", name="Totals")).to_be_visible()
        navigations = []
        dash.on("framenavigated", lambda frame: navigations.append(frame.url) if frame == dash.main_frame else None)
        dash.evaluate("window.__e2e = 'dashboard-never-reloaded'")
        registered, judgments = figure(dash, "registered"), figure(dash, "judgments")
        unfold(dash, "Participants")  # folded at first
        low_band = band_count(dash, "1-25")
        chart = rate_chart(dash)  # none before the first answer of the run
        answered_before = sum(chart["values"]) if chart else 0
        # Enough answers to lead the top contributors whatever other tests did.
        counts = [int(c) for c in dash.locator("#dash-top li .count").all_inner_texts()]
        answers = max([10] + [c + 1 for c in counts])
        assert answers <= 25, "other tests' volunteers judged too much for the 1-25 band"
        expect(dash.locator("#dash-top li", has_text=VOLUNTEER[0])).to_have_count(0)

        # The volunteer logs in and joins: one more registered volunteer, live.
        log_in(page, live_server, VOLUNTEER[1])
        page.goto(f"{live_server}/c/{SLUG}/join")
        page.get_by_label("Your level of English").select_option("B1-B2")
        page.get_by_label("Your level of Basque").select_option("C1-C2")
        page.get_by_label(re.compile(r"^I agree that my answers")).check()
        page.get_by_role("button", name="Take part").click()
        open_evaluation(page)
        expect(dash.locator("#panel [data-figure=registered]")).to_have_text(str(registered + 1), timeout=LIVE)
        # Made by the operator, the account is unconfirmed: only confirmed volunteers are ranked. The
        # volunteer asks for the confirmation email on the welcome page and opens its link.
        page.goto(f"{live_server}/c/{SLUG}/welcome")
        page.get_by_role("button", name="Send the confirmation email again").click()
        expect(page.locator(".flash", has_text="We sent you a new confirmation email.")).to_be_visible()
        confirm_email(page, server_log, VOLUNTEER[0])
        page.goto(f"{live_server}/c/{SLUG}/evaluate")
        expect(page.get_by_role("heading", name="Which translation is better?")).to_be_visible()

        # The tenth answer's response is lost on its way back (the server got
        # it, and it won a raffle ticket): the page keeps the answer, sends it
        # again, it counts once, and the ticket is announced all the same.
        lost = {"done": False}
        api = re.compile(rf"/c/{SLUG}/api/judgment$")

        def lose_the_response(route):
            if not lost["done"]:
                lost["done"] = True
                route.fetch()  # the request reaches the server ...
                route.abort("connectionreset")  # ... but the page never sees the answer
            else:
                route.continue_()

        controls_seen = 0
        for number in range(1, answers + 1):
            before = page.locator("input[name=token]").input_value()
            controls_seen += choose(page, controls, number)
            if number == 10:
                page.route(api, lose_the_response)
            page.get_by_role("button", name="Next").click()
            expect(page.locator(".mine")).to_contain_text(judged_text(number))
            expect(page.locator("input[name=token]")).not_to_have_value(before)
            if number == 10:
                assert lost["done"]
                page.unroute(api)
                expect(page.locator("#notices .flash-ticket")).to_contain_text("You won a new raffle number")
        tests = answers - controls_seen
        assert tests >= 1

        # The dashboard, never reloaded, shows the answers.
        expect(dash.locator("#panel [data-figure=judgments]")).to_contain_text(
            re.compile(rf"^\s*{judgments + tests:,} /"), timeout=LIVE)
        top = dash.locator("#dash-top li", has_text=VOLUNTEER[0])
        expect(top).to_have_count(1, timeout=LIVE)
        expect(top.locator(".count")).to_have_text(str(answers))
        assert band_count(dash, "1-25") == low_band + 1
        # The chart, drawn again with the new answers: axis titles, a legend, times as people write them.
        chart = rate_chart(dash)
        assert sum(chart["values"]) > answered_before
        assert (chart["x"], chart["y"]) == ("Time (UTC)", "Answers per minute")
        assert chart["legend"] and chart["legend"][0].startswith(("Answers", "Mean answers"))
        assert chart["labels"] and not any(re.search(r"\d{4}-\d\d-\d\dT", label) for label in chart["labels"])
        assert all(re.fullmatch(r"(.+, )?\d{1,2}:\d\d\s[AP]M", label) for label in chart["labels"])
        # Sections unfolded stay unfolded across live updates.
        expect(dash.locator("details[data-fold=participants]")).to_have_attribute("open", "")
        assert navigations == [], f"the dashboard navigated: {navigations}"
        assert dash.evaluate("window.__e2e") == "dashboard-never-reloaded"
        # The lost response changed nothing: every answer counted once.
        fresh = volunteer_context.new_page()
        try:
            fresh.goto(f"{live_server}/c/{SLUG}/welcome")
            expect(fresh.locator(".mine")).to_contain_text(judged_text(answers))
            expect(fresh.locator(".mine strong")).to_have_text(re.compile(r"^\d+$"))
        finally:
            fresh.close()

        # An announcement reaches the volunteer's open page at once, as text.
        unfold(dash, "Announcement")
        dash.get_by_label("Announcement to every connected volunteer").fill("<b>Prizes</b> on Friday")
        dash.get_by_role("button", name="Send to everyone now").click()
        expect(dash.locator(".flash", has_text="Announcement sent.")).to_be_visible()
        announcement = page.locator("#announcement-text")  # kept until dismissed (issue 22)
        expect(announcement).to_have_text("<b>Prizes</b> on Friday", timeout=LIVE)
        expect(announcement.locator("b")).to_have_count(0)

        # Screenshots of the dashboard, desktop and phone, each section as it
        # is at first (the page's height printed: issue 22 found 3,900 and 5,300 px;
        # issue 31's lifecycle card and raffle figures add about 150 px on a phone).
        # Folds go back to their defaults on the page first: a live update that
        # lands after a bare localStorage.clear() would store the open ones again.
        dash.goto(f"{live_server}/organiser/c/{SLUG}/")
        dash.evaluate("document.querySelectorAll('details[data-fold]').forEach("
                      "d => { d.open = d.dataset.default === 'open'; })")
        dash.wait_for_function("Object.keys(window.localStorage).every(k => !k.startsWith('bozka.dashboard.fold.'))")
        dash.evaluate("window.localStorage.clear()")
        dash.reload()
        expect(dash.locator("details[data-fold=participants]")).not_to_have_attribute("open", "")
        heights = {"desktop": dash.evaluate("document.documentElement.scrollHeight")}
        dash.screenshot(path=os.path.join(screenshots, "dashboard-desktop.png"))
        dash.screenshot(path=os.path.join(screenshots, "dashboard-desktop-full.png"), full_page=True)
        dash.set_viewport_size(PHONE)
        dash.evaluate("window.scrollTo(0, 0)")
        time.sleep(0.2)
        heights["phone"] = dash.evaluate("document.documentElement.scrollHeight")
        print(f"dashboard height: {heights}")
        assert heights["desktop"] < 2_600 and heights["phone"] < 4_200, heights
        dash.screenshot(path=os.path.join(screenshots, "dashboard-phone.png"))
        dash.screenshot(path=os.path.join(screenshots, "dashboard-phone-full.png"), full_page=True)
        phone_dashboard(dash)
    finally:
        organiser_context.close()
        volunteer_context.close()
    log = server_log()
    assert "Traceback" not in log and "broadcast failed" not in log, log[-3000:]

