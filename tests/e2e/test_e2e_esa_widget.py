"""The Error Span Annotation widget (static/js/esa.js) in Chromium, on a phone
with a touch screen: tests/e2e/esa_harness.html holds the markup
item_esa.html renders (tests/test_esa_template.py keeps it so) with the real
scripts and style. The hidden field's offsets must be Python's: code points
of the text shown, end exclusive."""
import json
import os
import pathlib

import pytest

HARNESS = pathlib.Path(__file__).with_name("esa_harness.html")
SCREENSHOTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "screenshots")
PHONE = {"width": 360, "height": 740}
DESKTOP = {"width": 1280, "height": 800}

EN = "The cat slept on the warm mat by the door."
AR = "الأطفال يلعبون كرة القدم في الحديقة اليوم."
JA = "私は家族と東京に住んでいます。"


@pytest.fixture
def open_harness(browser):
    contexts = []

    def open_(variant="en", viewport=PHONE, touch=True, init_script=None):
        context = browser.new_context(viewport=viewport, has_touch=touch, is_mobile=touch and viewport == PHONE,
                                      locale="en-GB")
        context.set_default_timeout(5_000)
        contexts.append(context)
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        if init_script:
            page.add_init_script(init_script)
        page.goto(f"{HARNESS.as_uri()}?variant={variant}")
        page.wait_for_selector("#esa-text .esa-word")
        page.errors = errors
        return page

    yield open_
    for context in contexts:
        context.close()


def words(page):
    return page.locator("#esa-text .esa-word:not(.esa-missing)")


def word_texts(page):
    return words(page).all_inner_texts()


def spans(page):
    return json.loads(page.input_value("#esa-spans"))


def tap_words(page, *indices):
    for index in indices:
        words(page).nth(index).tap()


def mark(page, severity):
    page.locator(f"#esa [data-severity={severity}]").tap()


def offsets(text, first, last):
    """Python's offsets of the words ``first``..``last`` (by their index among the space-separated words)."""
    parts = text.split(" ")
    start = sum(len(p) + 1 for p in parts[:first])
    end = sum(len(p) + 1 for p in parts[:last + 1]) - 1
    return start, end


def new_item(page, translation, previous=(), source="A new source."):
    page.evaluate("""([translation, previous, source]) => document.dispatchEvent(new CustomEvent("bozka:item",
        {detail: {token: "next", source: source, translation: translation, previous: previous}}))""",
                  [translation, list(previous), source])


def test_two_taps_and_minor_give_python_offsets(open_harness):
    page = open_harness()
    assert word_texts(page) == EN.split(" ")
    assert spans(page) == []
    tap_words(page, 5, 6)  # "warm" … "mat"
    assert page.locator("#esa-text .esa-selected").all_inner_texts() == ["warm", "mat"]
    mark(page, "minor")
    start, end = offsets(EN, 5, 6)
    assert EN[start:end] == "warm mat"
    assert spans(page) == [{"start": start, "end": end, "severity": "minor"}]
    assert page.inner_text("#esa-status") == "Marked as minor error: warm mat"
    assert page.locator("#esa-list li").all_text_contents() == ["Minor warm mat ×"]
    assert words(page).nth(5).get_attribute("aria-label") == "warm, minor error"
    # One word: tapped twice.
    tap_words(page, 1, 1)
    mark(page, "major")
    assert spans(page)[0] == {"start": EN.index("cat"), "end": EN.index("cat") + 3, "severity": "major"}
    assert page.errors == []


def test_ends_move_by_a_word(open_harness):
    page = open_harness()
    tap_words(page, 2, 3)  # "slept on"
    page.get_by_role("button", name="End one word later").tap()  # "slept on the"
    page.get_by_role("button", name="Start one word earlier").tap()  # "cat slept on the"
    page.get_by_role("button", name="Start one word later").tap()  # "slept on the"
    page.get_by_role("button", name="End one word later").tap()  # "slept on the warm"
    page.get_by_role("button", name="End one word earlier").tap()  # "slept on the"
    assert page.locator("#esa-text .esa-selected").all_inner_texts() == ["slept", "on", "the"]
    assert page.inner_text("#esa-status") == "Selected: slept on the"
    mark(page, "minor")
    start, end = offsets(EN, 2, 4)
    assert spans(page) == [{"start": start, "end": end, "severity": "minor"}]
    # No end moves past the text's ends or over a mark.
    tap_words(page, 0, 0)
    assert page.get_by_role("button", name="Start one word earlier").is_disabled()  # the first word
    tap_words(page, 1, 1)
    assert page.get_by_role("button", name="End one word later").is_disabled()  # "slept" is marked
    tap_words(page, 9, 9)
    assert page.get_by_role("button", name="End one word later").is_disabled()  # the last word


