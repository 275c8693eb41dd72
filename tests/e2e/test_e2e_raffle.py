"""The raffle from commitment to the winner's notice, in headless Chromium.

An organiser sets the campaign's end and publishes the commitment before
anyone has a ticket; a volunteer (who reads Basque) confirms their email and
wins a ticket; once the end has passed the organiser draws, opens the
winners page (username and email) and sends the winner the email, which is
written in Basque; the winner sees the notice on their campaign page, and
every volunteer page links to the public raffle page.

The draw waits for the end time named in the commitment, which the form
sets to the minute: this test waits up to about a minute and a half.
"""
import math
import os
import re
import time
from datetime import datetime, timedelta, timezone

from playwright.sync_api import expect

from e2e.i18n_pages import DESKTOP, PASSWORD, answer_for, choose_language, log_in, new_context, register
from e2e.pages import unfold

SLUG = "raffle-e2e"
ORGANISER = ("raffle.organiser", "raffle.organiser@example.org")
VOLUNTEER = "irabazle"
CONTROLS = {
    ("It is raining today.", "Gaur euria ari du.", "Gaur ez du eguzkirik egiten atzo."),
    ("The cat sleeps.", "Katua lo dago.", "Txakurra jaten ari da."),
    ("We eat bread.", "Ogia jaten dugu.", "Ez dugu ura edaten."),
}


def _mail_in_log(server_log, pattern, timeout=15):
    """The matches of ``pattern`` in the server log, once the background
    sender has written the mail there (it looks every 2 seconds)."""
    stop_at = time.monotonic() + timeout
    while not (found := re.findall(pattern, server_log(), re.S)):
        assert time.monotonic() < stop_at, f"no mail matching {pattern!r} in the server log"
        time.sleep(0.2)
    return found


def _campaign(folder):
    """Four sentences, two systems, a ticket every two answers."""
    os.makedirs(os.path.join(folder, "systems"), exist_ok=True)
    files = {
        "source.txt": "The museum opens at ten.\nThe shop closes at six.\nThe bus is late.\nThe sea is calm.\n",
        "systems/a.txt": "Museoa hamarretan irekitzen da.\nDenda seietan ixten da.\nAutobusa berandu dator.\n"
                         "Itsasoa lasai dago.\n",
        "systems/b.txt": "Museoa hamar irekitzen.\nDenda sei ixten.\nAutobusa berandu.\nItsasoa lasai.\n",
        "controls.tsv": "source\tbetter\tworse\n" + "".join("\t".join(row) + "\n" for row in sorted(CONTROLS)),
        "campaign.toml": f'slug = "{SLUG}"\nname = "Raffle campaign"\nsource_language = "en"\n'
        'target_language = "eu"\nsource = "source.txt"\ncontrols = "controls.tsv"\n'
        '[systems]\nA = "systems/a.txt"\nB = "systems/b.txt"\n'
        "[settings]\nraffle_every = 2\nfast_seconds_per_word = 0.0\n",
    }
    for name, text in files.items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
            handle.write(text)
    return folder


def _end_time():
    """A whole minute (the form's precision) at least 45 s from now, in UTC."""
    soon = datetime.now(timezone.utc).replace(tzinfo=None) + timedelta(seconds=45)
    return datetime.fromtimestamp(math.ceil(soon.timestamp() / 60) * 60, timezone.utc).replace(tzinfo=None)


