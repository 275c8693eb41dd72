"""A raffle nobody who runs the site can steer (issue 28, item 2), on the
site as ``make run`` serves it: the organiser commits to a seed and names a
beacon published after the end; voids before the close are public with
their time; after the close no void is offered and a re-opening is
refused; the draw takes the beacon's value, and scripts/verify_raffle.py
passes the draw and fails it with one ticket less or another beacon value.

The tickets are written to the site's database (winning them by judging is
the walk's part, tests/e2e/walk.py); everything else goes through the pages.
"""
import os
import re
import shutil
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone

from playwright.sync_api import expect
from sqlalchemy import create_engine, text

from e2e.conftest import ROOT
from e2e.i18n_pages import log_in
from e2e.pages import DESKTOP, PASSWORD, PHONE, no_sideways_scrolling, open_campaign, set_end_and_commit, unfold

SLUG = "e2e-raffle"
ORGANISER = ("raffle.organiser", "raffle.organiser@example.org")
VOLUNTEERS = ("raffle.ane", "raffle.jon", "raffle.miren")
BEACON = "e2e beacon: 4 8 15 16 23 42"


def campaign_folder(tmp_path):
    """The English to Basque demo under a slug and name of its own (the suite's other tests use the demo)."""
    folder = tmp_path / SLUG
    shutil.copytree(os.path.join(ROOT, "app", "demo", "en-eu"), folder)
    toml = folder / "campaign.toml"
    # A slug and a name of its own: the suite's other tests find the demo by its name on the home page.
    settings = re.sub(r'^slug = ".*"$', f'slug = "{SLUG}"', toml.read_text(encoding="utf-8"), count=1, flags=re.M)
    settings = re.sub(r'^name = ".*"$', 'name = "Raffle test: English to Basque"', settings, count=1, flags=re.M)
    toml.write_text(settings, encoding="utf-8")
    return str(folder)


def said(page, kind, message):
    expect(page.locator(f".flash-{kind}", has_text=message)).to_be_visible()


def give_tickets(database):
    """Each volunteer confirmed, with two tickets (1-6 in turn); returns {ticket: username}."""
    engine = create_engine(database)
    owners = {}
    try:
        with engine.begin() as connection:
            campaign = connection.execute(text("SELECT id FROM campaigns WHERE slug = :slug"), {"slug": SLUG}).scalar_one()
            number = 0
            for _round in range(2):
                for name in VOLUNTEERS:
                    number += 1
                    participation = connection.execute(text(
                        "SELECT participations.id FROM participations JOIN users ON users.id = participations.user_id "
                        "WHERE participations.campaign_id = :campaign AND users.username = :name"),
                        {"campaign": campaign, "name": name}).scalar_one()
                    connection.execute(text(
                        "INSERT INTO tickets (campaign_id, participation_id, number, item_position, created_at) "
                        "VALUES (:campaign, :participation, :number, :position, CURRENT_TIMESTAMP)"),
                        {"campaign": campaign, "participation": participation, "number": number,
                         "position": 10 * (_round + 1)})
                    owners[number] = (name, participation)
                    # A ticket comes after its answers: a volunteer with none would be untested (issue 29).
                    # tickets_valid: the counter a won ticket moves (the raffle list's counts read it).
                    connection.execute(text("UPDATE participations SET items_answered = :n, tickets_valid = :t "
                                            "WHERE id = :id"), {"n": 10 * (_round + 1), "t": _round + 1,
                                                               "id": participation})
            # raffle_version: the emails confirmed below change who counts (rewards.list_changed).
            connection.execute(text("UPDATE campaigns SET next_ticket = :next, raffle_version = raffle_version + 1 "
                                    "WHERE id = :id"), {"next": number + 1, "id": campaign})
            connection.execute(text("UPDATE users SET email_confirmed_at = CURRENT_TIMESTAMP WHERE username IN "
                                    "(:a, :b, :c)"), dict(zip("abc", VOLUNTEERS)))
    finally:
        engine.dispose()
    return owners


