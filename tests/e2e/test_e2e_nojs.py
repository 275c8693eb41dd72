"""Without JavaScript the evaluation page is a plain form: each answer is a
POST of the whole page and the server renders the next sentence."""
import re

from playwright.sync_api import expect

from e2e.pages import (
    PHONE, SLUG, choose, confirm_email, judged_text, no_sideways_scrolling, open_evaluation, read_controls,
    register, token,
)


def test_judging_without_javascript(browser, live_server, server_log):
    controls = read_controls()
    evaluate_url = f"{live_server}/c/{SLUG}/evaluate"
    context = browser.new_context(viewport=PHONE, locale="en-GB", java_script_enabled=False)
    context.set_default_timeout(10_000)
    page = context.new_page()
    try:
        register(page, live_server, "miren.nojs")
        confirm_email(page, server_log, "miren.nojs")  # only confirmed volunteers are ranked
        open_evaluation(page)
        assert page.evaluate("1 + 1") == 2  # Playwright's own scripts still run
        assert page.evaluate("typeof window.io") == "undefined"  # the page's do not
        no_sideways_scrolling(page)
        # The server renders the board; nothing updates it without a reload.
        expect(page.locator("#progress [data-field=collected]")).to_have_text(re.compile(r"^\d[\d,]*$"))

        for number in range(1, 11):
            previous = token(page)
            choose(page, controls, number)
            with page.expect_request(
                lambda r: r.method == "POST" and r.url == evaluate_url and r.resource_type == "document"
            ) as posted:
                with page.expect_navigation(url=evaluate_url):
                    page.get_by_role("button", name="Next").click()
            assert "choice=" in (posted.value.post_data or "")
            assert "csrf_token=" in posted.value.post_data
            expect(page.get_by_role("heading", name="Thank you for your time")).to_have_count(0)
            expect(page.get_by_role("heading", name="Which translation is better?")).to_be_visible()
            expect(page.locator(".mine")).to_contain_text(judged_text(number))
            assert token(page) != previous, f"item {number}: the same sentence came back"
            expect(page.locator("input[name=choice]:checked")).to_have_count(0)
            notice = page.locator(".flash-ticket")
            if number == 10:
                expect(notice).to_contain_text("You won a new raffle number")
                ticket = re.search(r"(\d+)", notice.inner_text()).group(1)
                expect(page.locator(".mine strong")).to_have_text(ticket)
            else:
                expect(notice).to_have_count(0)
            expect(page.locator(".flash-error")).to_have_count(0)

        # No answer chosen: the server says so (the browser's own check is off) and keeps the sentence.
        previous = token(page)
        page.get_by_role("button", name="Next").click()
        expect(page.locator(".flash-error")).to_have_text("Please choose one of the three answers.")
        assert token(page) == previous
        expect(page.locator(".mine")).to_contain_text(judged_text(10))

        # The server-rendered ranking catches up within a broadcast interval
        # (it is cached until the next tick): reload until it does.
        mine = page.locator("#around li.me")
        for _attempt in range(25):
            page.goto(evaluate_url)
            if mine.count() and mine.locator(".count").inner_text() == "10":
                break
            page.wait_for_timeout(200)
        expect(mine.locator(".name")).to_have_text("miren.nojs")
        expect(mine.locator(".count")).to_have_text("10")
        assert token(page) == previous, "a reload must show the same sentence"
    finally:
        context.close()
    log = server_log()
    assert "Traceback" not in log, log[-3000:]
