"""Next with no answer chosen: the judging page says so itself, in the
interface language, with and without JavaScript; the browser's own
"required" bubble (in the browser's language) never shows."""
import os

from babel.support import Translations
from playwright.sync_api import expect

from e2e.i18n_pages import PHONE, choose_language, new_context, register

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SLUG = "demo-en-eu"
MISSING = "Please choose one of the three answers."


def _in_basque(message):
    translated = Translations.load(os.path.join(ROOT, "translations"), ["eu"]).gettext(message)
    assert translated != message, f"{message!r} has no Basque translation"
    return translated


def _next_without_an_answer(page):
    before = page.locator("input[name=token]").input_value()
    expect(page.locator("input[name=choice]:checked")).to_have_count(0)
    page.locator("#next").click()
    expect(page.locator(".flash-error")).to_have_text(_in_basque(MISSING))
    assert page.locator("input[name=token]").input_value() == before  # the same sentence, still to judge
    # The browser's check is off: it would stop the form with its own bubble.
    assert page.eval_on_selector("#task", "form => form.noValidate")


def test_the_page_says_an_answer_is_missing(browser, live_server, screenshots):
    context = new_context(browser, "10.6.22.1", viewport=PHONE, locale="en-GB")
    page = context.new_page()
    try:
        page.goto(f"{live_server}/c/{SLUG}/")
        choose_language(page, "eu")
        register(page, live_server, SLUG, "bozka.eu")
        page.goto(f"{live_server}/c/{SLUG}/evaluate")
        expect(page.locator("html")).to_have_attribute("lang", "eu")
        _next_without_an_answer(page)
        page.screenshot(path=os.path.join(screenshots, "missing-answer-js-phone.png"))
        cookies = context.cookies()
    finally:
        context.close()

    # Without JavaScript the server refuses the empty answer with the same words.
    context = new_context(browser, "10.6.22.1", viewport=PHONE, locale="en-GB", java_script_enabled=False)
    context.add_cookies(cookies)
    page = context.new_page()
    try:
        page.goto(f"{live_server}/c/{SLUG}/evaluate")
        expect(page.locator("html")).to_have_attribute("lang", "eu")
        _next_without_an_answer(page)
        page.screenshot(path=os.path.join(screenshots, "missing-answer-nojs-phone.png"))
    finally:
        context.close()
