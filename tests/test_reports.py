"""Reporting a broken item (issue 22): the item is skipped, never counted,
its slot back in the pool; the report is stored and on the dashboard."""
import re

from sqlalchemy import func, select

from app.extensions import db
from app.models import Item, ItemReport, Participation, Slot
from app.services import reports, rewards
from helpers import register
from test_volunteer_flow import judge_items, _page_item


def _report(client, html, reason="source-broken", text="", slug="test"):
    token, csrf, _left, _right = _page_item(html)
    return client.post(f"/c/{slug}/report", data={"csrf_token": csrf, "item": token, "reason": reason, "text": text})


def _past_first_controls(client):
    """The judging page after the two first controls (which cannot be skipped)."""
    html = client.get("/c/test/evaluate").get_data(as_text=True)
    for _ in range(2):
        html = judge_items(client, html).get_data(as_text=True)
    return html


def test_may_report_allows_one_then_one_per_twenty_answers_never_the_first_controls():
    assert not reports.may_report(0, 0, 1, first_controls=2)
    assert not reports.may_report(0, 1, 2, first_controls=2)
    assert reports.may_report(0, 2, 3, first_controls=2)
    assert not reports.may_report(1, 19, 21, first_controls=2)
    assert reports.may_report(1, 20, 22, first_controls=2)
    assert reports.may_report(0, 0, 1, first_controls=0)  # DA: no public first controls


def test_to_next_ticket_counts_down_to_the_next_raffle_number():
    assert [rewards.to_next_ticket(n, 10) for n in (0, 1, 9, 10, 11)] == [10, 9, 1, 10, 9]


def test_the_judging_page_names_the_campaign_links_the_instructions_and_counts_down(client, make_campaign):
    make_campaign(sentences=20)
    register(client)
    html = client.get("/c/test/evaluate").get_data(as_text=True)
    assert 'class="campaign-name"><bdi lang="en" dir="ltr">Test campaign</bdi><' in html
    assert 'href="/c/test/instructions"' in html
    assert "10 more sentences to your next raffle number." in html
    html = judge_items(client, html).get_data(as_text=True)
    assert "9 more sentences to your next raffle number." in html
    assert "Report a problem with this item" in html


def test_the_judging_api_sends_the_count_down(client, make_campaign):
    from helpers import csrf_token
    from test_judging_api import _answer

    make_campaign(sentences=20)
    register(client)
    headers = {"X-CSRFToken": csrf_token(client, "/c/test/welcome")}
    item = client.get("/c/test/api/item").get_json()["item"]
    for left in range(9, 7, -1):
        data = client.post("/c/test/api/judgment", json=_answer(item), headers=headers).get_json()
        item = data["item"]
        assert f"{left} more sentences to your next raffle number." in data["mine"]


def test_a_report_skips_the_item_frees_its_slot_and_counts_nothing(client, make_campaign):
    make_campaign(sentences=20)
    register(client)
    html = _past_first_controls(client)
    token = _page_item(html)[0]
    item = db.session.scalar(select(Item).where(Item.token == token))
    assert item.slot_id is not None and item.holding  # position 3: a test item
    pending = db.session.get(Slot, item.slot_id).pending
    response = _report(client, html, "wrong-language", "  all in French  ")
    assert response.status_code == 302 and response.headers["Location"].endswith("/c/test/evaluate")
    html = client.get("/c/test/evaluate").get_data(as_text=True)
    assert "the problem is reported to the organisers" in html
    assert _page_item(html)[0] != token  # the next item
    db.session.expire_all()
    item = db.session.get(Item, item.id)
    assert item.skipped_at is not None and item.answered_at is None and not item.holding
    assert db.session.get(Slot, item.slot_id).pending == pending - 1
    participation = db.session.scalar(select(Participation))
    assert participation.items_counted == 2
    report = db.session.scalar(select(ItemReport))
    assert (report.reason, report.text, report.item_id, report.sentence_id) == (
        "wrong-language", "all in French", item.id, item.sentence_id)
    # The skipped item can no longer be answered, nor reported again.
    csrf = _page_item(html)[1]
    client.post("/c/test/evaluate", data={"csrf_token": csrf, "token": token, "choice": "left"})
    client.post("/c/test/report", data={"csrf_token": csrf, "item": token, "reason": "other"})
    db.session.expire_all()
    assert db.session.get(Item, item.id).answered_at is None
    assert db.session.scalar(select(func.count(ItemReport.id))) == 1
    # Answering on goes on from the next item, never back to the skipped one.
    for _ in range(3):
        html = judge_items(client, html).get_data(as_text=True)
    db.session.expire_all()
    assert db.session.get(Item, item.id).answered_at is None
    assert db.session.scalar(select(Participation)).items_counted == 5


