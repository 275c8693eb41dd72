"""The volunteer's side on a 360x740 phone, served as ``make run`` serves it
(issue 31, items 4, 5, 6 and 8), in headless Chromium.

Long items (campaigns imported here, of sentences as long as WMT's longest
news sentences): the answers, or the slider, and Next are on the screen when
the item opens and after every answer, without scrolling back and forth;
"Please move the slider" goes once the slider is set; every touch target of
the judging page is at least 44 px high. Element boxes are measured, not
looked at. Then a volunteer dismissed by an organiser is told so, and a
volunteer who chose Basque before registering keeps it: on a new device,
in their mails, and on the judging, practice, home and instructions pages.
"""
import os
import re
from datetime import datetime, timedelta, timezone

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect
from sqlalchemy import create_engine, text

from e2e.i18n_pages import DESKTOP, PASSWORD, PHONE, choose_language, fill_registration, new_context, register, \
    start_judging

TOUCH = 44  # px: the smallest target a finger hits reliably (WCAG 2.5.5)

# Long sentences: each item's texts are longer than the phone's screen.
SOURCE_PARTS = [
    "The regional government announced on Tuesday that the new railway line between the two largest cities",
    "which had been delayed for almost a decade because of disagreements over its cost and its route,",
    "will finally open to passengers at the beginning of next year, although several mayors of the towns",
    "along the way complained that the trains will not stop at their stations often enough to make a",
    "real difference to the thousands of people who travel to work every morning by car.",
]
TARGET_PARTS = [
    "Eusko Jaurlaritzak asteartean iragarri zuen bi hiri handienen arteko trenbide berria,",
    "ia hamarkada batez atzeratuta egon dena kostuari eta ibilbideari buruzko desadostasunengatik,",
    "azkenean bidaiarientzat irekiko dela datorren urtearen hasieran, nahiz eta bidean dauden",
    "herrietako zenbait alkatek salatu duten trenak ez direla nahikoa maiz geldituko haien geltokietan",
    "egunero goizean autoz lanera joaten diren milaka pertsonentzat benetako aldea egiteko.",
]


def _long(parts, number, system=""):
    """Sentence ``number``: the parts turned round by it, told apart by the number and the system."""
    turned = parts[number % len(parts):] + parts[:number % len(parts)]
    return f"{number}{system}. " + " ".join(turned)


def import_long(site_cli, folder, slug, protocol):
    """Import and open a campaign of 8 long sentences and two systems (quiet
    signs: browsers answer at once) on the live site; returns its slug."""
    os.makedirs(os.path.join(folder, "systems"))
    numbers = range(1, 9)
    files = {"source.txt": [_long(SOURCE_PARTS, n) for n in numbers],
             "reference.txt": [_long(TARGET_PARTS, n, " (reference)") for n in numbers],
             "systems/neural.txt": [_long(TARGET_PARTS, n) for n in numbers],
             "systems/statistical.txt": [_long(list(reversed(TARGET_PARTS)), n, " S") for n in numbers]}
    for name, lines in files.items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
    with open(os.path.join(folder, "campaign.toml"), "w", encoding="utf-8") as handle:
        handle.write(f'slug = "{slug}"\nname = "Long sentences ({protocol})"\nsource_language = "en"\n'
                     f'target_language = "eu"\nsource = "source.txt"\nreference = "reference.txt"\n'
                     f'protocol = "{protocol}"\n'
                     '[systems]\nNeural = "systems/neural.txt"\nStatistical = "systems/statistical.txt"\n'
                     "[settings]\nfast_seconds_per_word = 0\nhold_min_tests = 0\nhold_fast_run = 0\n")
    # Opened as an organiser opens one: with its raffle's commitment (docs/raffle.md).
    ends = datetime.now(timezone.utc).replace(tzinfo=None) + timedelta(days=30)
    site_cli("campaign", "import", folder, "--open", "--ends-at", f"{ends:%Y-%m-%dT%H:%M}",
             "--beacon", "drand quicknet, the first round after the end",
             "--beacon-at", f"{ends + timedelta(minutes=10):%Y-%m-%dT%H:%M}")
    return slug


def box(page, selector):
    """The element's box in the viewport (x, y, width, height), as laid out now."""
    found = page.locator(selector).first.bounding_box()
    assert found is not None, f"{selector} is not laid out"
    return found


def on_screen(page, *selectors):
    """Every element wholly inside the viewport, as it is scrolled now."""
    height = page.viewport_size["height"]
    for selector in selectors:
        b = box(page, selector)
        assert b["y"] >= 0 and b["y"] + b["height"] <= height + 0.5, \
            f"{selector} is at {b['y']:.0f}..{b['y'] + b['height']:.0f} px on a {height} px screen"


