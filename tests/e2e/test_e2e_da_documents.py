"""A Direct Assessment campaign with documents on the site as ``make run``
serves it (issue 33, item 3): a volunteer on a phone scores a document's
sentences in order, and above each the document's earlier sentences are
shown, redrawn by static/js/document.js as the page moves on without a
reload; what the page showed is what the database served."""
import re

from playwright.sync_api import expect

from e2e.i18n_pages import PHONE, new_context, register, start_judging
from e2e.pages import no_sideways_scrolling
from e2e.test_e2e_esa_organiser import rows
from helpers import QUIET_SIGNS, add_documents, write_campaign
from scripts.bench.harness import opening_args

SLUG = "e2e-da-documents"
DOCUMENTS = ["news\td1"] * 3 + ["social\td2"] * 3 + ["news\td3"] * 3


def test_a_document_is_scored_in_order_with_its_earlier_sentences_shown(browser, live_server, site_cli,
                                                                       site_database, tmp_path, screenshots):
    folder = write_campaign(str(tmp_path / "da"), sentences=len(DOCUMENTS), systems=("A", "B"), protocol="da",
                            slug=SLUG, **(QUIET_SIGNS | {"judgments_per_pair": 1}))
    site_cli("campaign", "import", add_documents(folder, DOCUMENTS), *opening_args())
    context = new_context(browser, "10.7.44.1", viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    shown = []
    try:
        register(page, live_server, SLUG, "da.reader")
        start_judging(page, SLUG)
        for n in range(6):
            source = page.locator("#text-source").inner_text()
            earlier = page.locator("#doc-previous li .source").evaluate_all("els => els.map(e => e.textContent.trim())")
            if earlier:
                expect(page.locator("#doc-context")).to_be_visible()
                if not page.locator("#doc-context").get_attribute("open"):
                    page.locator("#doc-context summary").tap()
                    page.screenshot(path=f"{screenshots}/da-document-phone.png", full_page=True)
                    no_sideways_scrolling(page)
            else:
                expect(page.locator("#doc-context")).to_be_hidden()
            shown.append((source, earlier))
            page.locator("#score-number").evaluate("(el, v) => { el.value = v; }", str(40 + 5 * n))
            page.wait_for_timeout(300)
            before = page.locator("input[name=token]").input_value()
            page.locator("#next").tap()
            expect(page.locator("input[name=token]")).not_to_have_value(before)
    finally:
        context.close()
    served = rows(site_database,
                  "SELECT sentences.number, items.qc_kind FROM items "
                  "JOIN participations ON participations.id = items.participation_id "
                  "JOIN users ON users.id = participations.user_id JOIN sentences ON sentences.id = items.sentence_id "
                  "WHERE users.username = 'da.reader' ORDER BY items.position")
    assert len(served) >= 6
    tests = []
    for (number, kind), (source, earlier) in zip(served, shown):
        # The source shown is the one served, and above it its document's earlier sentences.
        assert re.fullmatch(rf"Source sentence number {number}\.", source.strip())
        first = (number - 1) // 3 * 3 + 1
        assert earlier == [f"Source sentence number {n}." for n in range(first, number)]
        if kind is None:
            tests.append(number)
    # The test items: each document's sentences in order, the documents whole.
    assert tests and all(b == a + 1 for a, b in zip(tests, tests[1:]) if (b - 1) // 3 == (a - 1) // 3)
    assert all(n % 3 == 1 for a, n in zip([None] + tests, tests) if a is None or (n - 1) // 3 != (a - 1) // 3)
