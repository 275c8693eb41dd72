"""Every volunteer's language and device, in headless Chromium.

In English, Basque and Spanish, on the Basque demo and on the right-to-left
Urdu demo: register, judge, see the ranking, at 360x740 and at 1280x800.
Element boxes are measured: no sideways scrolling on the phone, answer
buttons at least 44 px tall, the source, both translations and the three
answers on the first screen even for 30-word sentences, the ranking and
progress below the task on the phone and beside it on the desktop, and the
keyboard shortcuts shown and working on the desktop. Screenshots go to
tests/screenshots/.
"""
import os
import re

import pytest
from playwright.sync_api import expect

from e2e.i18n_pages import (
    DESKTOP, PHONE, answer_for, choose_language, controls, item, judge_by_clicking, new_context, register,
    scroll_width, start_judging,
)
from e2e.pages import confirm_email

# (interface language, campaign, username, client address)
CASES = [
    ("en", "demo-en-ur", "zara.rtl", "10.6.2.1"),
    ("eu", "demo-en-eu", "ane.euskaraz", "10.6.2.2"),
    ("es", "demo-en-ur", "lucia.es", "10.6.2.3"),
    ("ur", "demo-en-ur", "zainab.ur", "10.6.2.4"),  # a right-to-left interface
]
HEADING = {"en": "Which translation is better?", "eu": None, "es": None, "ur": None}
RTL = {"ur"}
# 30 words: the longest sentence the phone layout promises to show whole.
LONG = {
    "en": "The regional government announced on Tuesday that the new railway line between the two largest cities "
          "will open next spring, several months later than planned, because of unexpected engineering problems.",
    "eu": "Eskualdeko gobernuak asteartean iragarri zuenez, bi hiri handienen arteko trenbide berria datorren "
          "udaberrian irekiko da, aurreikusitakoa baino zenbait hilabete beranduago, ustekabeko ingeniaritza arazoak "
          "direla eta.",
    "ur": "علاقائی حکومت نے منگل کے روز اعلان کیا کہ دو سب سے بڑے شہروں کے درمیان نئی ریلوے لائن غیر متوقع "
          "انجینئرنگ مسائل کی وجہ سے طے شدہ وقت سے کئی مہینے بعد اگلے موسم بہار میں کھولی جائے گی۔",
}
TARGET = {"demo-en-eu": "eu", "demo-en-ur": "ur"}
# The judgments wanted, as Babel writes them: 40 sentences x 6 pairs x 5,
# less the Basque demo's two identical pairs.
# The progress's goal as the language writes it: the Urdu demo's judgments (the
# paper's rule); the Basque demo's pairs to decide (sequential assignment, issue 32).
WANTED = {("en", "demo-en-ur"): ("target", "1,200"), ("es", "demo-en-ur"): ("target", "1.200"),
          ("eu", "demo-en-eu"): ("pairs", "6"), ("ur", "demo-en-ur"): ("target", "1,200")}


def _box(page, selector, nth=0):
    box = page.locator(selector).nth(nth).bounding_box()
    assert box, f"{selector} is not shown"
    return box


def _task_parts(page):
    return [_box(page, "#text-source"), _box(page, "#text-left"), _box(page, "#text-right"),
            _box(page, "label.answer", 0), _box(page, "label.answer", 1), _box(page, "label.answer", 2)]


def check_phone_layout(page, shots, name, target):
    page.set_viewport_size(PHONE)
    page.evaluate("window.scrollTo(0, 0)")
    assert scroll_width(page) <= PHONE["width"], f"{scroll_width(page)} px wide on a 360 px screen"
    for n in range(3):
        assert _box(page, "label.answer", n)["height"] >= 44
    assert _box(page, "#next")["height"] >= 44
    assert max(b["y"] + b["height"] for b in _task_parts(page)) <= PHONE["height"]
    # Ranking and progress below the task.
    task = _box(page, "#task")
    assert _box(page, "#progress")["y"] >= task["y"] + task["height"]
    assert _box(page, "#ranking")["y"] >= task["y"] + task["height"]
    # Keyboard shortcuts are for keyboards: not on the phone.
    expect(page.locator(".shortcuts")).to_be_hidden()
    page.screenshot(path=os.path.join(shots, f"{name}-evaluate-phone.png"))
    page.screenshot(path=os.path.join(shots, f"{name}-evaluate-phone-full.png"), full_page=True)
    # The longest promised sentence, with its translations, still fits.
    saved = item(page)
    page.evaluate(
        """([source, target]) => {
            document.getElementById("text-source").textContent = source;
            document.getElementById("text-left").textContent = target;
            document.getElementById("text-right").textContent = target;
        }""",
        [LONG["en"], LONG[target]],
    )
    assert len(LONG["en"].split()) == 30
    assert scroll_width(page) <= PHONE["width"]
    bottom = max(b["y"] + b["height"] for b in _task_parts(page))
    page.screenshot(path=os.path.join(shots, f"{name}-evaluate-phone-30-words.png"))
    assert bottom <= PHONE["height"], f"the answers end at {bottom} px on a 740 px screen with 30-word sentences"
    page.evaluate(
        """([source, left, right]) => {
            document.getElementById("text-source").textContent = source;
            document.getElementById("text-left").textContent = left;
            document.getElementById("text-right").textContent = right;
        }""",
        list(saved),
    )


