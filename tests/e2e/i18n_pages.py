"""Page helpers that work in any interface language and on either demo.

Fields are found by their names, not their (translated) labels. Each test
gives its browser its own client address (X-Forwarded-For: the e2e site runs
as behind one proxy), so the site's 5-registrations-a-minute limit counts
its volunteers apart from the other tests'.
"""
import csv
import os
import re

from playwright.sync_api import expect

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMOS = {"demo-en-eu": "en-eu", "demo-en-ur": "en-ur"}
PASSWORD = "correct horse battery 9"
PHONE = {"width": 360, "height": 740}
DESKTOP = {"width": 1280, "height": 800}
AXE = os.path.join(ROOT, "node_modules", "axe-core", "axe.min.js")


def new_context(browser, address, viewport=PHONE, locale="en-GB", **options):
    context = browser.new_context(
        viewport=viewport, locale=locale, extra_http_headers={"X-Forwarded-For": address}, **options
    )
    context.set_default_timeout(10_000)
    return context


class KnownControls(frozenset):
    """A demo's pool, {(source, better, worse)}; ``in`` holds too for a
    generated control (issue 28), as a reader tells it: the better side is a
    system's translation of the source, the worse is not."""

    def __new__(cls, pool, outputs):
        made = super().__new__(cls, pool)
        made.outputs = outputs  # source -> the systems' translations
        return made

    def __contains__(self, triple):
        if frozenset.__contains__(self, triple):
            return True
        source, better, worse = triple
        shown = self.outputs.get(source, ())
        return better in shown and worse not in shown


def controls(slug):
    """The known controls of a demo campaign (``KnownControls``)."""
    folder = os.path.join(ROOT, "app", "demo", DEMOS[slug])
    with open(os.path.join(folder, "controls.tsv"), newline="", encoding="utf-8") as handle:
        rows = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        pool = {(row["source"].strip(), row["better"].strip(), row["worse"].strip()) for row in rows}
    with open(os.path.join(folder, "source.txt"), encoding="utf-8") as handle:
        sources = [line.strip() for line in handle]
    outputs = {source: set() for source in sources}
    for name in os.listdir(os.path.join(folder, "systems")):
        with open(os.path.join(folder, "systems", name), encoding="utf-8") as handle:
            for source, line in zip(sources, handle):
                outputs[source].add(line.strip())
    return KnownControls(pool, outputs)


def choose_language(page, code):
    """Use the switcher in the page header."""
    page.locator("#lang-select").select_option(code)
    page.locator("form.language button[type=submit]").click()
    expect(page.locator("html")).to_have_attribute("lang", code)


def register(page, base_url, slug, username):
    """From the campaign page to the instructions, in whatever language is shown."""
    page.goto(f"{base_url}/c/{slug}/")
    page.locator(f"main a[href$='/c/{slug}/register']").first.click()
    expect(page).to_have_url(re.compile(rf"/c/{slug}/register$"))
    assert scroll_width(page) <= page.viewport_size["width"], "the registration page scrolls sideways"
    fill_registration(page, username)
    page.locator("main form button[type=submit]").click()
    expect(page).to_have_url(re.compile(rf"/c/{slug}/instructions$"))
    expect(page.locator("header.site")).to_contain_text(username)


def fill_registration(page, username):
    form = page.locator("main form")
    form.locator("[name=username]").fill(username)
    form.locator("[name=email]").fill(f"{username}@example.org")
    form.locator("[name=password]").fill(PASSWORD)
    form.locator("[name=password2]").fill(PASSWORD)
    form.locator("[name=age_group]").select_option("26-35")
    form.locator("[name=studies_level]").select_option("university")
    form.locator("[name=studies_field]").select_option("language")
    form.locator("[name=source_level]").select_option("B1-B2")
    form.locator("[name=target_level]").select_option("C1-C2")
    form.locator("[name=consent]").check()


def log_in(page, base_url, email):
    page.goto(f"{base_url}/login")
    form = page.locator("main form")
    form.locator("[name=email]").fill(email)
    form.locator("[name=password]").fill(PASSWORD)
    form.locator("button[type=submit]").click()
    expect(page.locator("header.site form[action$='/logout']")).to_have_count(1)


def start_judging(page, slug):
    page.locator(f"main a[href$='/c/{slug}/evaluate']").click()
    expect(page).to_have_url(re.compile(rf"/c/{slug}/evaluate$"))
    expect(page.locator("#task")).to_be_visible()


def item(page):
    return tuple(page.locator(f"#text-{part}").inner_text().strip() for part in ("source", "left", "right"))


def answer_for(page, known_controls, number, fail=False):
    """'left', 'right' or 'equal': a control's better translation (or its
    worse one when fail), else alternating. Second value: was it a control."""
    source, left, right = item(page)
    for good, bad in (("left", "right"), ("right", "left")):
        if (source, *((left, right) if good == "left" else (right, left))) in known_controls:
            return (bad if fail else good), True
    return ("left", "right", "equal")[number % 3], False


def judge_by_clicking(page, known_controls, number, fail=False):
    """Click an answer and Next; wait for the next item (or another page)."""
    choice, control = answer_for(page, known_controls, number, fail)
    before = page.locator("input[name=token]").input_value()
    page.locator(f"label.answer-{choice}").click()
    expect(page.locator(f"input[name=choice][value={choice}]")).to_be_checked()
    page.locator("#next").click()
    expect(page.locator("input[name=token]")).not_to_have_value(before)
    return control


def run_axe(page):
    """axe-core's WCAG 2.0/2.1 A and AA rules on the page as it is now."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=AXE)
    return page.evaluate(
        """async () => {
            const result = await axe.run(document, {
                runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]},
                resultTypes: ["violations"],
            });
            return result.violations.map(v => ({
                id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.slice(0, 4).map(n => n.target.join(" ") + ": " + (n.failureSummary || "")),
            }));
        }"""
    )


def scroll_width(page):
    return page.evaluate("document.documentElement.scrollWidth")
