"""A volunteer scores translations on the Direct Assessment demo (issue 20)
in headless Chromium: on a 360x740 phone by touch, with the keyboard alone,
without JavaScript, and under axe-core.

Each score the page shows is checked against the one stored in the site's
database: the slider must send exactly what the volunteer sees.
"""
import os
import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import create_engine, text

from e2e.i18n_pages import AXE, DESKTOP, PHONE, new_context, register, run_axe, start_judging
from e2e.pages import judged_text, no_sideways_scrolling

SLUG = "demo-en-eu-da"
QUESTION = "How well does the translation express the meaning of the source?"
UNSET = "No score yet"
MISSING = "Please move the slider to give a score."


def scores(database, username):
    """The scores the volunteer has given, in the order given."""
    engine = create_engine(database)
    try:
        with engine.connect() as connection:
            return connection.execute(text(
                "SELECT items.score FROM items JOIN participations ON participations.id = items.participation_id "
                "JOIN users ON users.id = participations.user_id "
                "WHERE users.username = :name AND items.answered_at IS NOT NULL ORDER BY items.position"
            ), {"name": username}).scalars().all()
    finally:
        engine.dispose()


def token(page):
    return page.locator("input[name=token]").input_value()


def slider(page):
    return page.get_by_role("slider", name=QUESTION)


def expect_unset(page):
    """No score chosen: no thumb drawn, an empty answer, "No score yet" said."""
    expect(slider(page)).to_have_class(re.compile(r"\buntouched\b"))
    expect(slider(page)).to_have_attribute("aria-valuetext", UNSET)
    expect(page.locator("#score-number")).to_have_value("")
    expect(page.locator("#score-value")).to_have_text("–")


def expect_score(page, value):
    expect(slider(page)).not_to_have_class(re.compile(r"\buntouched\b"))
    expect(slider(page)).to_have_value(str(value))
    expect(slider(page)).to_have_attribute("aria-valuetext", str(value))
    expect(page.locator("#score-number")).to_have_value(str(value))
    expect(page.locator("#score-value")).to_have_text(str(value))


def shown_score(page):
    value = page.locator("#score-number").input_value()
    assert re.fullmatch(r"\d{1,3}", value), f"the slider gave {value!r}"
    expect_score(page, int(value))
    return int(value)


def track_x(box, score):
    """Where on the slider a score lies: the 44 px thumb's centre travels
    from 22 px after the start to 22 px before the end."""
    return 22 + (box["width"] - 44) * score / 100


def submit_and_wait(page, submit, judged):
    before = token(page)
    submit()
    expect(page.locator("input[name=token]")).not_to_have_value(before)
    expect(page.locator(".mine")).to_contain_text(judged_text(judged))


