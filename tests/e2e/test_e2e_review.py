"""The organiser decides about one volunteer, in headless Chromium (issue 18,
item 3): a volunteer judges at a reading pace and wins a raffle ticket; they
are held for review (set in the database: the signs that hold are another
part of the issue); the organiser finds them on the suspicious-patterns page,
reads their page on a desktop and on a phone, clears the hold, voids the
ticket and dismisses them, each step said on the page and in the audit log.
"""
import re
import time

from playwright.sync_api import expect
from sqlalchemy import create_engine, text

from e2e.pages import DESKTOP, PASSWORD, PHONE, SLUG, choose, judged_text, no_sideways_scrolling, open_evaluation, \
    read_controls, unfold

ORGANISER = ("review.organiser", "review.organiser@example.org")
ADMIN = ("review.admin", "review.admin@example.org")  # the audit log is the admins'
VOLUNTEER = ("ibai.review", "ibai.review@example.org")
READING_FLOOR = 0.0375  # seconds a word, the campaign's default (quality.too_fast)


def log_in(page, base_url, email):
    page.goto(f"{base_url}/login")
    page.get_by_label("Email", exact=True).fill(email)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("header.site")).to_contain_text("Log out")


def judge_at_reading_pace(page, answers):
    """Answer like a reader: never faster than the campaign's reading floor."""
    controls = read_controls()
    for number in range(1, answers + 1):
        words = sum(len(page.locator(f"#text-{part}").inner_text().split()) for part in ("source", "left", "right"))
        time.sleep(max(0.5, words * READING_FLOOR) + 0.3)
        choose(page, controls, number)
        page.get_by_role("button", name="Next").click()
        expect(page.locator(".mine")).to_contain_text(judged_text(number))


def confirm_and_hold(database, username):
    """The volunteer confirms their email (their tickets are published) and is held."""
    engine = create_engine(database)
    try:
        with engine.begin() as connection:
            connection.execute(text("UPDATE users SET email_confirmed_at = CURRENT_TIMESTAMP WHERE username = :name"),
                               {"name": username})
            connection.execute(text(
                "UPDATE participations SET held_at = CURRENT_TIMESTAMP, held_reason = 'same_side', tests_left = 21 "
                "WHERE user_id = (SELECT id FROM users WHERE username = :name)"), {"name": username})
            # As the site does with both (rewards.list_changed): the raffle's list is read again.
            connection.execute(text("UPDATE campaigns SET raffle_version = raffle_version + 1"))
    finally:
        engine.dispose()


def flash(page, message):
    expect(page.locator(".flash", has_text=message)).to_be_visible()