def check_mirrored(page, rtl):
    """The header and the answers mirror in a right-to-left interface (CSS
    logical properties): the brand at the right-hand end, the language
    switcher after it towards the left, each answer's radio button on the
    right of its text; the other way round left to right."""
    width = page.viewport_size["width"]
    brand, switcher = _box(page, "header.site .brand"), _box(page, "header.site form.language")
    radio, text = _box(page, "label.answer input"), _box(page, "label.answer span")
    if rtl:
        assert brand["x"] + brand["width"] > width - 40 and switcher["x"] < brand["x"], (brand, switcher)
        assert radio["x"] > text["x"], (radio, text)
    else:
        assert brand["x"] < 40 and switcher["x"] > brand["x"], (brand, switcher)
        assert radio["x"] < text["x"], (radio, text)


def check_desktop_layout(page, shots, name, rtl=False):
    page.set_viewport_size(DESKTOP)
    page.evaluate("window.scrollTo(0, 0)")
    assert scroll_width(page) <= DESKTOP["width"]
    task, board = _box(page, "#task"), _box(page, "aside.board")
    if rtl:  # beside it on the left, mirrored
        assert board["x"] + board["width"] <= task["x"], "the ranking is beside the task, on its left, on a desktop"
    else:
        assert board["x"] >= task["x"] + task["width"], "the ranking is beside the task on a desktop"
    assert abs(board["y"] - task["y"]) < 120
    expect(page.locator(".shortcuts")).to_be_visible()
    expect(page.locator("label.answer kbd").first).to_be_visible()
    assert max(b["y"] + b["height"] for b in _task_parts(page)) <= DESKTOP["height"]
    page.screenshot(path=os.path.join(shots, f"{name}-evaluate-desktop.png"))


def judge_with_keys(page, known, number):
    """Desktop: a digit key (or '=') chooses, Enter sends."""
    choice, _ = answer_for(page, known, number)
    key = {"left": "1", "right": "2", "equal": "=" if number % 2 else "3"}[choice]
    before = page.locator("input[name=token]").input_value()
    page.locator("#question").focus()
    page.keyboard.press(key)
    expect(page.locator(f"input[name=choice][value={choice}]")).to_be_checked()
    page.keyboard.press("Enter")
    expect(page.locator("input[name=token]")).not_to_have_value(before)


@pytest.mark.parametrize("language,slug,username,address", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_register_judge_and_see_the_ranking(browser, live_server, server_log, screenshots, language, slug, username,
                                           address):
    name = f"{language}-{slug}"
    target = TARGET[slug]
    # The browser asks for English; the volunteer picks their language with the switcher.
    context = new_context(browser, address, viewport=PHONE, locale="en-GB")
    page = context.new_page()
    try:
        page.goto(f"{live_server}/c/{slug}/")
        if language != "en":
            choose_language(page, language)
        expect(page.locator("html")).to_have_attribute("lang", language)
        expect(page.locator("html")).to_have_attribute("dir", "rtl" if language in RTL else "ltr")
        assert scroll_width(page) <= PHONE["width"]
        page.screenshot(path=os.path.join(screenshots, f"{name}-campaign-phone.png"), full_page=True)
        register(page, live_server, slug, username)
        confirm_email(page, server_log, username)  # only confirmed volunteers are ranked
        expect(page.locator("html")).to_have_attribute("lang", language)  # remembered from the cookie
        assert scroll_width(page) <= PHONE["width"]
        page.screenshot(path=os.path.join(screenshots, f"{name}-instructions-phone.png"), full_page=True)
        start_judging(page, slug)

        # Each text in its own language and direction.
        expect(page.locator("#text-source")).to_have_attribute("lang", "en")
        expect(page.locator("#text-source")).to_have_attribute("dir", "ltr")
        for side in ("left", "right"):
            expect(page.locator(f"#text-{side}")).to_have_attribute("lang", target)
            expect(page.locator(f"#text-{side}")).to_have_attribute("dir", "rtl" if target == "ur" else "ltr")
        if target == "ur":
            # Chromium lays the translation out right to left: the sentence's
            # first character is at the right-hand end of its first line.
            direction = page.eval_on_selector("#text-left", "e => getComputedStyle(e).direction")
            assert direction == "rtl"
        if HEADING[language]:
            expect(page.locator("#question")).to_have_text(HEADING[language])
        else:  # translated (a catalogue that is not compiled leaves the English)
            expect(page.locator("#question")).not_to_have_text(HEADING["en"])

        known = controls(slug)
        collected = page.locator("[data-field=collected]").inner_text()
        check_phone_layout(page, screenshots, name, target)
        check_mirrored(page, language in RTL)
        for number in range(1, 5):
            judge_by_clicking(page, known, number)
        check_desktop_layout(page, screenshots, name, language in RTL)
        check_mirrored(page, language in RTL)
        for number in range(5, 9):
            judge_with_keys(page, known, number)
        expect(page.locator("#mine")).to_contain_text(re.compile(r"\b8\b"))
        # Live progress arrived, and its numbers are written the way of the
        # interface language, as the server writes them.
        expect(page.locator("[data-field=collected]")).not_to_have_text(collected)
        field, wanted = WANTED[(language, slug)]
        expect(page.locator(f"[data-field={field}]")).to_have_text(wanted)

        # The ranking: the volunteer is in it, their name isolated, marked as them.
        page.reload()
        me = page.locator("#around li.me")
        expect(me).to_have_count(1)
        expect(me.locator("bdi.name")).to_have_text(username)
        expect(page.locator("#top bdi.name", has_text=username)).to_have_count(1)
        page.locator("#ranking").scroll_into_view_if_needed()
        page.screenshot(path=os.path.join(screenshots, f"{name}-ranking-desktop.png"), full_page=True)
        page.set_viewport_size(PHONE)
        assert scroll_width(page) <= PHONE["width"]
        page.screenshot(path=os.path.join(screenshots, f"{name}-ranking-phone.png"), full_page=True)
        expect(page.locator("html")).to_have_attribute("lang", language)
    finally:
        context.close()
