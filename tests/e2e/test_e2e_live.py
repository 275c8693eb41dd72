"""Two volunteers at once: judging in place and the live ranking over Socket.IO.

Volunteer B keeps the evaluation page open while volunteer A registers and
judges; B's page must follow without a reload. Broadcasts are coalesced to
about one a second, so every live assertion waits a few seconds.
"""
import os
import re
import time

from playwright.sync_api import expect

from e2e.pages import (
    DESKTOP, PHONE, SLUG, choose, confirm_email, judged_text, no_sideways_scrolling, number_in, open_evaluation,
    read_controls, register, token,
)

LIVE = 6_000  # ms: a broadcast interval (1 s) with a generous margin
A_NAME, B_NAME = "itziar.live", "jon.live"


def main_frame_navigations(page):
    """A list that grows whenever the page's main frame navigates."""
    seen = []
    page.on("framenavigated", lambda frame: seen.append(frame.url) if frame == page.main_frame else None)
    return seen


def socket_frames(page):
    """Every Socket.IO frame the page receives over a WebSocket."""
    frames = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(payload)))
    return frames


def wait_for_event(page, frames, name, timeout=LIVE):
    """Wait until a Socket.IO event called ``name`` arrived over the WebSocket."""
    marker = f'["{name}"'
    end = time.monotonic() + timeout / 1000
    while time.monotonic() < end:
        if any(isinstance(frame, str) and marker in frame for frame in frames):
            return
        page.wait_for_timeout(100)  # lets Playwright deliver the frames it holds
    raise AssertionError(f"no {name!r} event over a WebSocket within {timeout} ms; got {frames[:5]}")


def board_numbers(page):
    """The board's figures; ``done`` of ``goal``: what the bar shows (a sequential
    campaign's bar counts the pairs settled, issue 32; else judgments of the target)."""
    by_pairs = page.locator("#progress-bar[data-goal=pairs]").count() > 0
    done, goal = ("settled", "pairs") if by_pairs else ("collected", "target")
    return {
        "collected": number_in(page.locator("#progress [data-field=collected]")),
        "done": number_in(page.locator(f"#progress [data-field={done}]")),
        "goal": number_in(page.locator(f"#progress [data-field={goal}]")),
        "volunteers": number_in(page.locator("#progress [data-field=volunteers]")),
        "bar": page.evaluate("document.getElementById('progress-bar').value"),
        "bar_max": page.evaluate("document.getElementById('progress-bar').max"),
    }


