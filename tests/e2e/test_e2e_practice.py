"""Practice items in Chromium: the Urdu demo's three, with feedback, from the
instructions to the first real sentence; and axe-core on the pages when
node_modules/axe-core is there (test_e2e_a11y.py checks the others)."""
import os
import re

from playwright.sync_api import expect

from e2e.i18n_pages import AXE, PHONE, new_context, register, run_axe
from e2e.pages import no_sideways_scrolling

SLUG = "demo-en-ur"
ADDRESS = "10.6.1.18"


def _serious(page):
    if not os.path.exists(AXE):
        return []
    return [v["id"] for v in run_axe(page) if v["impact"] in ("serious", "critical")]


def _shoot(page, folder, name):
    page.screenshot(path=os.path.join(folder, f"{name}-phone.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.screenshot(path=os.path.join(folder, f"{name}-desktop.png"), full_page=True)
    page.set_viewport_size(PHONE)


def test_practice_with_feedback_then_the_first_sentence(browser, live_server, screenshots):
    context = new_context(browser, ADDRESS, bypass_csp=True)
    page = context.new_page()
    found = []
    try:
        register(page, live_server, SLUG, "practice.volunteer")
        page.locator("#practice-link").click()
        expect(page).to_have_url(re.compile(rf"/c/{SLUG}/practice$"))
        for number, how in ((1, "right"), (2, "wrong"), (3, "equal")):
            expect(page.locator("#practice-note")).to_contain_text(f"Practice sentence {number} of 3")
            expect(page.locator("#text-left")).to_have_attribute("dir", "rtl")
            found += _serious(page)
            if number == 1:
                _shoot(page, screenshots, "practice")
            better = page.locator("input[name=better]").input_value()
            choice = {"right": better, "wrong": "right" if better == "left" else "left", "equal": "equal"}[how]
            page.locator(f"label.answer-{choice}").click()
            page.locator("#next").click()
            feedback = page.locator("#feedback")
            expect(feedback).to_contain_text("Right!" if how == "right" else "Not quite.")
            expect(feedback).to_contain_text(f"Translation {1 if better == 'left' else 2} is the better one.")
            expect(page.locator(f"#text-{better}")).to_have_class(re.compile(r"\bbetter\b"))
            expect(page.locator(f"input[name=choice][value={choice}]")).to_be_checked()
            expect(page.locator("input[name=choice]").first).to_be_disabled()
            no_sideways_scrolling(page)
            found += _serious(page)
            if number == 2:
                _shoot(page, screenshots, "practice-feedback")
            if number < 3:
                page.locator("#next-practice").click()
        expect(page.locator("#feedback")).to_contain_text("That was the last practice sentence.")
        page.get_by_role("link", name="Start evaluating").click()
        expect(page).to_have_url(re.compile(rf"/c/{SLUG}/evaluate$"))
        expect(page.locator("#task")).to_be_visible()
        page.goto(f"{live_server}/c/{SLUG}/welcome")
        expect(page.locator("main .mine")).to_contain_text("You have judged 0 sentences.")
        assert found == [], found
    finally:
        context.close()