def test_major_omission_and_undo(open_harness):
    page = open_harness()
    tap_words(page, 1, 1)
    mark(page, "major")
    page.locator("#esa-text .esa-missing").tap()
    assert page.locator("#esa-text .esa-missing").get_attribute("aria-pressed") == "true"
    mark(page, "minor")
    cat = {"start": EN.index("cat"), "end": EN.index("cat") + 3, "severity": "major"}
    assert spans(page) == [cat, {"start": None, "end": None, "severity": "minor"}]
    assert page.locator("#esa-text .esa-missing").get_attribute("aria-label") == \
        "Missing: something is left out of the translation, minor error"
    # One omission mark: the token is marked now.
    page.locator("#esa-text .esa-missing").tap()
    assert page.inner_text("#esa-status").startswith("That overlaps")
    undo = page.get_by_role("button", name="Undo the last error marked")
    undo.tap()
    assert spans(page) == [cat]
    assert page.inner_text("#esa-status") == "Removed: [missing]"
    undo.tap()
    assert spans(page) == []
    assert undo.is_disabled()
    # A mark's own remove button.
    tap_words(page, 7, 9)
    mark(page, "minor")
    page.get_by_role("button", name="Remove: by the door.").tap()
    assert spans(page) == []


def test_overlapping_selection_is_refused(open_harness):
    page = open_harness()
    tap_words(page, 5, 6)  # "warm mat"
    mark(page, "minor")
    before = spans(page)
    tap_words(page, 3, 8)  # "on" … "the": across "warm mat"
    assert page.inner_text("#esa-status") == "That overlaps an error already marked: remove that one first."
    assert page.locator("#esa-text .esa-selected").all_inner_texts() == ["on"]  # the first tap only
    tap_words(page, 6)  # a marked word cannot start or end a selection
    assert page.locator("#esa-text .esa-selected").all_inner_texts() == ["on"]
    mark(page, "major")
    assert spans(page) == sorted(before + [{"start": EN.index("on"), "end": EN.index("on") + 2, "severity": "major"}],
                                 key=lambda s: s["start"])
    # Moving an end onto a mark is refused too.
    tap_words(page, 4, 4)  # "the", just before "warm"
    assert page.get_by_role("button", name="End one word later").is_disabled()
    assert page.get_by_role("button", name="Start one word earlier").is_disabled()  # "on" is marked


def test_right_to_left_offsets_are_logical(open_harness):
    page = open_harness("ar")
    assert page.get_attribute("#esa-text", "dir") == "rtl"
    assert word_texts(page) == AR.split(" ")
    first, second = words(page).nth(2), words(page).nth(3)  # "كرة" "القدم"
    # Shown right to left: the earlier word is on the right.
    assert first.bounding_box()["x"] > second.bounding_box()["x"]
    second.tap()
    first.tap()  # the end before the start: the same span
    mark(page, "major")
    start, end = offsets(AR, 2, 3)
    assert AR[start:end] == "كرة القدم"
    assert spans(page) == [{"start": start, "end": end, "severity": "major"}]
    assert page.inner_text("#esa-status") == "Marked as major error: كرة القدم"
    # The [missing] token comes after the text: at its left end in right-to-left.
    missing = page.locator("#esa-text .esa-missing").bounding_box()
    last = words(page).nth(6).bounding_box()
    assert missing["y"] > last["y"] or missing["x"] < last["x"]


def test_latin_words_in_arabic_keep_their_order(open_harness):
    page = open_harness("ar")
    text = "زرت New York City في الصيف."
    new_item(page, text)
    boxes = [words(page).nth(i).bounding_box()["x"] for i in range(1, 4)]  # New York City
    assert boxes == sorted(boxes), "a Latin phrase reads left to right inside Arabic"


def test_japanese_snaps_to_segmenter_words(open_harness):
    page = open_harness("ja")
    shown = word_texts(page)
    expected = page.evaluate("""(text) => Array.from(new Intl.Segmenter("ja", {granularity: "word"}).segment(text))
        .filter(s => s.isWordLike).map(s => s.segment)""", JA)
    # Each word as the segmenter finds it; the full stop joins the word before it.
    assert [w.rstrip("。") for w in shown] == expected
    assert "".join(shown) == JA
    assert "東京" in shown
    words(page).nth(shown.index("東京")).tap()
    words(page).nth(shown.index("東京")).tap()
    mark(page, "minor")
    assert spans(page) == [{"start": JA.index("東京"), "end": JA.index("東京") + 2, "severity": "minor"}]