def test_the_raffle_from_commitment_to_the_winners_notice(browser, live_server, site_cli, tmp_path, server_log,
                                                         screenshots):
    site_cli("campaign", "import", _campaign(str(tmp_path / "raffle")))
    site_cli("user", "create", "--role", "organiser", "--email", ORGANISER[1], "--username", ORGANISER[0],
             "--password", PASSWORD)
    organiser_context = new_context(browser, "10.7.1.1", viewport=DESKTOP)
    volunteer_context = new_context(browser, "10.7.1.2")
    dash, page = organiser_context.new_page(), volunteer_context.new_page()
    try:
        # Before any ticket: the end time, then the commitment (Bozka makes the seed).
        log_in(dash, live_server, ORGANISER[1])
        dash.goto(f"{live_server}/organiser/c/{SLUG}/")
        ends_at = _end_time()
        unfold(dash, "Campaign")
        unfold(dash, "Raffle")
        dash.get_by_label("Ends at (UTC, optional)").fill(ends_at.strftime("%Y-%m-%dT%H:%M"))
        dash.get_by_role("button", name="Save").click()
        expect(dash.locator(".flash-info")).to_contain_text("Campaign saved")
        dash.get_by_role("button", name="Publish the commitment").click()
        seed = dash.locator("code.hash").inner_text().strip()
        assert re.fullmatch(r"[0-9a-f]{64}", seed)
        dash.get_by_role("link", name="Back to the dashboard").click()
        expect(dash.locator("main")).to_contain_text("The draw takes place after the campaign has closed")

        # A volunteer who reads Basque registers, confirms the email and wins a ticket.
        register(page, live_server, SLUG, VOLUNTEER)
        link = _mail_in_log(server_log, rf"to {VOLUNTEER}@example.org: .*?\n.*?(http://\S+/confirm/\S+)")
        page.goto(link[-1])
        expect(page.locator(".flash-info")).to_contain_text("your email is confirmed")
        choose_language(page, "eu")
        page.goto(f"{live_server}/c/{SLUG}/evaluate")
        for number in (1, 2):
            choice, _control = answer_for(page, CONTROLS, number)
            before = page.locator("input[name=token]").input_value()
            page.locator(f"label.answer-{choice}").click()
            page.locator("#next").click()
            expect(page.locator("input[name=token]")).not_to_have_value(before)
        expect(page.locator("#mine strong")).to_have_text("1")  # ticket number 1
        # Every volunteer page links to the public raffle page.
        for path in ("evaluate", "welcome", "instructions"):
            page.goto(f"{live_server}/c/{SLUG}/{path}")
            expect(page.locator(f"nav.campaign-nav a[href$='/c/{SLUG}/raffle']")).to_have_count(1)

        # No draw while the campaign is open.
        dash.goto(f"{live_server}/organiser/c/{SLUG}/")
        unfold(dash, "Raffle")
        dash.get_by_label("The secret seed").fill(seed)
        dash.get_by_role("button", name="Reveal the seed and draw").click()
        expect(dash.locator(".flash-error")).to_contain_text("only after the campaign has closed")

        # The end passes; the organiser draws and writes to the winner.
        wait = (ends_at - datetime.now(timezone.utc).replace(tzinfo=None)).total_seconds() + 1
        time.sleep(max(0.0, wait))
        dash.get_by_label("The secret seed").fill(seed)
        dash.get_by_label("Number of prizes").fill("1")
        dash.get_by_role("button", name="Reveal the seed and draw").click()
        expect(dash.locator(".flash-info")).to_contain_text("The raffle was drawn.")
        dash.get_by_role("link", name=re.compile("The winners")).click()
        row = dash.locator("table.winners tbody tr")
        expect(row).to_have_count(1)
        expect(row).to_contain_text(VOLUNTEER)
        expect(row).to_contain_text(f"{VOLUNTEER}@example.org")
        dash.get_by_label("A message to add").fill("Idatzi sariak@example.org helbidera.")
        dash.get_by_role("button", name=re.compile("Send the email to the winner of prize 1")).click()
        expect(dash.locator(".flash-info")).to_contain_text("The email to the winner of prize 1 is queued")
        expect(row.locator(".sent")).not_to_have_text("–")
        dash.screenshot(path=os.path.join(screenshots, "raffle-winners.png"), full_page=True)
        _mail_in_log(server_log, rf"to {VOLUNTEER}@example.org: Zozketa irabazi duzu")
        mail = server_log().split(f"to {VOLUNTEER}@example.org: ")[-1]
        assert mail.startswith("Zozketa irabazi duzu: Raffle campaign")
        assert "1. saria irabazi duzu" in mail and "Idatzi sariak@example.org helbidera." in mail

        # The winner sees it on their campaign page, in their language.
        page.goto(f"{live_server}/c/{SLUG}/")
        expect(page.locator(".won")).to_contain_text("1. saria irabazi duzu zozketan")
        page.screenshot(path=os.path.join(screenshots, "raffle-winner-notice.png"), full_page=True)
    finally:
        organiser_context.close()
        volunteer_context.close()