def longer_than_the_screen(page, last_text):
    """The item's texts end below the screen: the case the answer bar is for."""
    bottom = page.evaluate(f"document.querySelector('{last_text}').getBoundingClientRect().bottom + scrollY")
    assert bottom > page.viewport_size["height"], f"the item ends at {bottom:.0f} px: not a long item"


def read_to_the_end(page, last_text):
    """Scroll as a reader does until the end of the item's last text shows
    above the answer bar; returns how far the page scrolled."""
    scrolled = page.evaluate(f"""() => {{
      const end = document.querySelector('{last_text}').getBoundingClientRect().bottom;
      const bar = document.getElementById('answer-bar').getBoundingClientRect().top;
      window.scrollBy(0, Math.max(0, end - bar) + 8);
      return scrollY;
    }}""")
    assert scrolled > 0
    text_end, bar = box(page, last_text), box(page, "#answer-bar")
    assert text_end["y"] + text_end["height"] <= bar["y"] + 0.5, "the bar hides the end of the text"
    return scrolled


def next_item(page, answer):
    before = page.locator("input[name=token]").input_value()
    answer()
    page.locator("#next").tap()
    expect(page.locator("input[name=token]")).not_to_have_value(before)


def shot(page, folder, name):
    """The viewport as the volunteer sees it, on the phone and on a desktop."""
    page.screenshot(path=os.path.join(folder, f"{name}-phone.png"))
    page.set_viewport_size(DESKTOP)
    page.screenshot(path=os.path.join(folder, f"{name}-desktop.png"))
    page.set_viewport_size(PHONE)


PAIRWISE_ANSWERS = ("label.answer-left", "label.answer-right", "label.answer-equal", "#next")


