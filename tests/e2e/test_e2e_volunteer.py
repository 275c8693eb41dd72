"""A volunteer registers on the demo campaign and judges 12 items in Chromium."""
import os
import re

from playwright.sync_api import expect

from e2e.pages import DESKTOP, PASSWORD, PHONE, no_sideways_scrolling, read_controls


def shoot(page, folder, name, full_page=False):
    """Screenshots of the current page at phone size and at desktop size."""
    page.set_viewport_size(PHONE)
    page.screenshot(path=os.path.join(folder, f"{name}-phone.png"), full_page=full_page)
    page.set_viewport_size(DESKTOP)
    page.screenshot(path=os.path.join(folder, f"{name}-desktop.png"), full_page=full_page)
    page.set_viewport_size(PHONE)


def task_bottom_on_phone(page):
    """Source, both translations, the three answers and Next, without scrolling."""
    page.evaluate("window.scrollTo(0, 0)")
    parts = [
        page.locator(".text.source"),
        page.locator(".text.translation").nth(0),
        page.locator(".text.translation").nth(1),
        page.locator("label.answer").nth(0),
        page.locator("label.answer").nth(1),
        page.locator("label.answer").nth(2),
        page.get_by_role("button", name="Next"),
    ]
    boxes = [part.bounding_box() for part in parts]
    return max(box["y"] + box["height"] for box in boxes)


def test_volunteer_registers_and_judges_twelve_items(browser, live_server, screenshots):
    controls = read_controls()
    context = browser.new_context(viewport=PHONE, locale="en-GB")
    context.set_default_timeout(10_000)
    page = context.new_page()
    try:
        # The home page lists the open campaigns (the demo has three, two of them English to Basque).
        page.goto(live_server + "/")
        page.get_by_role("link", name="Demo: English to Basque", exact=True).click()
        expect(page).to_have_url(re.compile(r"/c/demo-en-eu/$"))
        expect(page.get_by_role("heading", level=1)).to_have_text("Demo: English to Basque")
        page.get_by_role("link", name="Register", exact=True).click()

        expect(page).to_have_url(re.compile(r"/c/demo-en-eu/register$"))
        no_sideways_scrolling(page)
        shoot(page, screenshots, "register", full_page=True)
        page.get_by_label("Public username").fill("ane.e2e")
        page.get_by_label("Email", exact=True).fill("ane.e2e@example.org")
        page.get_by_label("Password", exact=True).fill(PASSWORD)
        page.get_by_label("Repeat the password").fill(PASSWORD)
        page.get_by_label("Age group").select_option("26-35")
        page.get_by_label("Level of studies").select_option("university")
        page.get_by_label("Field of studies or work").select_option("language")
        page.get_by_label("Your level of English").select_option("B1-B2")
        page.get_by_label("Your level of Basque").select_option("C1-C2")
        page.get_by_label(re.compile(r"^I agree that my answers")).check()
        page.get_by_role("button", name="Register and start").click()

        # The instructions come first.
        expect(page).to_have_url(re.compile(r"/c/demo-en-eu/instructions$"))
        expect(page.get_by_role("heading", name="Instructions")).to_be_visible()
        expect(page.get_by_text("Choose “both are of equal quality” only if truly necessary.")).to_be_visible()
        expect(page.locator("header.site")).to_contain_text("ane.e2e")
        no_sideways_scrolling(page)
        shoot(page, screenshots, "instructions", full_page=True)
        page.get_by_role("link", name="Show me the sentences").click()

        expect(page).to_have_url(re.compile(r"/c/demo-en-eu/evaluate$"))
        no_sideways_scrolling(page)
        shoot(page, screenshots, "evaluate")

        seen_controls = 0
        ticket = None
        for number in range(1, 13):
            expect(page.get_by_role("heading", name="Which translation is better?")).to_be_visible()
            source = page.locator(".text.source").inner_text().strip()
            left = page.locator(".text.translation").nth(0).inner_text().strip()
            right = page.locator(".text.translation").nth(1).inner_text().strip()
            assert source and left and right
            # The demo's sentences are short: the whole task fits the phone screen.
            bottom = task_bottom_on_phone(page)
            assert bottom <= PHONE["height"], f"item {number}: the task ends at {bottom:.0f} px"
            if (source, left, right) in controls:
                answer, seen_controls = "The first translation", seen_controls + 1
            elif (source, right, left) in controls:
                answer, seen_controls = "The second translation", seen_controls + 1
            else:
                answer = ("The first translation", "The second translation")[number % 2]
            page.get_by_label(answer).check()
            expect(page.get_by_label(answer)).to_be_checked()
            if number == 1:
                shoot(page, screenshots, "evaluate-chosen")
            page.get_by_role("button", name="Next").click()

            # A failed control would end here, on the dismissal page.
            expect(page.get_by_role("heading", name="Thank you for your time")).to_have_count(0)
            noun = "sentence" if number == 1 else "sentences"
            expect(page.locator(".mine")).to_contain_text(f"You have judged {number} {noun}.")
            notice = page.locator(".flash-ticket")
            if number == 10:
                expect(notice).to_contain_text("You won a new raffle number")
                ticket = re.search(r"(\d+)", notice.inner_text()).group(1)
                expect(page.locator(".mine")).to_contain_text(f"Your raffle number: {ticket}")
                no_sideways_scrolling(page)
                shoot(page, screenshots, "evaluate-ticket")
            else:
                expect(notice).to_have_count(0)

        # The demo starts with two controls; all were recognised and passed.
        assert seen_controls >= 2
        expect(page.locator(".mine")).to_contain_text("You have judged 12 sentences.")
        expect(page.locator(".mine")).to_contain_text(f"Your raffle number: {ticket}")
        expect(page.locator(".mine strong")).to_have_text(ticket)
        shoot(page, screenshots, "evaluate-after-12")
    finally:
        context.close()
