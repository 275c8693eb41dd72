"""ESA practice in Chromium on the served site (issue 33): the ESA demo's
practice items, marked with the real item's widget by touch on a 360x740
phone; the feedback names the known errors found, missed and the marks
where none was known, and nothing reaches the database."""
import os
import re

from playwright.sync_api import expect
from sqlalchemy import create_engine, text

from e2e.i18n_pages import PHONE, new_context, register
from e2e.pages import no_sideways_scrolling

SLUG = "demo-en-eu-esa"


def _items(database, username):
    engine = create_engine(database)
    try:
        with engine.connect() as connection:
            return connection.execute(text(
                "SELECT count(*) FROM items JOIN participations ON participations.id = items.participation_id "
                "JOIN users ON users.id = participations.user_id WHERE users.username = :name"),
                {"name": username}).scalar()
    finally:
        engine.dispose()


def _word(page, shown):
    return page.locator("#esa-text .esa-word:not(.esa-missing)", has_text=re.compile(rf"^\W*{shown}\W*$"))


def test_esa_practice_with_feedback_on_spans(browser, live_server, site_database, screenshots):
    context = new_context(browser, "10.6.3.33", viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    try:
        register(page, live_server, SLUG, "esa.practice")
        page.locator("#practice-link").first.tap()
        expect(page).to_have_url(re.compile(rf"/c/{SLUG}/practice$"))
        expect(page.locator("#practice-note")).to_contain_text("Practice sentence 1 of 3")
        # The known major error, marked minor; and the first word, where none is known.
        for word, severity in (("arratsaldeko", "minor"), ("Liburutegia", "major")):
            _word(page, word).tap()
            _word(page, word).tap()
            page.get_by_role("button", name=f"Mark the selection as a {severity} error").tap()
        box = page.locator("#score-slider").bounding_box()
        page.locator("#score-slider").tap(position={"x": box["width"] * 0.4, "y": box["height"] / 2})
        page.locator("#next").tap()
        feedback = page.locator("#feedback")
        expect(feedback).to_contain_text("Not quite.")
        expect(page.locator("#found")).to_contain_text("arratsaldeko")
        expect(page.locator("#found")).to_contain_text("you marked it as minor")
        expect(page.locator("#extra")).to_contain_text("Liburutegia")
        expect(page.locator("#missed")).to_have_count(0)
        expect(feedback).to_contain_text("a major error, the meaning changes")
        expect(page.locator("#text-known .esa-major")).to_have_text("arratsaldeko")
        no_sideways_scrolling(page, PHONE["width"])
        page.screenshot(path=os.path.join(screenshots, "esa-practice-feedback-phone.png"), full_page=True)

        # The second: nothing marked; the known error and the omission are missed.
        page.locator("#next-practice").tap()
        expect(page.locator("#practice-note")).to_contain_text("Practice sentence 2 of 3")
        box = page.locator("#score-slider").bounding_box()
        page.locator("#score-slider").tap(position={"x": box["width"] * 0.7, "y": box["height"] / 2})
        page.locator("#next").tap()
        expect(page.locator("#missed")).to_contain_text("anaia")
        expect(page.locator("#missed")).to_contain_text("[missing]")
        assert _items(site_database, "esa.practice") == 0  # practice writes nothing
    finally:
        context.close()