def test_astral_characters_count_as_one(open_harness):
    page = open_harness()
    text = "🎉🎉 Party 👩‍👩‍👧 time: the café was 😀 great 𝒳 fun"
    new_item(page, text)
    assert word_texts(page) == text.split(" ")
    index = text.split(" ").index("great")
    tap_words(page, index, index + 2)  # "great 𝒳 fun"
    mark(page, "major")
    start = text.index("great")
    assert spans(page) == [{"start": start, "end": len(text), "severity": "major"}]
    assert text[start:] == "great 𝒳 fun"
    assert start != len(text[:start].encode("utf-16-le")) // 2  # JavaScript's own index would differ


def test_every_button_has_a_name(open_harness, browser):
    page = open_harness()
    tap_words(page, 1, 2)
    mark(page, "minor")
    page.locator("#esa-text .esa-missing").tap()
    mark(page, "major")
    tap_words(page, 5)
    cdp = page.context.new_cdp_session(page)
    nodes = cdp.send("Accessibility.getFullAXTree")["nodes"]
    named = [((node.get("role") or {}).get("value"), (node.get("name") or {}).get("value", ""))
             for node in nodes if not node.get("ignored")]
    buttons = [name for role, name in named if role == "button"]
    assert len(buttons) >= len(EN.split(" ")) + 1 + 4 + 3 + 2  # words, [missing], moves, marks, removes
    assert all(name.strip() for name in buttons), buttons
    assert "Start one word earlier" in buttons and "Mark the selection as a minor error" in buttons
    assert "Remove: cat slept" in buttons and "Remove: [missing]" in buttons
    assert "cat, minor error" in buttons
    assert ("slider", "How well does the translation convey the source?") in named  # as DA: the question
    assert page.locator("#esa-text .esa-word[aria-pressed=true]").all_inner_texts() == ["warm"]
    live = page.locator("#esa-status")
    assert live.get_attribute("aria-live") == "polite"


@pytest.mark.parametrize("variant", ["en", "ar", "ja"])
def test_touch_targets_are_44_px(open_harness, variant):
    page = open_harness(variant)
    tap_words(page, 0, 0)
    mark(page, "minor")
    if variant != "ja":  # the Japanese sample has no earlier segments
        page.locator("#esa-context summary").tap()
    small = page.evaluate("""() => Array.from(document.querySelectorAll(
            "#esa button, #esa-context summary, #answer-bar button, #score-slider"))
        .filter(el => el.getClientRects().length)
        .map(el => [el.textContent.trim() || el.getAttribute("aria-label"), el.getBoundingClientRect()])
        .filter(([name, box]) => box.width < 43.5 || box.height < 43.5)
        .map(([name, box]) => `${name}: ${box.width}x${box.height}`)""")
    assert small == []
    # Nothing wider than the phone.
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_keyboard_marks_a_span(open_harness):
    page = open_harness(viewport=DESKTOP, touch=False)
    page.focus("#question")
    page.keyboard.press("Tab")  # the earlier segments' summary
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "The"  # one Tab stop for the words
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")  # "slept"
    page.keyboard.press("ArrowRight")
    page.keyboard.press(" ")  # "on"
    assert spans(page) == [] and page.inner_text("#esa-status") == "Selected: slept on"
    for _ in range(10):
        if page.evaluate("document.activeElement.dataset.severity") == "major":
            break
        page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    start, end = offsets(EN, 2, 3)
    assert spans(page) == [{"start": start, "end": end, "severity": "major"}]
    assert page.evaluate("document.activeElement.classList.contains('esa-word')")  # back to the text
    page.keyboard.press("End")
    assert page.evaluate("document.activeElement.classList.contains('esa-missing')")
    page.keyboard.press("Escape")
    assert page.evaluate("location.hash") == ""  # Enter on a word never submitted the form


def test_right_to_left_arrows_follow_the_screen(open_harness):
    page = open_harness("ar", viewport=DESKTOP, touch=False)
    words(page).nth(0).focus()
    page.keyboard.press("ArrowLeft")  # to the left: the next word in right-to-left
    assert page.evaluate("document.activeElement.textContent") == AR.split(" ")[1]


