"""A DA campaign's dashboard on a 360x740 phone, served as ``make run``
serves it, in headless Chromium: the "Scores per system" table fits the
phone's width (each system a card of labelled lines, "Collected / target"
included) and stays a table on a desktop. The site and its campaigns are
test_e2e_organiser_phone's (its ``site`` fixture: a site of this module's own)."""
from playwright.sync_api import expect

from e2e.i18n_pages import DESKTOP, PHONE
from e2e.test_e2e_organiser_phone import open_folds, organiser_page, sideways, site  # noqa: F401 (a fixture)


def test_the_da_scores_per_system_table_fits_a_phone(browser, site, screenshots):  # noqa: F811
    base_url, _ids = site
    with organiser_page(browser, base_url, "10.61.0.9", PHONE) as page:
        page.goto(f"{base_url}/organiser/c/ph-da/")
        open_folds(page)
        table = page.locator("#da-systems")
        expect(table.locator("tbody tr")).to_have_count(3)  # the three systems of write_campaign
        table.scroll_into_view_if_needed()
        page.screenshot(path=f"{screenshots}/organiser-da-systems-phone.png")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        assert page.evaluate("document.querySelector('#da-systems').scrollWidth") <= PHONE["width"]
        # Its scrolling region does not scroll (other tables of the dashboard may, in theirs).
        region = page.evaluate("""() => { const box = document.querySelector('#da-systems').closest('.table-scroll');
                                        return [box.scrollWidth, box.clientWidth]; }""")
        assert region[0] <= region[1] + 1, region
        assert not [wide for wide in sideways(page) if "Scores per system" in wide or wide.startswith("page")]
        # Every cell, "Collected / target" the last, within the screen and labelled.
        collected = table.locator("tbody tr").first.locator("td").last
        box = collected.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
        label = page.evaluate("(cell) => getComputedStyle(cell, '::before').content", collected.element_handle())
        assert label == '"Collected / target: "'
        # A desktop keeps the table: the cells of a row side by side.
        page.set_viewport_size(DESKTOP)
        expect(table.locator("thead")).to_be_visible()
        cells = table.locator("tbody tr").first.locator("td")
        assert cells.nth(0).bounding_box()["y"] == cells.nth(4).bounding_box()["y"]
