"""What a newcomer reads of a campaign's terms, on the site as served, in
headless Chromium at 360x740 and 1280x800, in English and Basque: the end
time on the campaign, instructions and judging pages (the demos are open for
30 days), the organisers' instructions before the site's general ones, the
control rule as it is checked and the prizes of the ranking
(tests/test_rules_told.py has every wording)."""
import re

import pytest
from playwright.sync_api import expect

from e2e.i18n_pages import DESKTOP, PHONE, new_context, register, scroll_width

# (interface language, campaign, viewport, username, client address)
CASES = [
    ("en", "demo-en-eu", PHONE, "terms.en.phone", "10.7.3.1"),
    ("eu", "demo-en-eu", DESKTOP, "terms.eu.desk", "10.7.3.2"),
    ("en", "demo-en-eu-da", DESKTOP, "terms.da.desk", "10.7.3.3"),
    ("eu", "demo-en-eu-da", PHONE, "terms.da.phone", "10.7.3.4"),
]
OPEN_UNTIL = {"en": re.compile(r"^Open until \w+ \d+, 20\d\d, .* UTC$"),
              "eu": re.compile(r"^Irekita 20\d\d\(e\)ko .* \(UTC\)\) arte$")}
RULE = {
    ("en", "pairwise"): "Your answers to the control sentences are checked after every 10 sentences you judge.",
    ("eu", "pairwise"): "Kontrol-esaldietako zure erantzunak ebaluatzen dituzun 10 esalditik behin egiaztatzen dira.",
    ("en", "da"): "Once you have scored 5 of these",
    ("eu", "da"): "Horietako 5 puntuatu ondoren",
}
PRIZES = {"en": "The top 5 contributors in the ranking win prizes.",
          "eu": "Sailkapeneko lehen 5 boluntarioek sariak irabazten dituzte."}


def _a_small_line(page, selector):
    """The line is small: no wider than the screen, at most two lines of its text."""
    box = page.locator(selector).bounding_box()
    height = page.evaluate(f"parseFloat(getComputedStyle(document.querySelector('{selector}')).lineHeight)")
    assert box["x"] >= 0 and box["x"] + box["width"] <= page.viewport_size["width"] + 1
    assert box["height"] <= 2 * height + 2, box


@pytest.mark.parametrize("language, slug, viewport, username, address", CASES)
def test_a_newcomer_reads_the_terms(live_server, browser, language, slug, viewport, username, address):
    protocol = "da" if slug.endswith("-da") else "pairwise"
    context = new_context(browser, address, viewport=viewport, locale="en-GB" if language == "en" else "eu")
    page = context.new_page()
    try:
        page.goto(f"{live_server}/c/{slug}/")
        expect(page.locator("#open-until")).to_have_text(OPEN_UNTIL[language])
        register(page, live_server, slug, username)  # lands on the instructions

        expect(page.locator("#open-until")).to_have_text(OPEN_UNTIL[language])
        order = page.evaluate("""() => ['h1', '#campaign-instructions', '.campaign-text', '#general-instructions',
                                        '#control-rule', '#rewards']
            .map(s => document.querySelector(s)).map(e => e ? e.getBoundingClientRect().top : null)""")
        assert None not in order and order == sorted(order), order
        expect(page.locator("#control-rule")).to_contain_text(RULE[(language, protocol)])
        expect(page.locator("#rewards")).to_contain_text(PRIZES[language])
        assert "at once" not in page.locator("main").inner_text()
        assert scroll_width(page) <= viewport["width"]

        page.goto(f"{live_server}/c/{slug}/evaluate")
        expect(page.locator("#task")).to_be_visible()
        expect(page.locator("#task ~ #open-until")).to_have_text(OPEN_UNTIL[language])  # below the task
        _a_small_line(page, "#open-until")
        assert scroll_width(page) <= viewport["width"]
    finally:
        context.close()
