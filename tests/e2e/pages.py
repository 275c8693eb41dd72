"""What the end-to-end tests do on Bozka's pages, written once."""
import os
import re

from playwright.sync_api import expect

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SLUG = "demo-en-eu"
PASSWORD = "correct horse battery 9"
PHONE = {"width": 360, "height": 740}
DESKTOP = {"width": 1280, "height": 800}
FIRST, SECOND = "The first translation", "The second translation"


def read_controls():
    """The demo campaign's known controls: its pool and, as a reader tells
    them, its generated controls (``i18n_pages.KnownControls``)."""
    from e2e.i18n_pages import controls

    return controls(SLUG)


def register(page, base_url, username):
    """Register through the pages, from the campaign page to the instructions.

    The site allows 5 registrations a minute from one address (and the whole
    e2e run shares one server): the suite registers 4 volunteers in all.
    """
    page.goto(f"{base_url}/c/{SLUG}/")
    page.get_by_role("link", name="Register", exact=True).click()
    expect(page).to_have_url(re.compile(rf"/c/{SLUG}/register$"))
    page.get_by_label("Public username").fill(username)
    page.get_by_label("Email", exact=True).fill(f"{username}@example.org")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Repeat the password").fill(PASSWORD)
    page.get_by_label("Age group").select_option("26-35")
    page.get_by_label("Level of studies").select_option("university")
    page.get_by_label("Field of studies or work").select_option("language")
    page.get_by_label("Your level of English").select_option("B1-B2")
    page.get_by_label("Your level of Basque").select_option("C1-C2")
    page.get_by_label(re.compile(r"^I agree that my answers")).check()
    page.get_by_role("button", name="Register and start").click()
    expect(page).to_have_url(re.compile(rf"/c/{SLUG}/instructions$"))
    expect(page.locator("header.site")).to_contain_text(username)


def open_evaluation(page):
    """From the instructions to the first sentence."""
    page.get_by_role("link", name="Show me the sentences").click()
    expect(page).to_have_url(re.compile(rf"/c/{SLUG}/evaluate$"))
    expect(page.get_by_role("heading", name="Which translation is better?")).to_be_visible()


def current_item(page):
    return tuple(
        page.locator(selector).inner_text().strip()
        for selector in ("#text-source", "#text-left", "#text-right")
    )


def token(page):
    return page.locator("input[name=token]").input_value()


def choose(page, controls, number):
    """Check an answer: the better translation of a control, else alternate.

    Returns True when the item was a control.
    """
    source, left, right = current_item(page)
    assert source and left and right
    if (source, left, right) in controls:
        answer, control = FIRST, True
    elif (source, right, left) in controls:
        answer, control = SECOND, True
    else:
        answer, control = (FIRST, SECOND)[number % 2], False
    page.get_by_label(answer).check()
    expect(page.get_by_label(answer)).to_be_checked()
    return control


def judged_text(number):
    return f"You have judged {number} {'sentence' if number == 1 else 'sentences'}."


def no_sideways_scrolling(page, width=PHONE["width"]):
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= width, f"{page.url} is {scroll_width} px wide on a {width} px screen"


def number_in(locator):
    """The integer shown by a locator, whatever the digit grouping."""
    return int(re.sub(r"\D", "", locator.inner_text()))


def set_end_and_commit(dash, base_url, slug, ends_at, beacon, beacon_at):
    """On the dashboard: the campaign's end, saved, then the raffle's
    commitment naming ``beacon`` published at ``beacon_at``. Returns the
    committed seed hash the dashboard shows."""
    dash.goto(f"{base_url}/organiser/c/{slug}/")
    unfold(dash, "Campaign")
    dash.locator("form[action$='/status'] [name=ends_at]").fill(ends_at.strftime("%Y-%m-%dT%H:%M"))
    dash.locator("form[action$='/status'] button[type=submit]").click()
    expect(dash.locator(".flash-info")).to_be_visible()
    expect(dash.locator(".flash-error")).to_have_count(0)
    unfold(dash, "Raffle")
    commit = dash.locator("form[action$='/raffle/commit']")
    commit.locator("[name=beacon]").fill(beacon)
    commit.locator("[name=beacon_at]").fill(beacon_at.strftime("%Y-%m-%dT%H:%M:%S"))
    commit.locator("button[type=submit]").click()
    seed = dash.locator("code.hash").first.inner_text().strip()
    assert re.fullmatch(r"[0-9a-f]{64}", seed)
    return seed


def open_campaign(dash, base_url, slug):
    """On the dashboard: the campaign's status set to "Open" and saved
    (after its commitment: lifecycle.change_refused)."""
    dash.goto(f"{base_url}/organiser/c/{slug}/")
    unfold(dash, "Campaign")
    dash.locator("form[action$='/status'] [name=status]").select_option("open")
    dash.locator("form[action$='/status'] button[type=submit]").click()
    expect(dash.locator(".flash-info")).to_be_visible()
    expect(dash.locator(".flash-error")).to_have_count(0)
    expect(dash.locator(".lifecycle")).to_have_attribute("data-stage", "open")


