"""The organiser decides (issue 18, item 3): a page per volunteer, and the
three decisions (clear a hold, dismiss, void one ticket), each audited and
told to the live pages; refused decisions change nothing."""
import random
import re
from datetime import timedelta

import pytest
from hypothesis import given, strategies as st
from sqlalchemy import func, select

from app import realtime
from app.extensions import db
from app.models import AuditLog, Control, Item, Participation, Ticket, utcnow
from app.services import accounts, evaluation, raffle, review
from helpers import csrf_token, give_every_campaign, register
from security.security_helpers import add_campaign, db_snapshot


# Rules of plain values.

def test_longest_run():
    assert review.longest_run([]) == 0
    assert review.longest_run([False, True, True, False, True]) == 2
    assert review.longest_run([True] * 5) == 5


@given(st.lists(st.booleans()))
def test_longest_run_is_a_run_that_is_there(flags):
    run = review.longest_run(flags)
    assert run <= sum(flags)
    text = "".join("1" if flag else "0" for flag in flags)
    assert "1" * run in text and "1" * (run + 1) not in text


def test_share():
    assert review.share(1, 4) == 0.25
    assert review.share(3, 0) is None


def test_signs_read_the_test_answers():
    signs = review.read_signs(
        [("left", True), ("left", False), ("equal", True), ("left", True), ("right", False)], crowd_equal=0.1
    )
    assert (signs.left, signs.right, signs.equal, signs.tests) == (3, 1, 1, 5)
    assert signs.side_share == 0.75  # "equal" left out, as the sign reads it
    assert signs.equal_share == 0.2 and signs.crowd_equal == 0.1
    assert (signs.too_fast, signs.fast_run) == (3, 2)
    assert review.read_signs([]).side_share is None


# The services, on a campaign.

def _volunteer(campaign, name, items, address=None, seed=3, wrong_control_at=None):
    """A volunteer who answered ``items`` items (controls right unless told)."""
    user = accounts.create_user(f"{name}@example.org", name, "password-123", age_group="26-35",
                                studies_level="university", studies_field="humanities", signup_address=address)
    user.email_confirmed_at = utcnow()
    participation = accounts.join_campaign(user, campaign, "B1-B2", "C1-C2")
    db.session.commit()
    rng = random.Random(seed)
    for number in range(1, items + 1):
        item = evaluation.show(campaign, participation.id, utcnow(), rng).item
        if item.is_control:
            good = "left" if item.better_left else "right"
            choice = good if number != wrong_control_at else ("right" if good == "left" else "left")
        else:
            choice = ("left", "right", "left", "equal")[number % 4]
        evaluation.answer(campaign, participation.id, item.token, choice, utcnow(), rng)
    db.session.refresh(participation)
    return participation


def _hold(participation, reason="same_side"):
    participation.held_at, participation.held_reason = utcnow(), reason
    participation.tests_left, participation.tests_right, participation.tests_equal = 20, 1, 2
    participation.fast_run = 3
    db.session.commit()


def _tickets(participation):
    return db.session.execute(
        select(Ticket.number, Ticket.voided_at.is_not(None)).where(Ticket.participation_id == participation.id)
        .order_by(Ticket.number)
    ).all()


def test_clear_hold_starts_the_signs_again(app, make_campaign):
    campaign = make_campaign(sentences=30)
    participation = _volunteer(campaign, "held", 5)
    with pytest.raises(review.ReviewError):
        review.clear_hold(participation)  # not held
    _hold(participation)
    review.clear_hold(participation)
    db.session.commit()
    db.session.refresh(participation)
    assert participation.held_at is None and participation.held_reason is None
    assert (participation.tests_left, participation.tests_right, participation.tests_equal,
            participation.fast_run) == (0, 0, 0, 0)
    assert participation.items_answered == 5  # the answers themselves stay


