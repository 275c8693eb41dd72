"""The judging page on a phone (issue 22): the campaign's name, the
instructions link, the count down to the next raffle number after each
answer (sent by the judging API), and reporting a broken item."""
import os
import re

from playwright.sync_api import expect

from e2e.pages import (DESKTOP, PASSWORD, PHONE, SLUG, choose, current_item, no_sideways_scrolling, open_evaluation,
                       read_controls, register, unfold)


def test_the_judging_page_on_a_phone_counts_down_and_reports_an_item(browser, live_server, screenshots):
    controls = read_controls()
    context = browser.new_context(viewport=PHONE, locale="en-GB", extra_http_headers={"X-Forwarded-For": "10.22.0.1"})
    context.set_default_timeout(10_000)
    page = context.new_page()
    try:
        register(page, live_server, "report.e2e")
        open_evaluation(page)
        expect(page.locator(".campaign-name")).to_have_text("Demo: English to Basque")
        expect(page.locator(".campaign-line").get_by_role("link", name="Instructions")).to_have_attribute(
            "href", f"/c/{SLUG}/instructions")
        expect(page.locator(".mine")).to_contain_text("10 more sentences to your next raffle number.")
        for number in (1, 2):
            choose(page, controls, number)
            page.get_by_role("button", name="Next").click()
            expect(page.locator(".mine")).to_contain_text(f"{10 - number} more sentences to your next raffle number.")
        # Item 3, reached without a reload: the report form names it.
        shown = current_item(page)
        page.get_by_text("Report a problem with this item").click()
        page.get_by_label("A translation is in the wrong language").check()
        page.get_by_label("Details (optional)").fill("Translation 2 is Spanish")
        no_sideways_scrolling(page)
        page.screenshot(path=os.path.join(screenshots, "evaluate-report-phone.png"), full_page=True)
        page.get_by_role("button", name="Report and skip").click()
        expect(page).to_have_url(re.compile(rf"/c/{SLUG}/evaluate$"))
        expect(page.locator(".flash-info")).to_contain_text("the problem is reported to the organisers")
        assert current_item(page) != shown
        # Skipped, not judged: the count and the count down are unchanged.
        expect(page.locator(".mine")).to_contain_text("You have judged 2 sentences.")
        expect(page.locator(".mine")).to_contain_text("8 more sentences to your next raffle number.")
        expect(page.locator("#report")).not_to_have_attribute("open", "")
        no_sideways_scrolling(page)
        page.screenshot(path=os.path.join(screenshots, "evaluate-reported-phone.png"))
        page.set_viewport_size(DESKTOP)
        page.screenshot(path=os.path.join(screenshots, "evaluate-reported-desktop.png"))
    finally:
        context.close()


def test_registering_on_a_phone_shows_the_rules_and_the_consent_error_below_its_box(browser, live_server, screenshots):
    context = browser.new_context(viewport=PHONE, locale="en-GB", extra_http_headers={"X-Forwarded-For": "10.22.0.2"})
    context.set_default_timeout(10_000)
    page = context.new_page()
    try:
        page.goto(f"{live_server}/c/{SLUG}/register")
        # The password rule is there before anything is sent, and read with the field.
        expect(page.get_by_label("Password", exact=True)).to_have_accessible_description(
            "At least 8 characters; not a common password, nor your username or email.")
        expect(page.get_by_label("Your level of Basque").locator("option").last).to_have_text("Native speaker")
        page.get_by_role("button", name="Register and start").click()
        error = page.get_by_text("Please give your consent to take part.")
        expect(error).to_be_visible()
        box = page.get_by_label(re.compile(r"^I agree that my answers")).bounding_box()
        below = error.bounding_box()
        assert below["y"] >= box["y"] + box["height"], (box, below)
        no_sideways_scrolling(page)
        error.scroll_into_view_if_needed()
        page.screenshot(path=os.path.join(screenshots, "register-consent-error-phone.png"))
        register(page, live_server, "logout.e2e")
        logout = page.get_by_role("button", name="Log out")
        for size in (PHONE, DESKTOP):
            page.set_viewport_size(size)
            assert logout.bounding_box()["height"] >= 24
    finally:
        context.close()


def test_an_announcement_stays_until_dismissed_and_the_dashboard_lists_reports(browser, live_server, site_cli, screenshots):
    from e2e.test_e2e_dashboard import log_in

    site_cli("user", "create", "--role", "organiser", "--email", "ann.organiser@example.org",
             "--username", "ann.organiser", "--password", PASSWORD)
    site_cli("campaign", "organisers", "add", SLUG, "ann.organiser")  # an organiser manages the campaigns given
    organiser_context = browser.new_context(viewport=DESKTOP, locale="en-GB")
    volunteer_context = browser.new_context(viewport=PHONE, locale="en-GB",
                                            extra_http_headers={"X-Forwarded-For": "10.22.0.3"})
    for context in (organiser_context, volunteer_context):
        context.set_default_timeout(10_000)
    dash, page = organiser_context.new_page(), volunteer_context.new_page()
    try:
        register(page, live_server, "announce.e2e")
        open_evaluation(page)
        # (Another test's announcement may be showing: this site keeps them for a week.)
        log_in(dash, live_server, "ann.organiser@example.org")
        dash.goto(f"{live_server}/organiser/c/{SLUG}/")
        unfold(dash, "Announcement")
        dash.get_by_label("Announcement to every connected volunteer").fill("<b>Raffle</b> at noon")
        dash.get_by_role("button", name="Send to everyone now").click()
        expect(dash.locator(".flash", has_text="Announcement sent.")).to_be_visible()
        # Live, then still there after the next answer and on a later visit.
        expect(page.locator("#announcement-text")).to_have_text("<b>Raffle</b> at noon")
        choose(page, read_controls(), 1)
        page.get_by_role("button", name="Next").click()
        expect(page.locator(".mine")).to_contain_text("You have judged 1 sentence.")
        expect(page.locator("#announcement-text")).to_have_text("<b>Raffle</b> at noon")
        page.reload()
        expect(page.locator("#announcement-text")).to_have_text("<b>Raffle</b> at noon")
        expect(page.locator("#announcement b")).to_have_count(0)
        no_sideways_scrolling(page)
        page.screenshot(path=os.path.join(screenshots, "evaluate-announcement-phone.png"))
        page.locator("#announcement").get_by_role("button", name="Dismiss").click()
        expect(page).to_have_url(re.compile(rf"/c/{SLUG}/evaluate$"))
        expect(page.locator("#announcement")).to_be_hidden()
        page.reload()
        expect(page.locator("#announcement")).to_be_hidden()
        # The reports section of the dashboard (the first test of this file reported an item).
        dash.goto(f"{live_server}/organiser/c/{SLUG}/")
        section = unfold(dash, "Reported items")  # open at first once there are reports
        expect(section.locator("#reports tbody tr")).not_to_have_count(0)
        section.scroll_into_view_if_needed()
        dash.screenshot(path=os.path.join(screenshots, "dashboard-reports-desktop.png"))
    finally:
        organiser_context.close()
        volunteer_context.close()