def unfold(page, title):
    """Open a dashboard section (a <details>) by its heading, if folded."""
    fold = page.locator("details.fold", has=page.locator("summary h2", has_text=re.compile(rf"^{re.escape(title)}$")))
    if fold.get_attribute("open") is None:
        fold.locator("summary").click()
    expect(fold).to_have_attribute("open", "")
    return fold


def tables_cut_off(page):
    """Every table of the page whose last column cannot be seen inside its
    scroll box, scrolled to its end (or that has no scroll box, or whose box
    leaves the screen): a list of their names, empty when all is well.
    Only the tables of open sections are measured; less than a pixel is
    rounding (the scroll offset is whole pixels, the table's width not)."""
    return page.evaluate("""() => {
      const bad = [];
      for (const table of document.querySelectorAll("main table")) {
        if (!table.getClientRects().length) continue;  // in a folded section
        const box = table.closest(".table-scroll");
        const name = box ? box.getAttribute("aria-label") : (table.caption || table).textContent.slice(0, 40);
        if (!box) { bad.push(name + ": no scroll box"); continue; }
        box.scrollLeft = getComputedStyle(box).direction === "rtl" ? -box.scrollWidth : box.scrollWidth;
        const b = box.getBoundingClientRect();
        if (b.left < 0 || b.right > innerWidth + 1) bad.push(name + ": the box leaves the screen");
        // A table stacked as cards on a phone has no last column: its box must not scroll instead.
        if (getComputedStyle(table).display === "block") {
          if (box.scrollWidth > box.clientWidth + 1) bad.push(name + ": its cards are wider than the box");
          continue;
        }
        for (const row of table.rows) {
          const c = row.cells[row.cells.length - 1].getBoundingClientRect();
          if (c.width === 0 || c.left < b.left - 1 || c.right > b.right + 1) { bad.push(name + ": last column cut off"); break; }
        }
        box.scrollLeft = 0;
      }
      return bad;
    }""")


def rate_chart(page):
    """What Chart.js drew for the answers per minute (through its API)."""
    return page.evaluate("""() => {
      const chart = window.Chart && Chart.getChart(document.getElementById("rate-chart"));
      if (!chart) return null;
      const x = chart.scales.x.options.title, y = chart.scales.y.options.title;
      return {
        x: x.display ? x.text : null, y: y.display ? y.text : null,
        legend: chart.legend.options.display && chart.legend.height > 0 ? chart.legend.legendItems.map(i => i.text) : [],
        labels: chart.data.labels, values: chart.data.datasets[0].data,
        width: chart.width, height: chart.height,
      };
    }""")


def phone_dashboard(dash):
    """On a 360x740 screen: nothing scrolls sideways but the tables, each in
    its own box where its last column can be reached; the sections fold and
    unfold (and stay as left, across visits); the chart fits, with its
    axis titles and legend."""
    assert dash.viewport_size == PHONE
    no_sideways_scrolling(dash)
    assert dash.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    # Fold and unfold a section by its heading; the choice outlives a reload.
    totals = dash.locator("details[data-fold=totals]")
    figures = totals.locator(".figures")
    expect(figures).to_be_visible()
    totals.locator("summary").click()
    expect(figures).to_be_hidden()
    dash.reload()
    expect(figures).to_be_hidden()
    totals.locator("summary").click()
    expect(figures).to_be_visible()
    # Every section open: every table's last column within its box, the page no wider.
    for key in dash.eval_on_selector_all("details.fold:not([open])", "folds => folds.map(f => f.dataset.fold)"):
        fold = dash.locator(f"details[data-fold={key}]")
        fold.locator("summary").click()
        expect(fold).to_have_attribute("open", "")
    assert dash.locator("details.fold:not([open])").count() == 0
    assert dash.locator("main table").count() >= 5
    cut = tables_cut_off(dash)
    assert cut == [], cut
    no_sideways_scrolling(dash)
    chart = rate_chart(dash)
    assert chart["x"] and chart["y"] and chart["legend"] and chart["width"] <= PHONE["width"], chart
    dash.evaluate("window.localStorage.clear()")


def confirm_email(page, read_log, username, timeout=20):
    """Open the confirmation link mailed to ``username``@example.org (with no
    mail server the site logs its mail; ``read_log`` is the ``server_log``
    fixture) in another tab of the same browser, as a volunteer does from
    their mailbox: only confirmed volunteers are ranked."""
    import time

    pattern = re.compile(rf"to {re.escape(username)}@example\.org: .*?\n.*?https?://[^/\s]+(/confirm/\S+)", re.S)
    deadline = time.monotonic() + timeout
    while not (found := pattern.findall(read_log())):
        assert time.monotonic() < deadline, f"no confirmation mail to {username} in the server log"
        time.sleep(0.2)
    tab = page.context.new_page()
    try:
        tab.goto(page.url.split("/c/")[0] + found[-1])
        expect(tab.locator(".flash-info").first).to_be_visible()  # "your email is confirmed", in any language
        expect(tab.locator(".flash-error")).to_have_count(0)
    finally:
        tab.close()