def test_organiser_reviews_a_held_volunteer(browser, live_server, site_cli, site_database, screenshots):
    for (username, email), role in ((ORGANISER, "organiser"), (VOLUNTEER, "volunteer"), (ADMIN, "admin")):
        site_cli("user", "create", "--role", role, "--email", email, "--username", username, "--password", PASSWORD)
    site_cli("campaign", "organisers", "add", SLUG, ORGANISER[0])  # an organiser manages the campaigns given
    volunteer_context = browser.new_context(viewport=PHONE, locale="en-GB")
    organiser_context = browser.new_context(viewport=DESKTOP, locale="en-GB")
    phone_context = browser.new_context(viewport=PHONE, locale="en-GB")
    for context in (volunteer_context, organiser_context, phone_context):
        context.set_default_timeout(10_000)
    page, org = volunteer_context.new_page(), organiser_context.new_page()
    try:
        # The volunteer joins and judges ten sentences: one raffle ticket.
        log_in(page, live_server, VOLUNTEER[1])
        page.goto(f"{live_server}/c/{SLUG}/join")
        page.get_by_label("Your level of English").select_option("B1-B2")
        page.get_by_label("Your level of Basque").select_option("C1-C2")
        page.get_by_label(re.compile(r"^I agree that my answers")).check()
        page.get_by_role("button", name="Take part").click()
        open_evaluation(page)
        judge_at_reading_pace(page, 10)
        ticket = int(page.locator(".mine strong").inner_text())
        confirm_and_hold(site_database, VOLUNTEER[0])

        # The organiser finds them among the held volunteers.
        log_in(org, live_server, ORGANISER[1])
        org.goto(f"{live_server}/organiser/c/{SLUG}/suspicious")
        held = org.locator("#held tr", has_text=VOLUNTEER[0])
        expect(held).to_contain_text("one side far more often than chance")
        held.get_by_role("link", name=VOLUNTEER[0]).click()
        expect(org).to_have_url(re.compile(rf"/organiser/c/{SLUG}/volunteer/\d+$"))
        url = org.url
        expect(org.get_by_role("heading", name=f"Volunteer {VOLUNTEER[0]}")).to_be_visible()
        expect(org.locator("#volunteer-state")).to_contain_text("Held for review since")
        expect(org.locator("#volunteer-state")).to_contain_text("one side far more often than chance")
        expect(org.locator("#profile")).to_contain_text(VOLUNTEER[1])  # folded (issue 31), in the page
        expect(org.locator("[data-figure=answered]")).to_have_text("10")
        expect(org.locator("#judgments tbody tr")).to_have_count(10)
        expect(org.locator("#controls tbody tr", has_text="passed")).to_have_count(4)  # items 1, 2, 5, 10
        expect(org.locator(f"#tickets tr[data-ticket='{ticket}']")).to_contain_text("valid")
        org.screenshot(path=f"{screenshots}/review-volunteer-desktop.png", full_page=True)
        phone = phone_context.new_page()
        log_in(phone, live_server, ORGANISER[1])
        phone.goto(url)
        expect(phone.locator("#judgments")).to_be_hidden()  # the long lists fold on the page (issue 31)
        unfold(phone, "Judgments (10)")
        expect(phone.locator("#judgments")).to_be_visible()
        no_sideways_scrolling(phone)
        phone.screenshot(path=f"{screenshots}/review-volunteer-phone.png", full_page=True)

        # Clear the hold: back in the ranking, the signs start again.
        org.get_by_role("button", name="Clear the hold").click()
        flash(org, "The hold is cleared.")
        expect(org.locator("#volunteer-state")).to_have_text("Taking part; not held.")
        expect(org.get_by_role("button", name="Clear the hold")).to_have_count(0)
        expect(org.locator("#sign-same_side td").nth(1)).to_have_text("First 0, second 0")

        # Void the ticket: out of the published list.
        assert re.search(rf"^{ticket},", org.request.get(f"{live_server}/c/{SLUG}/raffle/tickets.csv").text(), re.M)
        unfold(org, "Raffle tickets (1)")
        org.get_by_role("button", name=f"Void ticket {ticket}").click()
        flash(org, f"Ticket {ticket} is void.")
        expect(org.locator(f"#tickets tr[data-ticket='{ticket}']")).to_contain_text("void since")
        assert not re.search(rf"^{ticket},", org.request.get(f"{live_server}/c/{SLUG}/raffle/tickets.csv").text(),
                             re.M)

        # Dismiss, with a reason; the judgments are discarded.
        org.get_by_label(re.compile("^Reason for the dismissal")).fill("Answers from a <script>")
        org.get_by_role("button", name="Dismiss the volunteer").click()
        flash(org, "The volunteer is dismissed.")
        expect(org.locator("#volunteer-state")).to_contain_text("Answers from a <script>")
        expect(org.locator("#judgments tbody tr", has_text="yes")).to_have_count(10)
        expect(org.get_by_role("button", name="Dismiss the volunteer")).to_have_count(0)
        # A new page: the open judging page may be leaving by itself (told live), and a goto there races it.
        page.close()
        page = volunteer_context.new_page()
        page.goto(f"{live_server}/c/{SLUG}/welcome")
        expect(page.locator(".flash")).to_contain_text("Your participation in this campaign has ended.")

        # Each decision is in the audit log, by its label (app/choices.AUDIT_ACTIONS), which an admin reads.
        assert org.goto(f"{live_server}/organiser/audit").status == 403
        phone_context.clear_cookies()  # the phone was the organiser's
        audit = phone_context.new_page()
        log_in(audit, live_server, ADMIN[1])
        audit.goto(f"{live_server}/organiser/audit")
        for action in ("Volunteer viewed", "Hold cleared", "Raffle number voided", "Volunteer dismissed"):
            expect(audit.locator("tbody tr", has_text=action).first).to_contain_text(ORGANISER[0])
    finally:
        for context in (volunteer_context, organiser_context, phone_context):
            context.close()
