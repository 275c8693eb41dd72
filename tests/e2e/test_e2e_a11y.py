"""WCAG 2.1 AA: axe-core (npm, served from node_modules/) on every page.

axe-core is injected into each page by Playwright (the site's Content
Security Policy allows only its own scripts, so the test's browser context
bypasses it for the injected checker alone). A serious or critical
violation fails the test; lesser ones are printed.
"""
import os
import re

import pytest
from playwright.sync_api import expect

from e2e.i18n_pages import (
    AXE, DESKTOP, PASSWORD, PHONE, answer_for, controls, fill_registration, judge_by_clicking, log_in, new_context,
    register, run_axe, start_judging,
)
from scripts.bench.harness import opening_args

ADDRESS = "10.6.1.1"
VOLUNTEER = "axe.volunteer"
ORGANISER = ("axe.organiser", "axe.organiser@example.org")


def _tiny_campaign(folder):
    """Two sentences and two systems: a volunteer reaches the end quickly."""
    os.makedirs(os.path.join(folder, "systems"), exist_ok=True)
    files = {
        "source.txt": "The museum opens at ten.\nThe shop closes at six.\n",
        "systems/a.txt": "Museoa hamarretan irekitzen da.\nDenda seietan ixten da.\n",
        "systems/b.txt": "Museoa hamar irekitzen.\nDenda sei ixten.\n",
        "controls.tsv": "source\tbetter\tworse\n"
        "It is raining today.\tGaur euria ari du.\tGaur ez du eguzkirik egiten atzo.\n"
        "The cat sleeps.\tKatua lo dago.\tTxakurra jaten ari da.\n"
        "We eat bread.\tOgia jaten dugu.\tEz dugu ura edaten.\n",
        "campaign.toml": 'slug = "axe-tiny"\nname = "Tiny campaign"\nsource_language = "en"\n'
        'target_language = "eu"\nsource = "source.txt"\ncontrols = "controls.tsv"\n'
        '[systems]\nA = "systems/a.txt"\nB = "systems/b.txt"\n'
        '[settings]\ncontrol_source = "imported"\n',  # two sentences: none to spare for controls
    }
    for name, text in files.items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
            handle.write(text)
    return folder


def _check(page, name, found):
    violations = run_axe(page)
    for violation in violations:
        print(f"{name}: {violation['impact']}: {violation['id']}: {violation['help']}: {violation['nodes']}")
    found.extend((name, v) for v in violations if v["impact"] in ("serious", "critical"))