def test_live_ranking_follows_another_volunteer(browser, live_server, screenshots, server_log):
    controls = read_controls()
    evaluate_url = f"{live_server}/c/{SLUG}/evaluate"
    context_a = browser.new_context(viewport=PHONE, locale="en-GB")
    context_b = browser.new_context(viewport=DESKTOP, locale="en-GB")
    for context in (context_a, context_b):
        context.set_default_timeout(10_000)
    page_a, page_b = context_a.new_page(), context_b.new_page()
    try:
        # B registers first and keeps the evaluation page open from now on.
        register(page_b, live_server, B_NAME)
        confirm_email(page_b, server_log, B_NAME)  # only confirmed volunteers are ranked
        frames_b = socket_frames(page_b)
        open_evaluation(page_b)
        wait_for_event(page_b, frames_b, "me")  # B's socket joined its rooms
        navigations_b = main_frame_navigations(page_b)
        page_b.evaluate("window.__e2e = 'b-never-reloaded'")
        before = board_numbers(page_b)
        assert before["bar"] == before["done"] and before["bar_max"] == before["goal"] > 0
        expect(page_b.locator("[data-field=last]")).to_have_text(B_NAME)

        # A registers: B sees one more volunteer, a last comer not yet named
        # (a name is shown once its email is confirmed, as in the ranking).
        register(page_a, live_server, A_NAME)
        expect(page_b.locator("#progress [data-field=volunteers]")).to_have_text(
            str(before["volunteers"] + 1), timeout=LIVE
        )
        expect(page_b.locator("[data-field=last]")).to_have_text("anonymous", timeout=LIVE)

        confirm_email(page_a, server_log, A_NAME)
        open_evaluation(page_a)
        expect(page_a.locator("#around")).to_contain_text("Judge a sentence to enter the ranking.")
        navigations_a = main_frame_navigations(page_a)
        page_a.evaluate("window.__e2e = 'a-never-reloaded'")

        controls_seen = 0
        for number in range(1, 11):
            previous_token = token(page_a)
            controls_seen += choose(page_a, controls, number)
            # The answer goes by fetch to the JSON API, not by a form submission.
            with page_a.expect_response(
                lambda r: r.url.endswith(f"/c/{SLUG}/api/judgment") and r.request.method == "POST"
            ) as answered:
                page_a.get_by_role("button", name="Next").click()
            assert answered.value.ok, answered.value.status
            assert answered.value.request.resource_type == "fetch"
            expect(page_a.locator(".mine")).to_contain_text(judged_text(number))
            expect(page_a.locator("input[name=token]")).not_to_have_value(previous_token)
            expect(page_a.locator("input[name=choice]:checked")).to_have_count(0)
            expect(page_a.get_by_role("heading", name="Which translation is better?")).to_be_visible()
            # The next item came in place: same document, same address.
            assert page_a.evaluate("window.__e2e") == "a-never-reloaded", f"item {number}: reloaded"
            assert page_a.url == evaluate_url
            notice = page_a.locator("#notices .flash-ticket")
            if number == 1:
                # B sees A enter the ranking (the first items may be controls,
                # which the community count leaves out).
                expect(page_b.locator("#top li", has_text=A_NAME)).to_have_count(1, timeout=LIVE)
                expect(page_b.locator("[data-field=last]")).to_have_text(A_NAME, timeout=LIVE)  # confirmed now
            if number == 10:
                expect(notice).to_contain_text("You won a new raffle number")
                ticket = re.search(r"(\d+)", notice.inner_text()).group(1)
                expect(page_a.locator(".mine strong")).to_have_text(ticket)
            else:
                expect(notice).to_have_count(0)
        assert navigations_a == [], f"A's page navigated: {navigations_a}"
        assert page_a.evaluate("window.__e2e") == "a-never-reloaded"

        # A's own position: A's row, marked as A's, with 10 sentences.
        mine = page_a.locator("#around li.me")
        expect(mine).to_have_count(1, timeout=LIVE)
        expect(mine.locator(".name")).to_have_text(A_NAME)
        expect(mine.locator(".count")).to_have_text("10", timeout=LIVE)
        expect(page_a.locator("#top li.me")).to_have_count(0)  # the public list marks nobody

        # B's page, never reloaded, shows A's ten sentences and the new total.
        expect(page_b.locator("#progress [data-field=collected]")).not_to_have_text(
            str(before["collected"]), timeout=LIVE
        )
        a_on_b = page_b.locator("#top li", has_text=A_NAME)
        expect(a_on_b.locator(".count")).to_have_text("10", timeout=LIVE)
        expect(a_on_b).not_to_have_class(re.compile(r"\bme\b"))
        expect(page_b.locator("#around")).to_contain_text("Judge a sentence to enter the ranking.")
        assert navigations_b == [], f"B's page navigated: {navigations_b}"
        assert page_b.evaluate("window.__e2e") == "b-never-reloaded"
        assert page_b.url == evaluate_url

        # Once the broadcasts settle, the live page says what a fresh one says.
        fresh = context_b.new_page()
        try:
            fresh.goto(evaluate_url)
            truth = board_numbers(fresh)
            fresh_top = fresh.locator("#top li").all_text_contents()
        finally:
            fresh.close()
        # Nobody else judges meanwhile; controls are not community judgments.
        assert truth["collected"] == before["collected"] + 10 - controls_seen, (truth, before, controls_seen)
        assert truth["volunteers"] == before["volunteers"] + 1
        expect(page_b.locator("#progress [data-field=collected]")).to_have_text(
            f"{truth['collected']:,}", timeout=LIVE
        )
        live = board_numbers(page_b)
        assert live == truth, (live, truth)
        # Row by row (the live list is built without whitespace between rows).
        expect(page_b.locator("#top li")).to_have_text(fresh_top)

        # The ranking is pushed over a WebSocket (gunicorn's gevent WebSocket worker).
        assert any(isinstance(f, str) and '["ranking"' in f for f in frames_b)

        # Screenshots of the live page. Phone: task first, board below.
        page_a.evaluate("window.scrollTo(0, 0)")
        no_sideways_scrolling(page_a)
        page_a.screenshot(path=os.path.join(screenshots, "live-evaluate-phone.png"))
        page_a.screenshot(path=os.path.join(screenshots, "live-evaluate-phone-full.png"), full_page=True)
        task, board = page_a.locator("#task").bounding_box(), page_a.locator("aside.board").bounding_box()
        assert board["y"] >= task["y"] + task["height"], (task, board)
        # Desktop: the board stands beside the task, at the top.
        page_b.evaluate("window.scrollTo(0, 0)")
        page_b.screenshot(path=os.path.join(screenshots, "live-evaluate-desktop.png"))
        task, board = page_b.locator("#task").bounding_box(), page_b.locator("aside.board").bounding_box()
        assert board["x"] >= task["x"] + task["width"], (task, board)
        assert abs(board["y"] - task["y"]) < 40, (task, board)
        assert board["y"] + board["height"] <= DESKTOP["height"], "the board does not fit the screen"
        # A desktop-sized A and a phone-sized B, for the review.
        page_a.set_viewport_size(DESKTOP)
        page_a.screenshot(path=os.path.join(screenshots, "live-evaluate-me-desktop.png"))
        page_b.set_viewport_size(PHONE)
        no_sideways_scrolling(page_b)
        page_b.screenshot(path=os.path.join(screenshots, "live-evaluate-other-phone-full.png"), full_page=True)
    finally:
        context_a.close()
        context_b.close()
    log = server_log()
    assert "Traceback" not in log and "broadcast failed" not in log, log[-3000:]
