"""ESA's quality control on the site as ``make run`` serves it (issue 33,
item 4): a volunteer on a phone annotates the demo until a document of
theirs comes back as a bad-reference document, shown degraded, in order;
the organiser's dashboard counts the pairs and the review page shows them
with the rules' evidence."""
import re

from playwright.sync_api import expect
from e2e.i18n_pages import DESKTOP, PHONE, log_in, new_context, register, start_judging
from e2e.pages import PASSWORD, no_sideways_scrolling, unfold
from e2e.test_e2e_esa_organiser import rows

SLUG = "demo-en-eu-esa"
ORGANISER = ("esa.checker", "esa.checker@example.org")


def test_a_bad_reference_document_comes_back_and_the_organiser_sees_it(browser, live_server, site_cli,
                                                                         site_database, screenshots):
    outputs = {t for (t,) in rows(site_database, "SELECT outputs.text FROM outputs JOIN sentences ON "
                                  "sentences.id = outputs.sentence_id JOIN campaigns ON campaigns.id = "
                                  "sentences.campaign_id WHERE campaigns.slug = :slug", slug=SLUG)}
    context = new_context(browser, "10.7.42.1", viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    shown = []
    try:
        register(page, live_server, SLUG, "esa.checked")
        start_judging(page, SLUG)
        # Three documents of three sentences: the first comes back after the second (before the first ticket).
        for n in range(9):
            # The words shown (esa.js adds direction marks and the [missing] sign).
            words = re.sub("[\u200e\u200f]", "", page.locator("#esa-text").inner_text()).replace("[missing]", "")
            shown.append(" ".join(words.split()))
            degraded = shown[-1] not in {" ".join(t.split()) for t in outputs}
            if n == 6:
                page.screenshot(path=f"{screenshots}/esa-bad-reference-phone.png", full_page=True)
            # Scores that vary, as a careful volunteer's do (the first checks hold one whose scores do not).
            page.locator("#score-number").evaluate("(el, v) => { el.value = v; }", "15" if degraded else str(66 + 3 * n))
            page.wait_for_timeout(1500)  # read as a volunteer would: quicker counts for nothing
            before = page.locator("input[name=token]").input_value()
            page.locator("#next").tap()
            expect(page.locator("input[name=token]")).not_to_have_value(before)
    finally:
        context.close()
    answered = rows(site_database,
                    "SELECT items.position, items.qc_kind, items.score, original.position, outputs.degraded, "
                    "sentences.document, sentences.number FROM items "
                    "JOIN participations ON participations.id = items.participation_id "
                    "JOIN users ON users.id = participations.user_id "
                    "JOIN sentences ON sentences.id = items.sentence_id "
                    "JOIN outputs ON outputs.sentence_id = items.sentence_id AND outputs.system_id = items.left_system_id "
                    "LEFT JOIN items AS original ON original.id = items.original_item_id "
                    "WHERE users.username = 'esa.checked' AND items.answered_at IS NOT NULL ORDER BY items.position")
    checks = [row for row in answered if row[1] == "bad_reference"]
    # Items 7-9: the first document again, in order, each after its original, shown degraded.
    assert [row[0] for row in checks] == [7, 8, 9]
    assert [row[3] for row in checks] == [1, 2, 3] and len({row[5] for row in checks}) == 1
    assert [row[6] for row in checks] == sorted(row[6] for row in checks)
    for position, _kind, score, _original, degraded, _doc, _number in checks:
        assert (score, shown[position - 1]) == (15, " ".join(degraded.split()))
    assert [score for _p, kind, score, *_rest in answered if kind is None] == [66 + 3 * n for n in (0, 1, 2, 3, 4, 5)]
    assert rows(site_database, "SELECT held_at, dismissed_at FROM participations JOIN users ON "
                "users.id = participations.user_id WHERE users.username = 'esa.checked'")[0] == (None, None)

    site_cli("user", "create", "--role", "organiser", "--email", ORGANISER[1], "--username", ORGANISER[0],
             "--password", PASSWORD)
    site_cli("campaign", "organisers", "add", SLUG, ORGANISER[0])
    context = new_context(browser, "10.7.43.1", viewport=DESKTOP)
    page = context.new_page()
    try:
        log_in(page, live_server, ORGANISER[1])
        page.goto(f"{live_server}/organiser/c/{SLUG}/")
        fold = unfold(page, "Quality control")
        expect(fold.locator("[data-figure=bad-references]")).to_have_text("3")
        expect(fold.locator("[data-figure=bad-mean]")).to_have_text("15.0")
        expect(fold.locator("[data-figure=original-mean]")).to_have_text("69.0")  # items 1-3: 66, 69, 72
        participation = rows(site_database, "SELECT participations.id FROM participations JOIN users ON "
                             "users.id = participations.user_id WHERE users.username = 'esa.checked'")[0][0]
        page.goto(f"{live_server}/organiser/c/{SLUG}/volunteer/{participation}")
        expect(page.locator("body")).to_contain_text(re.compile(r"Bad-reference pairs scored: 3"))
        unfold(page, "Annotations (9)")
        seventh = page.locator("#judgments tr[data-position='7']")
        expect(seventh.locator("[data-cell=score]")).to_contain_text("original: 66")
        page.set_viewport_size(PHONE)
        no_sideways_scrolling(page)
        page.screenshot(path=f"{screenshots}/esa-review-checks-phone.png", full_page=True)
    finally:
        context.close()