def verify(draw, tickets, beacon):
    return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "verify_raffle.py"), "--draw", draw,
                           "--tickets", tickets, "--beacon", beacon], capture_output=True, text=True, timeout=60)


def test_a_raffle_nobody_can_steer_as_served(browser, live_server, site_cli, site_database, tmp_path, screenshots):
    site_cli("user", "create", "--role", "organiser", "--email", ORGANISER[1], "--username", ORGANISER[0],
             "--password", PASSWORD)
    site_cli("campaign", "import", campaign_folder(tmp_path), "--organiser", ORGANISER[0])
    contexts = [browser.new_context(viewport=DESKTOP, extra_http_headers={"X-Forwarded-For": f"10.28.0.{n}"})
                for n in range(1 + len(VOLUNTEERS))]
    try:
        dash, *volunteers = (context.new_page() for context in contexts)
        # The lifecycle: a draft, not offered "Open" before its commitment; the end
        # (about two minutes away) and the commitment, naming a beacon 5 s after
        # it; then open.
        log_in(dash, live_server, ORGANISER[1])
        dash.goto(f"{live_server}/organiser/c/{SLUG}/")
        expect(dash.locator(".lifecycle")).to_have_attribute("data-stage", "draft")
        dash.locator("#section-raffle > summary").click()  # folded by the organiser...
        expect(dash.locator("#section-raffle")).not_to_have_attribute("open", "")
        dash.locator(".lifecycle a[href='#section-raffle']").click()  # ...and unfolded by the next step's link
        expect(dash.locator("#section-raffle")).to_have_attribute("open", "")
        # Not offered before the commitment (a posted "open" is refused: tests/test_lifecycle.py).
        expect(unfold(dash, "Campaign").locator("[name=status] option[value=open]")).to_have_count(0)
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        ends_at = (now + timedelta(seconds=160)).replace(second=0, microsecond=0)
        beacon_at = ends_at + timedelta(seconds=5)
        seed = set_end_and_commit(dash, live_server, SLUG, ends_at, "the e2e beacon, round 1", beacon_at)
        dash.goto(f"{live_server}/organiser/c/{SLUG}/")
        expect(dash.locator(".lifecycle")).to_have_attribute("data-stage", "ready")
        open_campaign(dash, live_server, SLUG)
        for page, name in zip(volunteers, VOLUNTEERS):
            site_cli("user", "create", "--role", "volunteer", "--email", f"{name}@example.org", "--username", name,
                     "--password", PASSWORD)
            log_in(page, live_server, f"{name}@example.org")
            page.goto(f"{live_server}/c/{SLUG}/join")
            page.locator("[name=source_level]").select_option("B1-B2")
            page.locator("[name=target_level]").select_option("C1-C2")
            page.locator("[name=consent]").check()
            page.locator("main form button[type=submit]").click()
            expect(page).to_have_url(re.compile(rf"/c/{SLUG}/instructions$"))

        owners = give_tickets(site_database)

        # Before the close: a void is possible, and public with its time.
        name, participation = owners[1]
        dash.goto(f"{live_server}/organiser/c/{SLUG}/volunteer/{participation}")
        dash.locator("details[data-fold=tickets] > summary").click()  # the list folds (issue 31)
        dash.locator("form[action$='/ticket/1/void'] button[type=submit]").click()
        said(dash, "info", "Ticket 1 is void.")
        raffle_page = volunteers[1]
        raffle_page.goto(f"{live_server}/c/{SLUG}/raffle")
        expect(raffle_page.locator("q.beacon")).to_have_text("the e2e beacon, round 1")
        expect(raffle_page.locator("#voids tbody tr")).to_have_count(1)
        expect(raffle_page.locator("#voids tbody tr td").first).to_have_text("1")

        wait = (ends_at - datetime.now(timezone.utc).replace(tzinfo=None)).total_seconds() + 1
        time.sleep(max(0.0, wait))

        # After the close: no void, no re-opening, and the list a volunteer saves is the one drawn.
        name, participation = owners[2]
        dash.goto(f"{live_server}/organiser/c/{SLUG}/volunteer/{participation}")
        # A void would be refused (tests/test_raffle.py posts one): the page offers none and says why.
        expect(dash.locator("#tickets tr[data-ticket='2']")).to_contain_text("valid")
        expect(dash.locator("form[action*='/void']")).to_have_count(0)
        expect(dash.locator(".void-refused")).to_have_text(
            "The campaign has closed: its tickets can no longer be voided.")
        # The dashboard offers no form that can no longer succeed (the refusal itself: tests/test_lifecycle.py).
        dash.goto(f"{live_server}/organiser/c/{SLUG}/")
        expect(dash.locator(".lifecycle")).to_have_attribute("data-stage", "closed")
        expect(unfold(dash, "Campaign")).to_contain_text("its status and dates cannot change any more")
        expect(dash.locator("form[action$='/status']")).to_have_count(0)
        expect(dash.locator("form[action$='/raffle/commit']")).to_have_count(0)
        raffle_page.goto(f"{live_server}/c/{SLUG}/raffle")
        with raffle_page.expect_download() as download:
            raffle_page.locator(f"a[href$='/c/{SLUG}/raffle/tickets.csv']").click()
        saved = str(tmp_path / "tickets.csv")
        download.value.save_as(saved)
        with open(saved, encoding="utf-8") as handle:
            assert [line.split(",")[0] for line in handle.read().splitlines()[1:]] == ["2", "3", "4", "5", "6"]

        time.sleep(max(0.0, (beacon_at - datetime.now(timezone.utc).replace(tzinfo=None)).total_seconds() + 1))
        dash.goto(f"{live_server}/organiser/c/{SLUG}/")
        unfold(dash, "Raffle")
        dash.locator("form[action$='/raffle/draw'] [name=seed]").fill(seed)
        dash.locator("form[action$='/raffle/draw'] [name=beacon]").fill(BEACON)
        dash.locator("form[action$='/raffle/draw'] [name=prizes]").fill("2")
        dash.locator("form[action$='/raffle/draw'] button[type=submit]").click()
        said(dash, "info", "The raffle was drawn.")

        # The public page after the draw: the beacon, the public void, the winners; on a phone and a desktop.
        raffle_page.goto(f"{live_server}/c/{SLUG}/raffle")
        # The volunteer, logged in, sees their own numbers and whether they were in the draw.
        expect(raffle_page.locator("#my-tickets")).to_contain_text("raffle number")
        expect(raffle_page.locator("#my-status")).to_contain_text("in the draw")
        for name, size in (("phone", PHONE), ("desktop", DESKTOP)):
            raffle_page.set_viewport_size(size)
            no_sideways_scrolling(raffle_page, size["width"])
            raffle_page.screenshot(path=f"{screenshots}/raffle-public-{name}.png", full_page=True)

        record = raffle_page.request.get(f"{live_server}/c/{SLUG}/raffle.json")
        assert record.ok and record.json()["draw"]["beacon_value"] == BEACON
        draw = str(tmp_path / "raffle.json")
        with open(draw, "w", encoding="utf-8") as handle:
            handle.write(record.text())
        good = verify(draw, saved, BEACON)
        assert good.returncode == 0 and "the draw checks out" in good.stdout, good.stdout + good.stderr
        with open(saved, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
        fewer = str(tmp_path / "fewer.csv")
        with open(fewer, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines[:-1]) + "\n")
        out = verify(draw, fewer, BEACON)
        assert out.returncode == 1 and "ticket list: FAILS" in out.stdout, out.stdout
        out = verify(draw, saved, BEACON.replace("42", "43"))
        assert out.returncode == 1 and "beacon value: FAILS" in out.stdout, out.stdout
    finally:
        for context in contexts:
            context.close()