def test_scoring_by_touch_on_a_phone(browser, live_server, site_database, screenshots):
    context = new_context(browser, "10.6.20.1", viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" and "/api/judgment" in r.url else None)
    username = "da.touch"
    try:
        register(page, live_server, SLUG, username)
        start_judging(page, SLUG)
        expect(page.get_by_role("heading", level=1, name=QUESTION)).to_be_visible()
        expect_unset(page)
        expect(page.locator("#score-number")).to_be_hidden()
        no_sideways_scrolling(page)
        # A full-width track, 44 px tall to the touch, and the whole task on the screen.
        box = page.locator("#score-slider").bounding_box()
        card = page.locator("#task").bounding_box()
        assert box["height"] >= 44 and box["width"] >= card["width"] - 40, box
        next_box = page.locator("#next").bounding_box()
        assert next_box["y"] + next_box["height"] <= PHONE["height"]
        shot(page, screenshots, "da-evaluate")

        # Next without a score: the page's own message, nothing sent or stored.
        page.locator("#next").tap()
        expect(page.locator("#missing")).to_have_text(MISSING)  # beside the slider (issue 31)
        expect(page.locator("#missing")).to_be_in_viewport()
        assert posts == [] and scores(site_database, username) == []
        expect(page.locator(".mine")).to_contain_text(judged_text(0))
        expect_unset(page)

        # A tap on the track gives the score under the finger.
        page.locator("#score-slider").tap(position={"x": track_x(box, 30), "y": box["height"] / 2})
        first = shown_score(page)
        assert abs(first - 30) <= 1, first
        submit_and_wait(page, lambda: page.locator("#next").tap(), 1)
        assert scores(site_database, username) == [first]
        expect(page.locator("#missing")).to_be_hidden()
        expect_unset(page)
        # A tap where the hidden thumb waits (the middle) gives a score too.
        page.locator("#score-slider").tap(position={"x": track_x(box, 50), "y": box["height"] / 2})
        expect_score(page, 50)
        shot(page, screenshots, "da-evaluate-moved")
        submit_and_wait(page, lambda: page.locator("#next").tap(), 2)
        assert scores(site_database, username) == [first, 50]

        # A drag along the track: the score follows the finger.
        expect_unset(page)
        # Measured again: the taps may have scrolled the page since.
        box = page.locator("#score-slider").bounding_box()
        assert page.evaluate("getComputedStyle(document.getElementById('score-slider')).touchAction") == "pan-y"
        y = box["y"] + box["height"] / 2
        cdp = context.new_cdp_session(page)
        cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [
            {"x": box["x"] + track_x(box, 10), "y": y}]})
        for step in range(1, 11):
            cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [
                {"x": box["x"] + track_x(box, 10 + 7 * step), "y": y}]})
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        assert page.url.endswith("/evaluate"), page.url  # the drag moved the slider, not the page
        dragged = shown_score(page)
        assert abs(dragged - 80) <= 2, dragged
        submit_and_wait(page, lambda: page.locator("#next").tap(), 3)
        assert scores(site_database, username) == [first, 50, dragged]
        expect_unset(page)
        assert len(posts) == 3
    finally:
        context.close()


def shot(page, folder, name):
    """The page at phone size and at desktop size (the viewport, as a volunteer sees it)."""
    page.set_viewport_size(PHONE)
    page.screenshot(path=os.path.join(folder, f"{name}-phone.png"))
    page.set_viewport_size(DESKTOP)
    page.screenshot(path=os.path.join(folder, f"{name}-desktop.png"))
    page.set_viewport_size(PHONE)


def press(page, key, value):
    page.keyboard.press(key)
    expect_score(page, value)


def test_scoring_with_the_keyboard_alone(browser, live_server, site_database, screenshots):
    context = new_context(browser, "10.6.20.2", viewport=DESKTOP)
    page = context.new_page()
    username = "da.keys"
    try:
        register(page, live_server, SLUG, username)
        start_judging(page, SLUG)
        expect_unset(page)
        # Tab reaches the slider, named by the question, its ends as its description.
        for _ in range(15):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.id") == "score-slider":
                break
        expect(slider(page)).to_be_focused()
        expect(slider(page)).to_have_accessible_description("0: not at all 100: perfectly")
        ring = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert ring != "none", "no visible focus on the slider"

        press(page, "Home", 0)
        press(page, "End", 100)
        press(page, "PageDown", 90)
        press(page, "ArrowLeft", 89)
        press(page, "ArrowDown", 88)
        press(page, "ArrowUp", 89)
        press(page, "ArrowRight", 90)
        press(page, "PageUp", 100)
        press(page, "PageUp", 100)  # never past the end
        press(page, "PageDown", 90)
        page.screenshot(path=os.path.join(screenshots, "da-evaluate-keyboard-desktop.png"))
        submit_and_wait(page, lambda: page.keyboard.press("Enter"), 1)
        assert scores(site_database, username) == [90]

        # The next item starts unset, the focus on its question; one Tab
        # back to the slider, and the first key gives the middle.
        expect_unset(page)
        expect(page.locator("#question")).to_be_focused()
        page.keyboard.press("Tab")
        expect(slider(page)).to_be_focused()
        # Enter on an unmoved slider: the message, nothing stored.
        page.keyboard.press("Enter")
        expect(page.locator("#missing")).to_have_text(MISSING)
        assert scores(site_database, username) == [90]
        press(page, "ArrowLeft", 50)
        press(page, "ArrowLeft", 49)
        submit_and_wait(page, lambda: page.keyboard.press("Enter"), 2)
        assert scores(site_database, username) == [90, 49]

        # Right to left the arrows follow the mirrored slider: right is lower.
        page.keyboard.press("Tab")
        page.evaluate("document.documentElement.dir = 'rtl'")
        press(page, "PageUp", 50)
        press(page, "ArrowRight", 49)
        press(page, "ArrowLeft", 50)
        press(page, "ArrowLeft", 51)
        press(page, "ArrowUp", 52)
        submit_and_wait(page, lambda: page.keyboard.press("Enter"), 3)
        assert scores(site_database, username) == [90, 49, 52]
    finally:
        context.close()