def test_a_long_pairwise_item_keeps_its_answers_on_the_phone(browser, live_server, site_cli, tmp_path, screenshots):
    slug = import_long(site_cli, str(tmp_path / "pairwise"), "long-pairwise", "pairwise")
    context = new_context(browser, "10.6.31.1", viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    try:
        register(page, live_server, slug, "long.pairwise")
        start_judging(page, slug)
        longer_than_the_screen(page, "#text-right")
        on_screen(page, "#question", *PAIRWISE_ANSWERS)
        shot(page, screenshots, "long-pairwise")

        # Next without an answer: said beside the answers, on the screen; gone once one is chosen.
        page.locator("#next").tap()
        expect(page.locator("#missing")).to_have_text("Please choose one of the three answers.")
        on_screen(page, "#missing", *PAIRWISE_ANSWERS)
        page.locator("label.answer-left").tap()
        expect(page.locator("#missing")).to_be_hidden()

        for answered in range(1, 4):
            # Read to the end: the answers stay on the screen; answer; the
            # next item opens at its start, its answers still on the screen.
            read_to_the_end(page, "#text-right")
            on_screen(page, "#text-right", *PAIRWISE_ANSWERS)
            if answered == 1:
                shot(page, screenshots, "long-pairwise-read")
            next_item(page, lambda: page.locator("label.answer-left").tap())
            expect(page.locator(".mine")).to_contain_text(f"You have judged {answered} sentence")
            expect(page.locator("#question")).to_be_focused()
            on_screen(page, "#question", "#text-source", *PAIRWISE_ANSWERS)
            expect(page.locator("input[name=choice]:checked")).to_have_count(0)
        shot(page, screenshots, "long-pairwise-next")
    finally:
        context.close()


def test_a_long_da_item_keeps_its_slider_on_the_phone(browser, live_server, site_cli, tmp_path, screenshots):
    slug = import_long(site_cli, str(tmp_path / "da"), "long-da", "da")
    context = new_context(browser, "10.6.31.2", viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    try:
        register(page, live_server, slug, "long.scores")
        start_judging(page, slug)
        longer_than_the_screen(page, "#text-translation")
        on_screen(page, "#question", "#score-slider", "#next")
        assert box(page, "#score-slider")["height"] >= TOUCH

        # "Please move the slider": on the screen, and gone once the slider is set.
        page.locator("#next").tap()
        expect(page.locator("#missing")).to_have_text("Please move the slider to give a score.")
        on_screen(page, "#missing", "#score-slider", "#next")
        shot(page, screenshots, "long-da-missing")
        page.locator("#score-slider").tap()
        expect(page.locator("#score-slider")).not_to_have_class(re.compile(r"\buntouched\b"))
        expect(page.locator("#missing")).to_be_hidden()

        for answered in range(1, 4):
            read_to_the_end(page, "#text-translation")
            on_screen(page, "#text-translation", "#score-slider", "#next")
            if answered == 1:
                shot(page, screenshots, "long-da-read")
            slider = box(page, "#score-slider")
            next_item(page, lambda: page.locator("#score-slider").tap(
                position={"x": slider["width"] * 0.7, "y": slider["height"] / 2}))
            expect(page.locator(".mine")).to_contain_text(f"You have judged {answered} sentence")
            expect(page.locator("#score-slider")).to_have_class(re.compile(r"\buntouched\b"))
            expect(page.locator("#question")).to_be_focused()
            on_screen(page, "#question", "#score-slider", "#next")
            if answered == 1:
                # A score given with the keyboard takes the message away too.
                page.locator("#next").tap()
                expect(page.locator("#missing")).to_be_visible()
                page.locator("#score-slider").focus()
                page.keyboard.press("End")
                expect(page.locator("#missing")).to_be_hidden()
        shot(page, screenshots, "long-da-next")
    finally:
        context.close()


def test_every_target_of_the_judging_page_is_big_enough(browser, live_server, screenshots):
    context = new_context(browser, "10.6.31.3", viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    try:
        register(page, live_server, "demo-en-eu", "targets.phone")
        start_judging(page, "demo-en-eu")
        for viewport in (PHONE, DESKTOP):
            page.set_viewport_size(viewport)
            targets = {"instructions link": ".campaign-line a", "log out": "header.site nav button",
                       "report summary": "#report > summary"}
            for name, selector in targets.items():
                assert box(page, selector)["height"] >= TOUCH, (name, viewport, box(page, selector))
            page.locator("#report > summary").click()
            reasons = page.locator(".report-reason")
            assert reasons.count() == 5
            for index in range(reasons.count()):
                reason = reasons.nth(index).bounding_box()
                radio = reasons.nth(index).locator("input").bounding_box()
                assert reason["height"] >= TOUCH and radio["height"] >= 20, (index, viewport, reason, radio)
            page.locator("#report").scroll_into_view_if_needed()
            name = "phone" if viewport == PHONE else "desktop"
            page.screenshot(path=os.path.join(screenshots, f"judging-report-open-{name}.png"))
            page.locator("#report > summary").click()
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=os.path.join(screenshots, f"judging-targets-{name}.png"))
    finally:
        context.close()


def _participation_id(database, username, slug):
    engine = create_engine(database)
    try:
        with engine.connect() as connection:
            return connection.execute(text(
                "SELECT participations.id FROM participations JOIN users ON users.id = participations.user_id "
                "JOIN campaigns ON campaigns.id = participations.campaign_id "
                "WHERE users.username = :name AND campaigns.slug = :slug"), {"name": username, "slug": slug}).scalar_one()
    finally:
        engine.dispose()


def _mails(database, address):
    engine = create_engine(database)
    try:
        with engine.connect() as connection:
            return connection.execute(text("SELECT subject, body FROM outbox_mails WHERE recipient = :to ORDER BY id"),
                                      {"to": address}).all()
    finally:
        engine.dispose()


def test_a_volunteer_dismissed_by_an_organiser_is_told_so(browser, live_server, site_cli, site_database, tmp_path,
                                                          screenshots):
    slug = import_long(site_cli, str(tmp_path / "dismissed"), "long-dismissed", "pairwise")
    site_cli("user", "create", "--role", "organiser", "--email", "phone.organiser@example.org",
             "--username", "phone.organiser", "--password", PASSWORD)
    site_cli("campaign", "organisers", "add", slug, "phone.organiser")
    volunteer = new_context(browser, "10.6.31.4", viewport=PHONE, has_touch=True, is_mobile=True)
    organiser = new_context(browser, "10.6.31.5", viewport=DESKTOP)
    try:
        page = volunteer.new_page()
        register(page, live_server, slug, "told.why")
        start_judging(page, slug)
        next_item(page, lambda: page.locator("label.answer-left").click())

        org = organiser.new_page()
        org.goto(f"{live_server}/login")
        org.locator("main form [name=email]").fill("phone.organiser@example.org")
        org.locator("main form [name=password]").fill(PASSWORD)
        org.locator("main form button[type=submit]").click()
        org.goto(f"{live_server}/organiser/c/{slug}/volunteer/{_participation_id(site_database, 'told.why', slug)}")
        org.get_by_label(re.compile("^Reason for the dismissal")).fill("Copied answers from a friend")
        org.get_by_role("button", name="Dismiss the volunteer").click()
        expect(org.locator(".flash", has_text="The volunteer is dismissed.")).to_be_visible()

        try:
            page.goto(f"{live_server}/c/{slug}/evaluate")
        except PlaywrightError as error:  # the live update took the page there first (evaluate.js)
            if "ERR_ABORTED" not in str(error):
                raise
            page.wait_for_load_state()
        expect(page.get_by_role("heading", name="Thank you for your time")).to_be_visible()
        expect(page.locator("#dismissed-by-organiser")).to_have_text(
            "The organisers reviewed your answers and ended your participation in this campaign.")
        expect(page.locator("main")).not_to_contain_text("control sentences")
        expect(page.locator("main")).not_to_contain_text("Copied answers")
        shot(page, screenshots, "dismissed-by-organiser")
    finally:
        volunteer.close()
        organiser.close()


def test_the_language_chosen_before_registering_is_kept(browser, live_server, site_database, screenshots):
    slug, username, email = "demo-en-eu", "aitziber.phone", "aitziber.phone@example.org"
    first = new_context(browser, "10.6.31.6", viewport=PHONE, has_touch=True, is_mobile=True, locale="en-GB")
    try:
        page = first.new_page()
        page.goto(f"{live_server}/c/{slug}/")
        choose_language(page, "eu")
        register(page, live_server, slug, username)
        (subject, _body), = _mails(site_database, email)
        assert subject != "Confirm your email for Bozka" and "Bozka" in subject  # in Basque

        # Before judging, the practice is offered first; its explanation is the
        # Basque one the demo's practice.tsv gives (why.eu), with no note of its language.
        expect(page.locator("#practice-link")).to_be_visible()
        page.locator("#practice-link").click()
        page.locator("label.answer-left").click()
        page.locator("#next").click()
        expect(page.locator("#feedback .why bdi")).to_contain_text("Itzulpen txarragoak")
        expect(page.locator("#feedback .why bdi")).to_have_attribute("lang", "eu")
        expect(page.locator("#why-note")).to_have_count(0)
        shot(page, screenshots, "practice-why-basque")

        # The judging page names the campaign in Basque; after an answer the
        # instructions no longer say "practice first".
        page.goto(f"{live_server}/c/{slug}/evaluate")
        expect(page.locator(".campaign-name")).to_have_text("Demoa: ingelesetik euskarara")
        expect(page.locator(".campaign-name bdi")).to_have_attribute("lang", "eu")
        next_item(page, lambda: page.locator("label.answer-left").click())
        page.goto(f"{live_server}/c/{slug}/instructions")
        expect(page.locator("#practice-link")).to_have_count(0)
        expect(page.locator(f"main a.primary[href$='/c/{slug}/evaluate']")).to_be_visible()
        shot(page, screenshots, "instructions-started-basque")
    finally:
        first.close()

    # A new device, in English, logs in: Basque at once.
    second = new_context(browser, "10.6.31.7", viewport=PHONE, locale="en-GB")
    try:
        page = second.new_page()
        page.goto(f"{live_server}/login")
        expect(page.locator("html")).to_have_attribute("lang", "en")
        page.locator("main form [name=email]").fill(email)
        page.locator("main form [name=password]").fill(PASSWORD)
        page.locator("main form button[type=submit]").click()
        expect(page.locator("html")).to_have_attribute("lang", "eu")
        expect(page.locator(".campaign-name")).to_have_text("Demoa: ingelesetik euskarara")
    finally:
        second.close()

    # Someone registers with her email from an English page: she is told in Basque.
    third = new_context(browser, "10.6.31.8", viewport=PHONE, locale="en-GB")
    try:
        page = third.new_page()
        page.goto(f"{live_server}/c/{slug}/register")
        fill_registration(page, "someone.else")
        page.locator("main form [name=email]").fill(email)
        page.locator("main form button[type=submit]").click()
        expect(page).to_have_url(re.compile(rf"/c/{slug}/instructions$"))
        subject, body = _mails(site_database, email)[-1]
        assert subject != "Someone tried to register on Bozka with your email" and "Bozka" in subject
        assert username in body and "/login" in body

        # The home page, in English now, describes both ways of judging.
        page.goto(f"{live_server}/")
        expect(page.locator("main")).to_contain_text("choose the better of two translations")
        expect(page.locator("main")).to_contain_text("score one translation at a time from 0 to 100")
        shot(page, screenshots, "home-both-protocols")
    finally:
        third.close()