def test_new_item_renders_again_and_clears_the_marks(open_harness):
    page = open_harness()
    tap_words(page, 1, 2)
    mark(page, "minor")
    tap_words(page, 4)  # a selection left open
    assert spans(page) != []
    text = "A completely different sentence here."
    new_item(page, text, previous=[{"source": "Zdroj <b>jedna</b>.", "translation": "Source <b>one</b>."}])
    assert word_texts(page) == text.split(" ")
    assert spans(page) == []
    assert page.locator("#esa-text .esa-selected").count() == 0
    assert page.locator("#esa-list li").all_inner_texts() == ["None yet."]
    assert page.get_by_role("button", name="Undo the last error marked").is_disabled()
    assert page.locator("#esa-previous li").count() == 1
    assert page.locator("#esa-previous b").count() == 0  # text, never markup
    assert page.locator("#esa-previous .source").text_content() == "Zdroj <b>jedna</b>."
    assert page.inner_text("#esa-status") == "Tap the first word of an error."
    new_item(page, "Short.", previous=[])
    assert page.locator("#esa-context").is_hidden()
    tap_words(page, 0, 0)
    mark(page, "major")
    assert spans(page) == [{"start": 0, "end": 6, "severity": "major"}]


FETCH = """
window.sent = [];
window.fetch = (url, options) => {
  window.sent.push(JSON.parse(options.body));
  const item = {token: "item-2", source: "Druhá věta.", translation: "The second sentence.",
                previous: [{source: "Kočka spala.", translation: "The cat slept."}]};
  return Promise.resolve({status: 200, ok: true, json: () => Promise.resolve({status: "ok", item: item})});
};
"""


def test_evaluate_sends_the_spans_and_shows_the_next_item(open_harness):
    page = open_harness(init_script=FETCH)
    page.locator("#next").tap()  # no score: the score is the one required answer
    assert page.locator("#missing").inner_text() == "Please move the slider to give a score."
    assert page.evaluate("window.sent") == []
    tap_words(page, 5, 6)
    mark(page, "minor")
    page.locator("#score-slider").focus()
    page.keyboard.press("End")  # 100
    page.locator("#next").tap()
    page.wait_for_function("window.sent.length === 1")
    start, end = offsets(EN, 5, 6)
    answer = page.evaluate("window.sent[0]")
    assert answer["token"] == "item-1" and answer["score"] == 100
    assert json.loads(answer["spans"]) == [{"start": start, "end": end, "severity": "minor"}]
    # The next item: texts, marks, score and the earlier segments all new.
    page.wait_for_function("document.querySelector('#esa-text .esa-word').textContent === 'The'"
                           " && document.getElementById('text-source').textContent === 'Druhá věta.'")
    assert word_texts(page) == ["The", "second", "sentence."]
    assert spans(page) == [] and page.input_value("#score-number") == ""
    assert page.locator("#esa-previous .translation").all_text_contents() == ["The cat slept."]
    # No marks at all is an answer: "[]".
    page.locator("#score-slider").focus()
    page.keyboard.press("Home")
    page.locator("#next").tap()
    page.wait_for_function("window.sent.length === 2")
    assert page.evaluate("window.sent[1]") == {"token": "item-2", "score": 0, "spans": "[]"}
    assert page.errors == []


def test_screenshots(open_harness):
    os.makedirs(SCREENSHOTS, exist_ok=True)
    for name, viewport, touch in (("phone", PHONE, True), ("desktop", DESKTOP, False)):
        page = open_harness(viewport=viewport, touch=touch)
        tap_words(page, 1, 1) if touch else words(page).nth(1).click()
        page.locator("[data-severity=major]").click()
        for index in (5, 6):
            words(page).nth(index).click()
        page.locator("[data-severity=minor]").click()
        words(page).nth(8).click()
        words(page).nth(9).click()
        page.locator("#score-slider").focus()
        page.keyboard.press("PageDown")
        page.screenshot(path=os.path.join(SCREENSHOTS, f"esa-widget-{name}.png"), full_page=True)
    page = open_harness("ar")
    tap_words(page, 2, 3)
    mark(page, "major")
    tap_words(page, 5, 5)
    page.screenshot(path=os.path.join(SCREENSHOTS, "esa-widget-phone-rtl.png"), full_page=True)
    page = open_harness("ja")
    tap_words(page, 3, 3)
    mark(page, "minor")
    page.screenshot(path=os.path.join(SCREENSHOTS, "esa-widget-phone-ja.png"), full_page=True)