def test_reports_are_capped_and_the_first_controls_cannot_be_skipped(client, make_campaign):
    make_campaign(sentences=30)
    register(client)
    html = client.get("/c/test/evaluate").get_data(as_text=True)
    first = _page_item(html)[0]
    html = _report(client, html).headers["Location"] and client.get("/c/test/evaluate").get_data(as_text=True)
    assert "You have reported as many items as you may" in html and _page_item(html)[0] == first
    html = judge_items(client, judge_items(client, html).get_data(as_text=True)).get_data(as_text=True)
    _report(client, html)
    html = client.get("/c/test/evaluate").get_data(as_text=True)
    assert "the problem is reported" in html
    second = _page_item(html)[0]
    _report(client, html)
    html = client.get("/c/test/evaluate").get_data(as_text=True)
    assert "You have reported as many items as you may" in html and _page_item(html)[0] == second
    assert db.session.scalar(select(func.count(ItemReport.id))) == 1


def test_a_report_needs_a_csrf_token_and_a_known_reason(client, make_campaign):
    make_campaign(sentences=20)
    register(client)
    html = _past_first_controls(client)
    token, csrf, _left, _right = _page_item(html)
    assert client.post("/c/test/report", data={"item": token, "reason": "other"}).status_code in (302, 400)
    client.post("/c/test/report", data={"csrf_token": csrf, "item": token, "reason": "nonsense"})
    assert db.session.scalar(select(func.count(ItemReport.id))) == 0
    assert _page_item(client.get("/c/test/evaluate").get_data(as_text=True))[0] == token


def test_a_volunteer_cannot_report_another_volunteers_item(app, client, make_campaign):
    make_campaign(sentences=20)
    register(client)
    theirs = _page_item(_past_first_controls(client))[0]
    other = app.test_client()
    register(other, username="miren", email="miren@example.org")
    html = _past_first_controls(other)
    _report(other, html.replace(_page_item(html)[0], theirs))
    assert db.session.scalar(select(func.count(ItemReport.id))) == 0
    assert db.session.scalar(select(Item).where(Item.token == theirs)).skipped_at is None


def test_the_organisers_dashboard_lists_the_reports(app, client, make_campaign):
    from helpers import staff_client

    campaign = make_campaign(sentences=20)
    register(client)
    _report(client, _past_first_controls(client), "offensive", "<b>rude</b>")
    listed = reports.campaign_reports(campaign, names=True)
    assert [(r.reason, r.text, r.username, r.kind) for r in listed] == [("offensive", "<b>rude</b>", "ane", "test")]
    assert listed[0].sentence_number is not None
    page = staff_client(app, "organiser", "organiser1").get("/organiser/c/test/").get_data(as_text=True)
    section = page[page.index('id="reports"'):]
    assert "Offensive content" in section and "&lt;b&gt;rude&lt;/b&gt;" in section and "<b>rude" not in section
    assert f"<td>{listed[0].sentence_number}</td>" in section


def test_a_dashboard_without_reports_says_so(app, make_campaign):
    from helpers import staff_client

    make_campaign(sentences=20)
    page = staff_client(app, "organiser", "organiser1").get("/organiser/c/test/").get_data(as_text=True)
    assert "No volunteer has reported a problem with an item." in page


def test_a_da_item_can_be_reported_from_the_first_one(app, client, tmp_path):
    from app.services.campaign_writer import create_campaign
    from app.services.importer import read_campaign
    from helpers import QUIET_SIGNS, write_campaign

    campaign = create_campaign(read_campaign(write_campaign(str(tmp_path / "da"), protocol="da", sentences=10,
                                                            **QUIET_SIGNS)))
    # A salt whose first item is a test item (with a random one it may be a bad reference served
    # before its original, which takes no slot); reporting that kind is the pairwise control's case.
    campaign.pseudonym_salt = "0" * 32
    db.session.commit()
    register(client)
    html = client.get("/c/test/evaluate").get_data(as_text=True)
    assert "Report a problem with this item" in html and "10 more sentences to your next raffle number." in html
    token = re.search(r'name="token" type="hidden" value="([^"]+)"', html).group(1)
    csrf = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', html).group(1)
    item = db.session.scalar(select(Item).where(Item.token == token))
    assert item.slot_id is not None and item.qc_kind is None  # a test item, as the salt above serves
    pending = db.session.get(Slot, item.slot_id).pending
    client.post("/c/test/report", data={"csrf_token": csrf, "item": token, "reason": "translation-empty"})
    html = client.get("/c/test/evaluate").get_data(as_text=True)
    assert "the problem is reported" in html and token not in html
    db.session.expire_all()
    assert db.session.get(Slot, item.slot_id).pending == pending - 1
    assert db.session.scalar(select(ItemReport.reason)) == "translation-empty"
