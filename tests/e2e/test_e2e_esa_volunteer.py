"""A volunteer annotates error spans on the ESA demo (issue 33) in headless
Chromium, on the site as ``make run`` serves it: by touch on a 360x740
phone and with a mouse on a desktop. What the page marks is checked against
what the site's database stores: offsets of the exact text shown, the
severity, the score; a document's segments come in order, the earlier ones
shown above the current one."""
import json
import os
import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import create_engine, text

from e2e.i18n_pages import AXE, DESKTOP, PHONE, new_context, register, run_axe, start_judging
from e2e.pages import judged_text, no_sideways_scrolling

SLUG = "demo-en-eu-esa"
QUESTION = "Mark the errors in the translation, then score it"


def answers(database, username):
    """(sentence number, document, translation shown, score, spans) of the volunteer's answers, in order."""
    engine = create_engine(database)
    try:
        with engine.connect() as connection:
            rows = connection.execute(text(
                "SELECT sentences.number, sentences.document, outputs.text, items.score, items.spans FROM items "
                "JOIN participations ON participations.id = items.participation_id "
                "JOIN users ON users.id = participations.user_id "
                "JOIN sentences ON sentences.id = items.sentence_id "
                "JOIN outputs ON outputs.sentence_id = items.sentence_id AND outputs.system_id = items.left_system_id "
                "WHERE users.username = :name AND items.answered_at IS NOT NULL ORDER BY items.position"
            ), {"name": username}).all()
    finally:
        engine.dispose()
    return [(n, d, t, s, json.loads(spans) if isinstance(spans, str) else spans) for n, d, t, s, spans in rows]


def words(page):
    return page.locator("#esa-text .esa-word:not(.esa-missing)")


def word_offsets(translation, index):
    """(start, end) in code points of the index-th space-separated word."""
    start = 0
    for n, word in enumerate(translation.split(" ")):
        if n == index:
            return start, start + len(word)
        start += len(word) + 1
    raise IndexError(index)


def score(page, value, tap):
    box = page.locator("#score-slider").bounding_box()
    position = {"x": 22 + (box["width"] - 44) * value / 100, "y": box["height"] / 2}
    (page.locator("#score-slider").tap if tap else page.locator("#score-slider").click)(position=position)
    return int(page.locator("#score-number").input_value())


def next_item(page, answered, tap):
    before = page.locator("input[name=token]").input_value()
    (page.locator("#next").tap if tap else page.locator("#next").click)()
    expect(page.locator("input[name=token]")).not_to_have_value(before)
    if answered is not None:  # None: an answer quicker than the reading floor counts toward nothing
        expect(page.locator(".mine")).to_contain_text(judged_text(answered))


def annotate(browser, live_server, site_database, screenshots, username, viewport, touch):
    context = new_context(browser, f"10.7.{len(username)}.1", viewport=viewport, has_touch=touch, is_mobile=touch)
    page = context.new_page()
    press = (lambda locator: locator.tap()) if touch else (lambda locator: locator.click())
    try:
        register(page, live_server, SLUG, username)
        start_judging(page, SLUG)
        expect(page.get_by_role("heading", level=1, name=QUESTION)).to_be_visible()
        no_sideways_scrolling(page, viewport["width"])
        first = re.sub("[\u200e\u200f]", "", page.locator("#esa-text").inner_text())  # esa.js's direction marks
        # A minor error on the second and third words, tapped at each end.
        press(words(page).nth(1))
        press(words(page).nth(2))
        press(page.get_by_role("button", name="Mark the selection as a minor error"))
        # A major error on the first word, then undone, then marked again.
        press(words(page).nth(0))
        press(words(page).nth(0))
        press(page.get_by_role("button", name="Mark the selection as a major error"))
        press(page.get_by_role("button", name="Undo the last error marked"))
        press(words(page).nth(0))
        press(words(page).nth(0))
        press(page.get_by_role("button", name="Mark the selection as a major error"))
        # Something missing.
        press(page.locator("#esa-text .esa-missing"))
        press(page.get_by_role("button", name="Mark the selection as a minor error"))
        expect(page.locator("#esa-list li")).to_have_count(3)
        page.screenshot(path=f"{screenshots}/esa-evaluate-{'phone' if touch else 'desktop'}.png")
        given = score(page, 40, touch)
        next_item(page, None, touch)  # marked quickly, it may count for nothing: the database says what was stored
        stored = answers(site_database, username)
        number, document, translation, stored_score, stored_spans = stored[0]
        # The text the page showed is the one whose offsets were stored.
        assert translation.split() == first.replace("[missing]", "").split()
        minor = word_offsets(translation, 1)[0], word_offsets(translation, 2)[1]
        assert stored_score == given
        assert stored_spans == [{"start": 0, "end": word_offsets(translation, 0)[1], "severity": "major"},
                                {"start": minor[0], "end": minor[1], "severity": "minor"},
                                {"start": None, "end": None, "severity": "minor"}]
        # The next segment of the same document, with the first one shown above it.
        page.locator("#esa-context summary").click()
        expect(page.locator("#esa-previous li")).to_have_count(1)
        expect(page.locator("#esa-previous li .translation")).to_have_text(translation)
        expect(page.locator("#esa-list li")).to_have_count(1)  # "None yet": the marks were cleared
        page.screenshot(path=f"{screenshots}/esa-evaluate-second-{'phone' if touch else 'desktop'}.png")
        given = score(page, 90, touch)
        next_item(page, None, touch)
        stored = answers(site_database, username)
        assert len(stored) == 2
        (number2, document2, _t, score2, spans2) = stored[1]
        assert (document2, number2, score2, spans2) == (document, number + 1, given, [])
    finally:
        context.close()


def test_annotating_errors_by_touch_on_a_phone(browser, live_server, site_database, screenshots):
    annotate(browser, live_server, site_database, screenshots, "esa.touch", PHONE, touch=True)


def test_annotating_errors_with_a_mouse_on_a_desktop(browser, live_server, site_database, screenshots):
    annotate(browser, live_server, site_database, screenshots, "esa.mouse", DESKTOP, touch=False)


def test_annotating_without_javascript_gives_the_score_alone(browser, live_server, site_database):
    context = new_context(browser, "10.7.30.1", java_script_enabled=False)
    page = context.new_page()
    try:
        register(page, live_server, SLUG, "esa.nojs")
        start_judging(page, SLUG)
        number = page.get_by_label("Your score, from 0 to 100")
        expect(number).to_be_visible()
        no_sideways_scrolling(page)
        number.fill("55")
        with page.expect_navigation(url=f"{live_server}/c/{SLUG}/evaluate"):
            page.get_by_role("button", name="Next").click()
        expect(page.locator(".flash-error")).to_have_count(0)
        assert [(s, spans) for _n, _d, _t, s, spans in answers(site_database, "esa.nojs")] == [(55, [])]
    finally:
        context.close()


def test_axe_on_the_annotation_page(browser, live_server):
    if not os.path.exists(AXE):
        pytest.skip("node_modules/axe-core is missing (make axe installs it)")
    context = new_context(browser, "10.7.31.1", has_touch=True, bypass_csp=True)
    page = context.new_page()
    found = []
    try:
        register(page, live_server, SLUG, "esa.axe")
        start_judging(page, SLUG)
        words(page).nth(0).tap()
        page.get_by_role("button", name="Mark the selection as a major error").tap()
        for violation in run_axe(page):
            print(f"{violation['impact']}: {violation['id']}: {violation['help']}: {violation['nodes']}")
            if violation["impact"] in ("serious", "critical"):
                found.append(violation)
    finally:
        context.close()
    assert found == []
