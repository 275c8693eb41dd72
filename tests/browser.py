"""Headless Chromium for every test that needs one: Debian's ``chromium``
driven by Playwright (which never downloads a browser here). One browser for
the whole session: Playwright's sync API allows one running instance per
thread, so the end-to-end and the fault tests share it (tests/conftest.py).
"""
import os

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-quic",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing (make chromium installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()