def test_scoring_without_javascript(browser, live_server, site_database, screenshots):
    context = new_context(browser, "10.6.20.3", java_script_enabled=False)
    page = context.new_page()
    username = "da.nojs"
    evaluate_url = f"{live_server}/c/{SLUG}/evaluate"
    try:
        register(page, live_server, SLUG, username)
        start_judging(page, SLUG)
        number = page.get_by_label("Your score, from 0 to 100")
        expect(number).to_be_visible()
        expect(number).to_have_value("")
        expect(page.locator("#score-slider")).to_be_hidden()
        no_sideways_scrolling(page)
        page.screenshot(path=os.path.join(screenshots, "da-evaluate-nojs-phone.png"))

        # Empty or out of range: the browser keeps the page.
        before = token(page)
        page.get_by_role("button", name="Next").click()
        number.fill("101")
        page.get_by_role("button", name="Next").click()
        assert token(page) == before and scores(site_database, username) == []

        number.fill("42")
        with page.expect_request(lambda r: r.method == "POST" and r.url == evaluate_url) as posted:
            with page.expect_navigation(url=evaluate_url):
                page.get_by_role("button", name="Next").click()
        assert "score=42" in posted.value.post_data
        expect(page.locator(".mine")).to_contain_text(judged_text(1))
        assert token(page) != before
        expect(page.get_by_label("Your score, from 0 to 100")).to_have_value("")
        expect(page.locator(".flash-error")).to_have_count(0)
        assert scores(site_database, username) == [42]
    finally:
        context.close()


def test_axe_on_the_scoring_page(browser, live_server):
    if not os.path.exists(AXE):
        pytest.skip("node_modules/axe-core is missing (make axe installs it)")
    context = new_context(browser, "10.6.20.4", has_touch=True, bypass_csp=True)
    page = context.new_page()
    found = []

    def check(name):
        for violation in run_axe(page):
            print(f"{name}: {violation['impact']}: {violation['id']}: {violation['help']}: {violation['nodes']}")
            if violation["impact"] in ("serious", "critical"):
                found.append((name, violation))

    try:
        register(page, live_server, SLUG, "da.axe")
        start_judging(page, SLUG)
        check("unset (phone)")
        page.locator("#next").click()
        expect(page.locator("#missing")).to_be_visible()
        check("message (phone)")
        page.locator("#score-slider").tap()
        expect(page.locator("#score-slider")).not_to_have_class(re.compile(r"\buntouched\b"))
        check("scored (phone)")
        page.set_viewport_size(DESKTOP)
        check("scored (desktop)")
    finally:
        context.close()
    assert not found, "\n".join(f"{name}: {v['impact']} {v['id']}: {v['help']}: {v['nodes']}" for name, v in found)