def test_axe_on_every_page(browser, live_server, site_cli, tmp_path):
    if not os.path.exists(AXE):
        message = "node_modules/axe-core is missing (make axe installs it)"
        if os.environ.get("CI"):
            pytest.fail(message)  # CI runs `make test`, which installs it: never skip there
        pytest.skip(message)
    site_cli("campaign", "import", _tiny_campaign(str(tmp_path / "tiny")), *opening_args())
    # An admin: every campaign, the accounts, audit and organisers pages.
    site_cli("user", "create", "--role", "admin", "--email", ORGANISER[1], "--username", ORGANISER[0],
             "--password", PASSWORD)
    context = new_context(browser, ADDRESS, bypass_csp=True)
    page = context.new_page()
    found = []
    try:
        for url in ("/", "/c/demo-en-ur/", "/c/demo-en-ur/instructions", "/login", "/reset", "/c/demo-en-ur/raffle"):
            page.goto(live_server + url)
            _check(page, url, found)
        # The registration form, empty and then with its error messages.
        page.goto(f"{live_server}/c/demo-en-ur/register")
        _check(page, "register", found)
        page.locator("main form button[type=submit]").click()
        expect(page.locator("main .error").first).to_be_visible()
        _check(page, "register with errors", found)

        register(page, live_server, "demo-en-ur", VOLUNTEER)
        _check(page, "instructions (volunteer)", found)
        page.goto(f"{live_server}/c/demo-en-ur/welcome")
        _check(page, "welcome", found)
        page.goto(f"{live_server}/c/demo-en-ur/instructions")
        start_judging(page, "demo-en-ur")
        _check(page, "evaluate (phone)", found)
        known = controls("demo-en-ur")
        for number in range(1, 4):
            judge_by_clicking(page, known, number)
        page.locator("label.answer-left").click()
        _check(page, "evaluate after answers, one chosen (phone)", found)
        page.set_viewport_size(DESKTOP)
        _check(page, "evaluate (desktop)", found)
        # Keyboard only: every control Tab reaches shows where the focus is.
        page.locator("#question").focus()
        reached = set()
        for _ in range(20):
            page.keyboard.press("Tab")
            focused = page.evaluate(
                """() => { const e = document.activeElement; const s = getComputedStyle(e);
                    return {what: e.tagName + (e.id ? "#" + e.id : "") + (e.name ? "[" + e.name + "=" + e.value + "]" : ""),
                            outline: s.outlineStyle !== "none" && parseFloat(s.outlineWidth) >= 2}; }""")
            if focused["what"] == "BODY":
                break  # past the last control
            reached.add(focused["what"])
            assert focused["outline"], f"no visible focus on {focused['what']}"
        assert {"INPUT[choice=left]", "BUTTON#next"} <= reached, reached
        page.set_viewport_size(PHONE)

        # The end of a campaign: the tiny one, judged to the last sentence.
        page.goto(f"{live_server}/c/axe-tiny/join")
        join = page.locator("main form")
        join.locator("[name=source_level]").select_option("B1-B2")
        join.locator("[name=target_level]").select_option("C1-C2")
        join.locator("[name=consent]").check()
        join.locator("button[type=submit]").click()
        page.goto(f"{live_server}/c/axe-tiny/evaluate")
        tiny = {
            ("It is raining today.", "Gaur euria ari du.", "Gaur ez du eguzkirik egiten atzo."),
            ("The cat sleeps.", "Katua lo dago.", "Txakurra jaten ari da."),
            ("We eat bread.", "Ogia jaten dugu.", "Ez dugu ura edaten."),
        }
        for number in range(1, 10):
            if page.locator("#task").count() == 0:
                break
            choice, _ = answer_for(page, tiny, number)
            page.locator(f"label.answer-{choice}").click()
            page.locator("#next").click()
            page.wait_for_load_state()
            page.wait_for_function("() => !document.getElementById('next') || !document.getElementById('next').disabled")
        expect(page.locator("#task")).to_have_count(0)
        expect(page.locator("main h1")).to_be_visible()
        _check(page, "done", found)

        # Dismissal: a second volunteer fails the first control of the Basque demo; the site
        # says so at the first check, item 10, not at once (issue 28: the answer does not tell
        # which item was a control).
        context.clear_cookies()
        page.goto(f"{live_server}/c/demo-en-eu/register")
        fill_registration(page, "axe.dismissed")
        page.locator("main form button[type=submit]").click()
        expect(page).to_have_url(re.compile(r"/instructions$"))
        start_judging(page, "demo-en-eu")
        known = controls("demo-en-eu")
        assert judge_by_clicking(page, known, 1, fail=True), "the first item is a control"
        for number in range(2, 10):
            judge_by_clicking(page, known, number)
        expect(page.locator("#task")).to_be_visible()  # still judging before the check
        choice, _control = answer_for(page, known, 10)
        page.locator(f"label.answer-{choice}").click()
        page.locator("#next").click()
        expect(page.locator("#task")).to_have_count(0)
        _check(page, "dismissed", found)

        # Organisers' pages.
        context.clear_cookies()
        log_in(page, live_server, ORGANISER[1])
        page.set_viewport_size(DESKTOP)
        for url in ("/organiser/", "/organiser/c/demo-en-ur/", "/organiser/accounts", "/organiser/audit",
                    "/organiser/c/demo-en-ur/suspicious", "/organiser/c/demo-en-ur/organisers"):
            response = page.goto(live_server + url)
            assert response.ok, url
            _check(page, url, found)
        page.set_viewport_size(PHONE)
        page.goto(f"{live_server}/organiser/c/demo-en-ur/")
        _check(page, "dashboard (phone)", found)
    finally:
        context.close()
    assert not found, "\n".join(f"{name}: {v['impact']} {v['id']}: {v['help']}: {v['nodes']}" for name, v in found)
