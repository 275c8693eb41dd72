"""An organiser's pages of a first real campaign on a 360x740 phone and a
desktop, served as ``make run`` serves them, in headless Chromium: the
dashboard's top contributors link to their review pages (and still do after
a live refresh of the panel); the review page of a pairwise and of a DA
volunteer and the raffle winners page fit the phone's width (no page and no
table scrolls sideways); each winner's notify form names its winner and,
once sent, says when and offers "Send again"; the public raffle page says
what was drawn.

The campaigns, judgments and draw are made through the services in a
process of their own on the site's instance (judging by clicking is the
walk's part, tests/e2e/walk.py); everything checked goes through the pages.
"""
import json
import os
import subprocess
import sys
from contextlib import contextmanager

import pytest
from playwright.sync_api import expect

from e2e.conftest import ROOT, served_site
from e2e.i18n_pages import DESKTOP, PHONE, log_in, new_context

PASSWORD = "correct horse battery 9"
ORGANISER = "phone.organiser@example.org"

# Run on the site's own instance: two campaigns (pairwise "ph-pair", DA
# "ph-da") with volunteers who judged, the DA one closed and drawn.
SETUP = r'''
import json, os, random, re, sys
from datetime import timedelta
from sqlalchemy import select
sys.path.insert(0, os.path.join(os.getcwd(), "tests"))
from wsgi import app
from app.extensions import db
from app.models import Participation, Ticket, User, utcnow
from app.services import accounts, organisers, raffle
from app.services.campaign_writer import create_campaign
from app.services.importer import read_campaign
from app.services.raffle_rules import sha256_hex
from da_simulation import honest, join, run
from helpers import QUIET_SIGNS, write_campaign

folder, password, organiser_email = sys.argv[1:4]
out = {}
with app.app_context():
    boss = accounts.create_user(organiser_email, "phone.organiser", password, role="organiser")
    boss.email_confirmed_at = utcnow()
    made = {}
    for slug, protocol in (("ph-pair", "pairwise"), ("ph-da", "da")):
        path = write_campaign(os.path.join(folder, slug), sentences=40, protocol=protocol,
                              reference=protocol == "da", **QUIET_SIGNS)
        toml = os.path.join(path, "campaign.toml")
        with open(toml, encoding="utf-8") as handle:
            text = handle.read()
        text = re.sub(r'^slug = ".*"$', f'slug = "{slug}"', text, count=1, flags=re.M)
        text = re.sub(r'^name = ".*"$', f'name = "Phone check ({protocol})"', text, count=1, flags=re.M)
        with open(toml, "w", encoding="utf-8") as handle:
            handle.write(text)
        campaign = made[slug] = create_campaign(read_campaign(path))
        db.session.commit()
        organisers.give(campaign, boss)
        campaign.ends_at = (utcnow() + timedelta(days=1)).replace(second=0, microsecond=0)
        db.session.commit()
        raffle.commit(campaign, sha256_hex("phone seed"), beacon="drand quicknet, round 4242",
                      beacon_at=campaign.ends_at + timedelta(minutes=5))
        db.session.commit()
        answer = honest(random.Random(1)) if protocol == "da" else (lambda texts, kind=None: "right" if texts[2].startswith("Good") else "left")  # controls right
        ids = []
        for n, name in enumerate(("ane.long.username", "jon", "miren")):
            pid = join(campaign, f"{name}.{protocol}")
            run(campaign, pid, honest(random.Random(n)) if protocol == "da" else answer, limit=24 - 4 * n)
            ids.append(pid)
        out[slug] = ids
    campaign = made["ph-da"]
    record = raffle.commitment(campaign)
    earlier = utcnow() - timedelta(hours=3)
    campaign.ends_at = record.draw_at = utcnow() - timedelta(minutes=2)
    record.beacon_at = campaign.ends_at + timedelta(minutes=1)
    record.committed_at = earlier - timedelta(hours=1)
    for ticket in db.session.scalars(select(Ticket).where(Ticket.campaign_id == campaign.id)):
        ticket.created_at = earlier
    for user in db.session.scalars(select(User).where(User.email_confirmed_at.is_not(None))):
        user.email_confirmed_at = earlier
    db.session.commit()
    raffle.draw(campaign, "phone seed", 2, beacon="beacon value 0xfeed")
    db.session.commit()
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A site of its own (the module closes and draws a campaign) and the participation ids made on it."""
    with served_site(prefix="bozka-e2e-phone-") as (base_url, env, _log):
        folder = str(tmp_path_factory.mktemp("campaigns"))
        done = subprocess.run([sys.executable, "-", folder, PASSWORD, ORGANISER], input=SETUP, cwd=ROOT,
                              env={**env, "PYTHONPATH": ROOT}, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stdout + done.stderr
        yield base_url, json.loads(done.stdout.strip().splitlines()[-1])


def sideways(page):
    """Every part of the page wider than its box: the page itself, and each
    table's scrolling region and card (as "name: scroll width > width")."""
    return page.evaluate("""() => {
        const wide = [];
        const root = document.documentElement;
        if (root.scrollWidth > window.innerWidth) wide.push(`page: ${root.scrollWidth} > ${window.innerWidth}`);
        document.querySelectorAll(".table-scroll, .card").forEach((box, i) => {
            if (box.offsetParent !== null && box.scrollWidth > box.clientWidth + 1)
                wide.push(`${box.className} ${box.getAttribute("aria-label") || i}: ${box.scrollWidth} > ${box.clientWidth}`);
        });
        return wide;
    }""")


def open_folds(page):
    closed = page.locator("details[data-fold]:not([open]) > summary")
    while closed.count():
        closed.first.click()


@contextmanager
def organiser_page(browser, base_url, address, viewport):
    """A page of a browser context of its own (from ``address``, at
    ``viewport``) logged in as the organiser; the context closes after."""
    context = new_context(browser, address, viewport=viewport)
    try:
        page = context.new_page()
        log_in(page, base_url, ORGANISER)
        yield page
    finally:
        context.close()


def fits_with_a_shot(page, shot):
    """No part of the page scrolls sideways; then a screenshot of all of it."""
    assert sideways(page) == []
    page.screenshot(path=shot, full_page=True)


def test_review_and_winners_pages_fit_a_phone(browser, site, screenshots):
    base_url, ids = site
    with organiser_page(browser, base_url, "10.61.0.1", PHONE) as page:
        pages = {"review-pairwise": f"/organiser/c/ph-pair/volunteer/{ids['ph-pair'][0]}",
                 "review-da": f"/organiser/c/ph-da/volunteer/{ids['ph-da'][0]}",
                 "winners": "/organiser/c/ph-da/raffle/winners"}
        for name, path in pages.items():
            for size_name, size in (("phone", PHONE), ("desktop", DESKTOP)):
                page.set_viewport_size(size)
                page.goto(base_url + path)
                open_folds(page)
                page.screenshot(path=f"{screenshots}/organiser-{name}-{size_name}.png", full_page=True)
                if size is PHONE:
                    assert sideways(page) == [], (name, sideways(page))
                    table = page.locator("#judgments, table.winners").first
                    table.scroll_into_view_if_needed()
                    page.screenshot(path=f"{screenshots}/organiser-{name}-phone-table.png")
                    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        # The desktop keeps the tables as tables: a header row, cells side by side.
        page.goto(base_url + pages["review-pairwise"])
        open_folds(page)
        expect(page.locator("#judgments thead")).to_be_visible()
        cells = page.locator("#judgments tbody tr").first.locator("td")
        assert cells.nth(0).bounding_box()["y"] == cells.nth(1).bounding_box()["y"]
        page.set_viewport_size(PHONE)
        # On a phone a row is a card: the cells one under another, each labelled.
        first, second = cells.nth(0).bounding_box(), cells.nth(1).bounding_box()
        assert second["y"] > first["y"]
        label = page.evaluate("(cell) => getComputedStyle(cell, '::before').content",
                              cells.nth(1).element_handle())
        assert label == '"When: "'


def test_the_dashboard_links_each_top_contributor_to_their_review_page(browser, site):
    base_url, ids = site
    with organiser_page(browser, base_url, "10.61.0.2", DESKTOP) as page:
        for slug in ("ph-pair", "ph-da"):
            page.goto(f"{base_url}/organiser/c/{slug}/")
            top = page.locator("#dash-top")
            expect(top.locator("a")).to_have_count(3)
            hrefs = {link.get_attribute("href") for link in top.locator("a").all()}
            assert hrefs == {f"/organiser/c/{slug}/volunteer/{pid}" for pid in ids[slug]}
            # The panel as the live refresh fetches it keeps the links (dashboard.js puts it in place).
            panel = page.request.get(f"{base_url}/organiser/c/{slug}/panel").text()
            for pid in ids[slug]:
                assert f'href="/organiser/c/{slug}/volunteer/{pid}"' in panel
            top.locator("a", has_text="jon").click()
            expect(page).to_have_url(f"{base_url}/organiser/c/{slug}/volunteer/{ids[slug][1]}")
            expect(page.locator("h1")).to_contain_text("jon")


def test_a_sent_notify_form_says_when_and_offers_send_again(browser, site, screenshots):
    base_url, _ids = site
    with organiser_page(browser, base_url, "10.61.0.3", PHONE) as page:
        page.goto(f"{base_url}/organiser/c/ph-da/raffle/winners")
        forms = page.locator("form.notify")
        expect(forms).to_have_count(2)
        for prize in (1, 2):
            form = page.locator(f"#notify-{prize}")
            expect(form.locator("h3")).to_contain_text(f"Prize {prize}: ticket ")
            expect(form.locator(".notify-state")).to_have_text("Not sent yet.")
        name = page.locator("#notify-1 h3 bdi").inner_text()
        expect(page.locator("#notify-1 button")).to_have_text(f"Send the email to the winner of prize 1 ({name})")
        page.locator("#notify-1 button").click()
        expect(page.locator(".flash-info")).to_contain_text("The email to the winner of prize 1 is queued")
        expect(page.locator("#notify-1 .notify-state")).to_contain_text("Sent ")
        expect(page.locator("#notify-1 .notify-state time")).to_have_count(1)
        expect(page.locator("#notify-1 button")).to_have_text(f"Send again to the winner of prize 1 ({name})")
        expect(page.locator("#notify-2 .notify-state")).to_have_text("Not sent yet.")
        fits_with_a_shot(page, f"{screenshots}/organiser-winners-sent-phone.png")

        # The public page after the draw: drawn (not "takes place"), the prizes' tickets.
        page.goto(f"{base_url}/c/ph-da/raffle")
        expect(page.locator("#drawn")).to_contain_text("The raffle was drawn on")
        expect(page.locator("#drawn q.beacon")).to_have_text("drand quicknet, round 4242")
        expect(page.locator("main")).not_to_contain_text("takes place once")
        expect(page.locator("#prizes li")).to_have_count(2)
        expect(page.locator("#prizes li").first).to_contain_text("Prize 1: ticket ")
        fits_with_a_shot(page, f"{screenshots}/raffle-drawn-phone.png")
        page.goto(f"{base_url}/c/ph-pair/raffle")
        expect(page.locator("#draw-time")).to_contain_text("The draw takes place once the campaign has closed")
        expect(page.locator("#who-takes-part")).to_contain_text("control sentences")
        expect(page.locator("#who-takes-part")).not_to_contain_text("quality test")