def test_void_ticket_refuses_what_is_not_the_volunteers_or_already_void(app, make_campaign):
    campaign = make_campaign(sentences=30)
    # The commitment comes before the first ticket and names the end as the draw's time.
    campaign.ends_at = utcnow() + timedelta(days=1)
    record = raffle.commit(campaign, raffle.sha256_hex("seed"), beacon="drand quicknet round 1",
                           beacon_at=campaign.ends_at + timedelta(minutes=1))
    db.session.commit()
    ane, jon = _volunteer(campaign, "ane", 20), _volunteer(campaign, "jon", 10, seed=4)
    (first, _v1), (second, _v2) = _tickets(ane)
    (jons, _v3), = _tickets(jon)
    with pytest.raises(review.ReviewError, match="not this volunteer's"):
        review.void_ticket(campaign, ane, jons, utcnow())
    with pytest.raises(review.ReviewError, match="not this volunteer's"):
        review.void_ticket(campaign, ane, 999, utcnow())
    review.void_ticket(campaign, ane, first, utcnow())
    db.session.commit()
    assert _tickets(ane) == [(first, True), (second, False)] and _tickets(jon) == [(jons, False)]
    with pytest.raises(review.ReviewError, match="already void"):
        review.void_ticket(campaign, ane, first, utcnow())
    # After the close its ticket list is frozen; after the draw, final.
    with pytest.raises(review.ReviewError, match="can no longer be voided"):
        review.void_ticket(campaign, ane, second, campaign.ends_at)
    raffle.draw(campaign, "seed", 1, now=record.beacon_at, beacon="7")
    db.session.commit()
    with pytest.raises(review.ReviewError, match="already drawn"):
        review.void_ticket(campaign, ane, second, utcnow())


def test_dismiss_discards_frees_and_voids_once(app, make_campaign):
    campaign = make_campaign(sentences=30)
    participation = _volunteer(campaign, "gone", 12)
    collected = campaign.collected_judgments
    with pytest.raises(review.ReviewError):
        review.dismiss(campaign, participation, "   ", utcnow())
    review.dismiss(campaign, participation, "always the first translation", utcnow())
    db.session.commit()
    db.session.refresh(campaign)
    assert participation.dismissed_reason == "always the first translation"
    reasons = set(db.session.scalars(select(Item.discarded_reason).where(
        Item.participation_id == participation.id, Item.answered_at.is_not(None))))
    assert reasons == {"always the first translation"}
    assert campaign.collected_judgments < collected
    assert all(void for _number, void in _tickets(participation))
    with pytest.raises(review.ReviewError, match="already dismissed"):
        review.dismiss(campaign, participation, "again", utcnow())
    with pytest.raises(review.ReviewError):
        review.clear_hold(participation)


def test_the_record_shows_controls_signs_tickets_and_texts(app, make_campaign):
    campaign = make_campaign(sentences=30)
    participation = _volunteer(campaign, "seen", 12, address="addr")
    _volunteer(campaign, "same-address", 1, address="addr", seed=5)
    record = review.volunteer_record(campaign, participation)
    assert record.user.username == "seen" and record.address_group == 2
    assert [j.position for j in record.judgments] == list(range(1, 13))
    assert [j.position for j in record.controls] == [1, 2, 5, 10]
    assert all(j.passed and j.choice == j.better for j in record.controls)
    for j in record.judgments:
        assert j.source and j.left and j.right and j.left != j.right
        if j.control:
            assert {j.left, j.right} == {j.source.replace("Control", "Good"), j.source.replace("Control", "Bad")}
    assert record.signs.tests == 8 and len(record.tickets) == 1


# Through the site.

def _organiser(app, name="boss", role="organiser"):
    user = accounts.create_user(f"{name}@example.org", name, "staff-password", role=role)
    user.email_confirmed_at = utcnow()
    give_every_campaign(user)
    client = app.test_client()
    token = csrf_token(client, "/login")
    client.post("/login", data={"csrf_token": token, "email": user.email, "password": "staff-password"})
    return client


@pytest.fixture
def touched(monkeypatch):
    calls = []
    monkeypatch.setattr(realtime, "touch", lambda *args: calls.append(args))
    return calls


def _snapshot():
    """Every row but the record of who opened the page (the redirects after a refusal open it)."""
    rows = db_snapshot()
    rows["audit_log"] = [row for row in rows["audit_log"] if "'volunteer.view'" not in row]
    return rows


def _audit(action):
    return db.session.scalars(select(AuditLog).where(AuditLog.action == action)).all()


def test_only_organisers_see_the_page(app, tmp_path, make_campaign):
    campaign = make_campaign(sentences=30)
    participation = _volunteer(campaign, "amaia", 12)
    url = f"/organiser/c/test/volunteer/{participation.id}"
    anonymous = app.test_client().get(url)
    assert anonymous.status_code == 302 and "/login" in anonymous.headers["Location"]
    volunteer = app.test_client()
    register(volunteer)
    assert volunteer.get(url).status_code == 403
    assert _organiser(app, "researcher", role="researcher").get(url).status_code == 403
    organiser = _organiser(app)
    page = organiser.get(url)
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    control = db.session.scalar(select(Control).join(Item, Item.control_id == Control.id)
                                .where(Item.participation_id == participation.id).limit(1))
    for shown in ("amaia", "amaia@example.org", "26 to 35", "University", "Humanities", "Intermediate (B1-B2)",
                  "Source sentence number", control.better, control.worse, "Ticket", "Void ticket"):
        assert shown in html, shown
    assert len(_audit("volunteer.view")) == 1  # the page shows an email: who looked is recorded
    assert organiser.get("/organiser/c/test/volunteer/9999").status_code == 404
    other = add_campaign(tmp_path, name="other", slug="other")
    stranger = _volunteer(other, "stranger", 2)
    assert organiser.get(f"/organiser/c/test/volunteer/{stranger.id}").status_code == 404
    # The suspicious-patterns page links to it, and lists who is held.
    _hold(participation)
    html = organiser.get("/organiser/c/test/suspicious").get_data(as_text=True)
    assert html.count(f'href="/organiser/c/test/volunteer/{participation.id}"') >= 1
    held = re.search(r'<table id="held">.*?</table>', html, re.S).group(0)
    assert "amaia" in held and "one side far more often than chance" in held


def test_clear_hold_from_the_page(app, make_campaign, touched):
    campaign = make_campaign(sentences=30)
    participation = _volunteer(campaign, "held", 12)
    _hold(participation)
    organiser = _organiser(app)
    url = f"/organiser/c/test/volunteer/{participation.id}"
    token = csrf_token(organiser, url)
    page = organiser.post(f"{url}/clear-hold", data={"csrf_token": token}, follow_redirects=True)
    assert "The hold is cleared." in page.get_data(as_text=True)
    db.session.refresh(participation)
    assert participation.held_at is None and participation.tests_left == 0 and participation.fast_run == 0
    [entry] = _audit("volunteer.clear_hold")
    assert entry.username == "boss" and entry.target == "test" and entry.details == {"participation": participation.id}
    assert touched == [(campaign.id, participation.id)]
    # Again: nothing to clear, said plainly, nothing recorded.
    page = organiser.post(f"{url}/clear-hold", data={"csrf_token": token}, follow_redirects=True)
    assert "This volunteer is not held." in page.get_data(as_text=True)
    assert len(_audit("volunteer.clear_hold")) == 1 and len(touched) == 1


def test_void_a_ticket_from_the_page(app, make_campaign, touched):
    campaign = make_campaign(sentences=30)
    ane, jon = _volunteer(campaign, "ane", 20), _volunteer(campaign, "jon", 10, seed=4)
    (first, _v1), (second, _v2) = _tickets(ane)
    (jons, _v3), = _tickets(jon)
    organiser = _organiser(app)
    url = f"/organiser/c/test/volunteer/{ane.id}"
    token = csrf_token(organiser, url)
    page = organiser.post(f"{url}/ticket/{first}/void", data={"csrf_token": token}, follow_redirects=True)
    assert f"Ticket {first} is void." in page.get_data(as_text=True)
    assert _tickets(ane) == [(first, True), (second, False)]
    [entry] = _audit("ticket.void")
    assert entry.details == {"participation": ane.id, "ticket": first}
    assert touched == [(campaign.id, ane.id)]
    # Someone else's ticket, or one already void: refused, nothing changes.
    before = _snapshot()
    page = organiser.post(f"{url}/ticket/{jons}/void", data={"csrf_token": token}, follow_redirects=True)
    assert f"Ticket {jons} is not this volunteer" in page.get_data(as_text=True)
    page = organiser.post(f"{url}/ticket/{first}/void", data={"csrf_token": token}, follow_redirects=True)
    assert f"Ticket {first} is already void." in page.get_data(as_text=True)
    assert _snapshot() == before and len(touched) == 1


def test_dismiss_from_the_page(app, make_campaign, touched):
    campaign = make_campaign(sentences=30)
    participation = _volunteer(campaign, "gone", 12)
    organiser = _organiser(app)
    url = f"/organiser/c/test/volunteer/{participation.id}"
    token = csrf_token(organiser, url)
    before = _snapshot()
    page = organiser.post(f"{url}/dismiss", data={"csrf_token": token, "reason": " "}, follow_redirects=True)
    assert "This field is required." in page.get_data(as_text=True)
    assert _snapshot() == before
    page = organiser.post(f"{url}/dismiss", data={"csrf_token": token, "reason": "Script <b>answers</b>"},
                          follow_redirects=True)
    html = page.get_data(as_text=True)
    assert "The volunteer is dismissed." in html and "Script &lt;b&gt;answers&lt;/b&gt;" in html
    db.session.refresh(participation)
    assert participation.dismissed_reason == "Script <b>answers</b>"
    assert db.session.scalar(select(func.count(Item.id)).where(
        Item.participation_id == participation.id, Item.answered_at.is_not(None), Item.discarded_at.is_(None))) == 0
    assert all(void for _number, void in _tickets(participation))
    [entry] = _audit("volunteer.dismiss")
    assert entry.details == {"participation": participation.id, "reason": "Script <b>answers</b>"}
    assert touched == [(campaign.id, participation.id)]
    assert "Dismiss the volunteer" not in html  # nothing left to decide


def test_a_forged_post_without_csrf_is_refused(app, make_campaign, touched):
    campaign = make_campaign(sentences=30)
    participation = _volunteer(campaign, "held", 12)
    _hold(participation)
    (number, _void), = _tickets(participation)
    organiser = _organiser(app)
    url = f"/organiser/c/test/volunteer/{participation.id}"
    app.config["WTF_CSRF_ENABLED"] = True
    before = _snapshot()
    for action, data in (("clear-hold", {}), ("dismiss", {"reason": "forged"}), (f"ticket/{number}/void", {})):
        assert organiser.post(f"{url}/{action}", data=data).status_code == 400, action
    assert _snapshot() == before and touched == []


def test_acting_on_another_campaigns_volunteer_is_refused(app, tmp_path, make_campaign, touched):
    make_campaign(sentences=30)
    other = add_campaign(tmp_path, name="other", slug="other", sentences=30)
    stranger = _volunteer(other, "stranger", 12)
    _hold(stranger)
    (number, _void), = _tickets(stranger)
    organiser = _organiser(app)
    token = csrf_token(organiser, "/organiser/c/test/suspicious")
    before = _snapshot()
    for action, data in (("clear-hold", {}), ("dismiss", {"reason": "wrong campaign"}), (f"ticket/{number}/void", {})):
        page = organiser.post(f"/organiser/c/test/volunteer/{stranger.id}/{action}",
                              data={"csrf_token": token, **data}, follow_redirects=True)
        assert page.status_code == 200
        assert "This volunteer does not take part in this campaign." in page.get_data(as_text=True), action
    assert _snapshot() == before and touched == []


def test_the_page_marks_discarded_and_too_fast_judgments(app, make_campaign):
    campaign = make_campaign(sentences=30)
    participation = _volunteer(campaign, "quick", 6)
    for item in db.session.scalars(select(Item).where(Item.participation_id == participation.id)):
        item.too_fast = item.position == 3  # the test's answers are instant: all too fast otherwise
    db.session.commit()
    html = _organiser(app).get(f"/organiser/c/test/volunteer/{participation.id}").get_data(as_text=True)
    table = re.search(r'<table id="judgments".*?</table>', html, re.S).group(0)
    rows = re.findall(r"<tr>.*?</tr>", table, re.S)[1:]
    assert len(rows) == 6
    assert ">yes<" in rows[2] and ">yes<" not in rows[3]
    assert "Below the reading floor: 1 of 3 test answers; longest run: 1" in html
    later = utcnow() + timedelta(seconds=1)
    review.dismiss(campaign, review.locked_volunteer(campaign, participation.id), "test", later)
    db.session.commit()
    html = _organiser(app, "boss2").get(f"/organiser/c/test/volunteer/{participation.id}").get_data(as_text=True)
    table = re.search(r'<table id="judgments".*?</table>', html, re.S).group(0)
    rows = re.findall(r"<tr>.*?</tr>", table, re.S)[1:]
    assert len(rows) == 6 and all(row.endswith(">yes</td></tr>") for row in rows)
