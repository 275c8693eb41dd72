"""The raffle nobody can steer, and the prize that reaches its winner
(issue 18, items 5 and 6): the rules as pure functions, then the pages."""
import json
import logging
from datetime import datetime, timedelta
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import select

from app.extensions import db
from app.models import AuditLog, User, utcnow
from app.services import outbox, prizes, raffle, rewards
from app.services.pseudonyms import pseudonym
from app.services.raffle_rules import check_draw, draw_winners, iso, normal_beacon, sha256_hex, tickets_digest
from helpers import close_in_the_past, committed_campaign, csrf_token, register, staff_client, ticketed_volunteer

# --- the rules ------------------------------------------------------------------

TICKETS = st.lists(st.tuples(st.integers(1, 500), st.sampled_from([f"v-{n}" for n in range(12)])),
                   min_size=1, max_size=40, unique_by=lambda ticket: ticket[0])


@given(seed=st.text(max_size=20), beacon=st.text(max_size=20), tickets=TICKETS, prizes_=st.integers(1, 5))
def test_the_winning_numbers_follow_the_published_formula(seed, beacon, tickets, prizes_):
    """Prize k: index int(SHA-256(seed:B:L:k), 16) mod n, B the beacon's value, L the list's SHA-256."""
    pool = sorted(tickets)
    digest = tickets_digest(pool)
    value = " ".join(beacon.split())
    expected = []
    for prize in range(1, prizes_ + 1):
        if not pool:
            break
        number, holder = pool[int(sha256_hex(f"{seed}:{value}:{digest}:{prize}"), 16) % len(pool)]
        expected.append({"prize": prize, "ticket": number, "volunteer": holder})
        pool = [ticket for ticket in pool if ticket[1] != holder]
    assert draw_winners(seed, tickets, prizes_, beacon) == expected


def test_the_beacon_decides_as_much_as_the_seed():
    """Knowing the seed and the final list says nothing of the winners until the beacon's value is out."""
    tickets = [(n, f"v-{n % 9}") for n in range(1, 80)]
    firsts = {draw_winners("known seed", tickets, 1, f"round {n}")[0]["ticket"] for n in range(40)}
    assert len(firsts) > 20
    # Spaces and line breaks as the organiser may type them do not matter.
    assert draw_winners("s", tickets, 3, " 7  12\n33 ") == draw_winners("s", tickets, 3, "7 12 33")
    assert normal_beacon(" 7  12\n33 ") == "7 12 33"
    # Draws made before beacons keep their rule: seed:L:k.
    digest = tickets_digest(sorted(tickets))
    index = int(sha256_hex(f"s:{digest}:1"), 16) % len(tickets)
    assert draw_winners("s", tickets, 1)[0]["ticket"] == sorted(tickets)[index][0]


def test_the_draw_depends_on_the_seed_and_on_the_whole_ticket_list():
    tickets = [(n, f"v-{n % 9}") for n in range(1, 80)]
    one_more = tickets + [(80, "v-late")]
    renamed = tickets[:-1] + [(79, "v-other")]
    seeds = [f"seed-{n}" for n in range(40)]
    base = [draw_winners(seed, tickets, 1)[0]["ticket"] for seed in seeds]
    # With one ticket more, or one holder changed, the winning positions
    # move: the seed alone does not tell who wins.
    for changed in (one_more, renamed):
        moved = [draw_winners(seed, changed, 1)[0]["ticket"] for seed in seeds]
        assert sum(a != b for a, b in zip(base, moved)) > 30
    assert len({draw_winners(seed, tickets, 1)[0]["ticket"] for seed in seeds}) > 20


def test_several_prizes_in_order_nobody_twice():
    tickets = [(n, f"v-{n % 4}") for n in range(1, 30)]
    winners = draw_winners("seed", tickets, 6)
    assert [w["prize"] for w in winners] == [1, 2, 3, 4]  # four holders: four prizes at most
    assert len({w["volunteer"] for w in winners}) == 4
    assert draw_winners("seed", tickets, 2) == winners[:2]  # drawing fewer prizes keeps the first ones


def test_closed_means_closed_by_status_or_past_the_end():
    now = datetime(2026, 12, 1, 12, 0)
    assert not raffle.is_closed(SimpleNamespace(status="open", ends_at=None), now)
    assert not raffle.is_closed(SimpleNamespace(status="open", ends_at=now + timedelta(seconds=1)), now)
    assert raffle.is_closed(SimpleNamespace(status="open", ends_at=now), now)
    assert raffle.is_closed(SimpleNamespace(status="closed", ends_at=now + timedelta(days=1)), now)


def test_the_end_may_move_later_but_not_to_the_beacon_and_nothing_reopens_after_the_close(app):
    now = datetime(2026, 12, 1, 12, 0)
    draw_at = datetime(2026, 12, 1, 18, 0, 30)
    beacon_at = datetime(2026, 12, 2, 20, 0)
    record = SimpleNamespace(draw_at=draw_at, drawn_at=None, beacon_at=beacon_at)
    open_ = SimpleNamespace(status="open", ends_at=draw_at)

    def refused(campaign, status, ends_at, record=record, at=now):
        return raffle.change_refused(campaign, record, status, ends_at, at) is not None

    assert not refused(open_, "draft", None, record=None)  # no commitment: anything goes
    assert not refused(open_, "open", draw_at)
    assert not refused(open_, "open", draw_at.replace(second=0))  # the form's minutes
    assert not refused(open_, "open", draw_at + timedelta(hours=3))
    assert not refused(open_, "closed", draw_at)  # closing early is allowed (the list freezes then)
    assert refused(open_, "open", draw_at - timedelta(minutes=1))
    assert refused(open_, "open", None)
    # The beacon's value must stay unknown until after the close.
    assert refused(open_, "open", beacon_at)
    assert refused(open_, "open", beacon_at + timedelta(days=1))
    # After the close (past the end, or closed by status): no re-opening, the end stays.
    after = draw_at + timedelta(minutes=5)
    assert not refused(open_, "open", draw_at.replace(second=0), at=after)  # the same settings saved again
    assert not refused(open_, "closed", draw_at.replace(second=0), at=after)
    assert refused(open_, "open", draw_at + timedelta(hours=1), at=after)
    assert refused(open_, "open", None, at=after)
    assert refused(open_, "draft", draw_at.replace(second=0), at=after)
    closed = SimpleNamespace(status="closed", ends_at=draw_at)
    assert refused(closed, "open", draw_at)
    assert not refused(closed, "closed", draw_at)
    drawn = SimpleNamespace(draw_at=draw_at, drawn_at=after, beacon_at=beacon_at)
    assert refused(closed, "open", draw_at, record=drawn, at=after)


def test_the_list_freezes_at_the_close():
    end = datetime(2026, 12, 1, 18, 0)
    campaign = SimpleNamespace(status="open", ends_at=end)
    record = SimpleNamespace(closed_at=None)
    assert raffle.frozen_at(campaign, record, end - timedelta(seconds=1)) is None
    assert raffle.frozen_at(campaign, record, end + timedelta(days=2)) == end
    early = SimpleNamespace(closed_at=end - timedelta(hours=2))  # the organiser closed it early
    assert raffle.frozen_at(SimpleNamespace(status="closed", ends_at=end), early, end + timedelta(days=2)) == early.closed_at


# --- the verify script's checks ----------------------------------------------------

LIST = [(n, f"v-{n % 5}") for n in range(1, 40)]
CLOSE = datetime(2026, 12, 1, 18, 0)


def published_draw(tickets=LIST, beacon="3 14 15 92 65", **changes):
    """A raffle record as /c/<slug>/raffle.json publishes it, drawn with ``beacon``."""
    made = {
        "commitment": {"seed_sha256": sha256_hex("seed"), "committed_at": "2026-11-20T10:00:00Z",
                       "draw_at": iso(CLOSE), "beacon": "national lottery of 2 December", "beacon_at": "2026-12-02T20:00:00Z"},
        "closed_at": iso(CLOSE),
        "voids": [{"ticket": 40, "volunteer": "v-0", "voided_at": "2026-11-30T09:00:00Z"}],
        "draw": {"drawn_at": "2026-12-03T09:00:00Z", "seed": "seed", "beacon_value": beacon, "prizes": 3,
                 "tickets_sha256": tickets_digest(tickets), "winners": draw_winners("seed", tickets, 3, beacon)},
    }
    made.update(changes)
    return made


def problems(published, tickets=LIST, beacon="3 14 15 92 65"):
    return {what: problem for what, problem in check_draw(published, tickets, beacon) if problem}


def test_an_honest_draw_checks_out():
    assert problems(published_draw()) == {}
    assert problems(published_draw(), beacon="  3 14 15\n92 65") == {}  # typed with other spaces


def test_a_draw_from_another_list_or_beacon_or_a_late_void_fails():
    # The organiser drew from a list with one ticket less than the one saved at the close.
    assert set(problems(published_draw(tickets=LIST[1:])) ) == {"ticket list", "winners"}
    # The organiser typed another value than the beacon's.
    assert set(problems(published_draw(beacon="3 14 15 92 66"))) == {"beacon value", "winners"}
    # A ticket voided after the close.
    late = published_draw(voids=[{"ticket": 7, "volunteer": "v-2", "voided_at": "2026-12-01T18:00:00Z"}])
    assert set(problems(late)) == {"voids"}
    # A beacon whose value was out before the close; a draw before the beacon; a seed that is not the one committed.
    early = published_draw()
    early["commitment"]["beacon_at"] = "2026-12-01T17:00:00Z"
    assert "beacon named" in problems(early)
    hasty = published_draw()
    hasty["draw"]["drawn_at"] = "2026-12-02T19:00:00Z"
    assert set(problems(hasty)) == {"draw time"}
    other_seed = published_draw()
    other_seed["commitment"]["seed_sha256"] = sha256_hex("another seed")
    assert set(problems(other_seed)) == {"commitment"}
    # A draw made before beacons were required does not check out.
    legacy = published_draw()
    legacy["commitment"]["beacon"] = legacy["commitment"]["beacon_at"] = None
    assert "beacon named" in problems(legacy)
    assert problems(published_draw(draw=None)) == {"draw": "the raffle has not been drawn"}


def test_the_email_language_is_the_winners_then_the_campaigns():
    assert prizes.mail_locale(["en", "es", "eu"], "eu", "es") == "eu"
    assert prizes.mail_locale(["en", "es", "eu"], None, "es") == "es"
    assert prizes.mail_locale(["en", "es", "eu"], "xx", "yy") == "en"


# --- the pages ------------------------------------------------------------------

def _campaign_with_tickets(app, make_campaign, volunteers):
    """A campaign committed before it opens, and volunteers with a ticket each."""
    campaign = committed_campaign(make_campaign, beacon="drand quicknet round 1234")
    return campaign, {name: ticketed_volunteer(app, name) for name in volunteers}


def _close_and_draw(campaign, prizes_):
    close_in_the_past(campaign)
    record = raffle.draw(campaign, "the seed", prizes_, beacon=BEACON)
    db.session.commit()
    return record


BEACON = "a1b2c3 beacon value"


def _drawn_campaign(app, make_campaign, volunteers=("ane", "mikel", "jon")):
    campaign, clients = _campaign_with_tickets(app, make_campaign, volunteers)
    record = _close_and_draw(campaign, 2)
    assert len(record.winners) == 2
    return campaign, record, clients


def _username_of(campaign, winner):
    for user in db.session.scalars(select(User)):
        if pseudonym(campaign, user.id) == winner["volunteer"]:
            return user.username
    raise AssertionError(winner)


def test_the_organiser_sees_the_winners_and_the_look_is_audited(app, make_campaign):
    campaign, record, _clients = _drawn_campaign(app, make_campaign)
    organiser = staff_client(app, "organiser", "boss")
    page = organiser.get("/organiser/c/test/raffle/winners").get_data(as_text=True)
    names = [_username_of(campaign, w) for w in record.winners]
    for name in names:
        assert f"{name}@example.org" in page and f'<bdi class="username">{name}</bdi>' in page
    entry = db.session.scalars(select(AuditLog).where(AuditLog.action == "raffle.winners")).one()
    assert entry.username == "boss" and entry.target == "test" and entry.details == {"usernames": names}
    # The dashboard links to it once drawn.
    assert "/organiser/c/test/raffle/winners" in organiser.get("/organiser/c/test/").get_data(as_text=True)
    # Nobody else: researchers and volunteers are refused, nothing recorded.
    researcher = staff_client(app, "researcher", "sci")
    assert researcher.get("/organiser/c/test/raffle/winners").status_code == 403
    assert _clients["ane"].get("/organiser/c/test/raffle/winners").status_code == 403
    anonymous = app.test_client().get("/organiser/c/test/raffle/winners")
    assert anonymous.status_code == 302 and "/login" in anonymous.headers["Location"]
    assert db.session.query(AuditLog).filter_by(action="raffle.winners").count() == 1
    # The public pages name nobody.
    public = app.test_client().get("/c/test/raffle").get_data(as_text=True)
    assert not any(name in public for name in names) and "@example.org" not in public


def test_the_winner_gets_an_email_in_their_language(app, make_campaign, caplog):
    campaign, record, clients = _drawn_campaign(app, make_campaign)
    first = _username_of(campaign, record.winners[0])
    winner = db.session.scalar(select(User).where(User.username == first))
    winner.locale = "eu"
    campaign.texts = {"eu": {"name": "Proba kanpaina"}}  # the campaign's name in Basque
    db.session.commit()
    organiser = staff_client(app, "organiser", "boss")
    token = csrf_token(organiser, "/organiser/c/test/raffle/winners")
    outbox.send_due(app.config)  # the volunteers' confirmation emails
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="bozka.mail"):
        page = organiser.post("/organiser/c/test/raffle/notify", follow_redirects=True, data={
            "csrf_token": token, "prize": "1", "note": "Write to <prizes@example.org> by Friday."})
        assert "The email to the winner of prize 1 is queued" in page.get_data(as_text=True)
        assert outbox.send_due(app.config) == 1  # the background sender's pass
    (mail,) = [r.getMessage() for r in caplog.records if r.name == "bozka.mail"]
    assert f"to {first}@example.org:" in mail
    # In Basque, the winner's language (the organiser reads English).
    assert "Zozketa irabazi duzu: Proba kanpaina" in mail
    assert f"{record.winners[0]['ticket']} zenbakiko txartelarekin" in mail
    assert "http://localhost/c/test/raffle" in mail and "Write to <prizes@example.org> by Friday." in mail
    db.session.refresh(record)
    assert set(record.notified) == {"1"}
    entry = db.session.scalars(select(AuditLog).where(AuditLog.action == "raffle.notify")).one()
    assert entry.details == {"prize": 1, "username": first}
    # The winners page says when it was sent, as the interface language writes a time, with its zone.
    page = organiser.get("/organiser/c/test/raffle/winners").get_data(as_text=True)
    from app.formats import utc

    with app.test_request_context():
        assert f'<td class="sent" data-label="Email sent">{utc(record.notified["1"])}</td>' in page


def test_a_refused_email_changes_nothing(app, make_campaign):
    _drawn_campaign(app, make_campaign)
    organiser = staff_client(app, "organiser", "boss")
    token = csrf_token(organiser, "/organiser/c/test/raffle/winners")
    record = raffle.commitment(raffle.campaign_by_slug("test"))
    before = db.session.query(AuditLog).count()
    # No such prize; a note with a control character. (A mail server that
    # is down no longer matters here: the email is queued, tests/test_mail.py.)
    for data, message in (({"prize": "3"}, "There is no winner of this prize."),
                          ({"prize": "1", "note": "hi\x07"}, "without control characters")):
        page = organiser.post("/organiser/c/test/raffle/notify", follow_redirects=True,
                              data={"csrf_token": token, **data}).get_data(as_text=True)
        assert message in page
    db.session.refresh(record)
    assert record.notified is None
    # Only the page views were recorded.
    actions = [a for (a,) in db.session.query(AuditLog.action).order_by(AuditLog.id).all()[before:]]
    assert set(actions) == {"raffle.winners"}


def test_the_winner_sees_the_notice_on_their_campaign_page(app, make_campaign):
    campaign, record, clients = _drawn_campaign(app, make_campaign)
    winners = {_username_of(campaign, w): w for w in record.winners}
    for name, client in clients.items():
        page = client.get("/c/test/", follow_redirects=True).get_data(as_text=True)
        if name in winners:
            w = winners[name]
            assert f"You won prize {w['prize']} in the raffle, with ticket {w['ticket']}!" in page
        else:
            assert "You won prize" not in page


def test_every_volunteer_page_links_to_the_raffle(app, client, make_campaign):
    make_campaign()
    link = 'href="/c/test/raffle"'
    for url in ("/c/test/", "/c/test/instructions", "/c/test/raffle", "/c/test/register"):
        assert link in client.get(url).get_data(as_text=True), url
    register(client)
    for url in ("/c/test/welcome", "/c/test/instructions", "/c/test/evaluate"):
        assert link in client.get(url).get_data(as_text=True), url


def test_held_volunteers_leave_the_published_list_at_once(app, make_campaign):
    from app.models import Participation

    campaign, clients = _campaign_with_tickets(app, make_campaign, ("ane", "mikel"))
    public = app.test_client()

    def listed():
        return public.get("/c/test/raffle/tickets.csv").get_data(as_text=True).splitlines()[1:]

    assert len(listed()) == 2
    held = db.session.scalar(select(Participation).join(User).where(User.username == "mikel"))
    ane = pseudonym(campaign, db.session.scalar(select(User.id).where(User.username == "ane")))
    held.held_at, held.held_reason = utcnow() - timedelta(minutes=30), "same_side"  # before the end close_in_the_past sets
    rewards.list_changed(campaign.id)  # as answers._check_signs does with a hold
    db.session.commit()
    assert len(listed()) == 1 and listed()[0].endswith("," + ane)
    record = _close_and_draw(campaign, 2)
    assert [w["volunteer"] for w in record.winners] == [ane]  # one prize: the held volunteer wins none
    # The list the draw used stays as it was, whatever happens to holds later.
    final = listed()
    held.held_at = None
    db.session.commit()
    assert listed() == final


# --- the list freezes at the close: the organiser's forms ----------------------------

def _tickets_of(campaign, name):
    from app.models import Participation, Ticket

    return db.session.scalars(select(Ticket).join(Participation).join(User).where(User.username == name)
                              .order_by(Ticket.number)).all()


def test_the_commitment_names_a_beacon_published_after_the_end(app, make_campaign):
    campaign = make_campaign(sentences=30)
    campaign.ends_at = end = (utcnow() + timedelta(days=1)).replace(second=0, microsecond=0)
    db.session.commit()
    organiser = staff_client(app, "organiser", "boss")
    token = csrf_token(organiser, "/organiser/c/test/")
    for data, message in (
        ({}, "The public draw or beacon whose value the draw will use: This field is required."),
        ({"beacon": "drand quicknet round 99"}, "When its value is published"),
        ({"beacon": "drand quicknet round 99", "beacon_at": end.strftime("%Y-%m-%dT%H:%M")},
         "The beacon&#39;s value must be published after the campaign&#39;s end"),
    ):
        page = organiser.post("/organiser/c/test/raffle/commit", follow_redirects=True,
                              data={"csrf_token": token, "seed_sha256": "", **data}).get_data(as_text=True)
        assert message in page, message
        assert raffle.commitment(campaign) is None
    later = end + timedelta(seconds=30)
    page = organiser.post("/organiser/c/test/raffle/commit", data={
        "csrf_token": token, "seed_sha256": "", "beacon": "drand quicknet  round 99",
        "beacon_at": later.strftime("%Y-%m-%dT%H:%M:%S")}).get_data(as_text=True)
    record = raffle.commitment(campaign)
    assert record.beacon == "drand quicknet round 99" and record.beacon_at == later
    public = app.test_client().get("/c/test/raffle").get_data(as_text=True)
    assert "drand quicknet round 99" in public
    # The end may not move to or past the beacon's time: its value would be known before the close.
    page = organiser.post("/organiser/c/test/status", follow_redirects=True, data={
        "csrf_token": token, "status": "open", "ends_at": (later + timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M")})
    assert "the campaign must end before it" in page.get_data(as_text=True)
    db.session.refresh(campaign)
    assert campaign.ends_at == end


def test_after_the_close_no_void_no_reopening_no_hold_cleared(app, make_campaign):
    """The attack of issue 28: the organiser, who knows the seed, voids a ticket after the close
    or re-opens the campaign. Both are refused and change nothing."""
    from app.models import Participation

    campaign, clients = _campaign_with_tickets(app, make_campaign, ("ane", "mikel", "jon"))
    organiser = staff_client(app, "organiser", "boss")
    token = csrf_token(organiser, "/organiser/c/test/")
    # Before the close, a void is possible, and public with its time.
    (first,) = _tickets_of(campaign, "jon")
    jon = db.session.get(Participation, first.participation_id)
    page = organiser.post(f"/organiser/c/test/volunteer/{jon.id}/ticket/{first.number}/void", follow_redirects=True,
                          data={"csrf_token": token}).get_data(as_text=True)
    assert f"Ticket {first.number} is void." in page
    db.session.refresh(first)
    public = app.test_client()
    listed = public.get("/c/test/raffle.json").get_json()["voids"]
    assert listed == [{"ticket": first.number, "volunteer": pseudonym(campaign, jon.user_id),
                       "voided_at": iso(first.voided_at)}]
    assert f"<td>{first.number}</td>" in public.get("/c/test/raffle").get_data(as_text=True)
    (ticket,) = _tickets_of(campaign, "mikel")
    mikel = db.session.get(Participation, ticket.participation_id)
    assert f"Void ticket {ticket.number}</button>" in organiser.get(
        f"/organiser/c/test/volunteer/{mikel.id}").get_data(as_text=True)
    record = close_in_the_past(campaign)
    assert public.get("/c/test/raffle.json").get_json()["voids"][0]["voided_at"] < iso(campaign.ends_at)
    before = public.get("/c/test/raffle/tickets.csv").get_data(as_text=True)
    assert len(before.splitlines()) == 3  # ane's and mikel's tickets
    # After the close the volunteer's page offers no void: it would be refused.
    page = organiser.get(f"/organiser/c/test/volunteer/{mikel.id}").get_data(as_text=True)
    assert "Void ticket" not in page and "/void" not in page
    assert "The campaign has closed: its tickets can no longer be voided." in page
    page = organiser.post(f"/organiser/c/test/volunteer/{mikel.id}/ticket/{ticket.number}/void",
                          follow_redirects=True, data={"csrf_token": token}).get_data(as_text=True)
    assert "The campaign has closed: its tickets can no longer be voided." in page
    # Re-opening: status back to open, or the end moved later.
    end = campaign.ends_at.strftime("%Y-%m-%dT%H:%M")
    later = (campaign.ends_at + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    for status, ends_at in (("open", later), ("draft", end), ("open", "")):
        page = organiser.post("/organiser/c/test/status", follow_redirects=True,
                              data={"csrf_token": token, "status": status, "ends_at": ends_at})
        assert "it cannot re-open, and its end cannot move" in page.get_data(as_text=True), (status, ends_at)
    # Closing by status is allowed; opening again after that is not.
    organiser.post("/organiser/c/test/status", data={"csrf_token": token, "status": "closed", "ends_at": end})
    page = organiser.post("/organiser/c/test/status", follow_redirects=True,
                          data={"csrf_token": token, "status": "open", "ends_at": end})
    assert "it cannot re-open" in page.get_data(as_text=True)
    db.session.refresh(campaign)
    db.session.refresh(record)
    assert campaign.status == "closed" and record.closed_at == campaign.ends_at  # the end came first
    # A hold cleared after the close would change the list: refused until the draw.
    mikel.held_at, mikel.held_reason = campaign.ends_at - timedelta(minutes=30), "same_side"
    rewards.list_changed(campaign.id)  # as answers._check_signs does with a hold
    db.session.commit()
    page = organiser.post(f"/organiser/c/test/volunteer/{mikel.id}/clear-hold", follow_redirects=True,
                          data={"csrf_token": token}).get_data(as_text=True)
    assert "its raffle&#39;s ticket list is frozen until the draw" in page
    assert "Clear the hold" not in page and "/clear-hold" not in page  # the page says why, with no button
    # A dismissal after the close voids nothing: the list stays as it froze.
    page = organiser.post(f"/organiser/c/test/volunteer/{mikel.id}/dismiss", follow_redirects=True,
                          data={"csrf_token": token, "reason": "late"}).get_data(as_text=True)
    assert "The volunteer is dismissed." in page
    db.session.refresh(ticket)
    assert ticket.voided_at is None
    # Mikel was held at the close (the hold came before it): out of the frozen list, dismissed or not.
    assert public.get("/c/test/raffle.json").get_json()["closed_at"] == iso(campaign.ends_at)
    assert len(public.get("/c/test/raffle/tickets.csv").get_data(as_text=True).splitlines()) == 2
    assert raffle.list_counts_now(campaign)[1] == 1  # the dashboard counts the frozen list as it is
    # An email confirmed after the close adds no ticket.
    ane = db.session.scalar(select(User).where(User.username == "ane"))
    ane.email_confirmed_at = utcnow()
    rewards.list_changed(campaign.id)  # as the confirmation link does
    db.session.commit()
    assert public.get("/c/test/raffle/tickets.csv").get_data(as_text=True) == "ticket,volunteer\n"
    assert raffle.list_counts_now(campaign)[1] == 0


def _save(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _verify(draw, tickets, beacon):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "scripts/verify_raffle.py", "--draw", draw, "--tickets", tickets,
                           "--beacon", beacon], capture_output=True, text=True, timeout=60)


def test_the_verify_script_fails_a_tampered_draw(app, make_campaign, tmp_path):
    campaign, clients = _campaign_with_tickets(app, make_campaign, ("ane", "mikel", "jon"))
    close_in_the_past(campaign)
    public = app.test_client()
    # A volunteer saves the list once the campaign has closed.
    saved = _save(tmp_path, "tickets.csv", public.get("/c/test/raffle/tickets.csv").get_data(as_text=True))
    organiser = staff_client(app, "organiser", "boss")
    token = csrf_token(organiser, "/organiser/c/test/")
    page = organiser.post("/organiser/c/test/raffle/draw", follow_redirects=True, data={
        "csrf_token": token, "seed": "the seed", "beacon": "", "prizes": "2"}).get_data(as_text=True)
    assert "The beacon&#39;s value, exactly as it was published: This field is required." in page
    page = organiser.post("/organiser/c/test/raffle/draw", follow_redirects=True, data={
        "csrf_token": token, "seed": "the seed", "beacon": BEACON, "prizes": "2"}).get_data(as_text=True)
    assert "The raffle was drawn." in page
    assert BEACON in public.get("/c/test/raffle").get_data(as_text=True)
    drawn = public.get("/c/test/raffle.json").get_json()
    draw = _save(tmp_path, "raffle.json", json.dumps(drawn))
    good = _verify(draw, saved, BEACON)
    assert good.returncode == 0 and "the draw checks out" in good.stdout, good.stdout + good.stderr
    assert "ticket list: ok" in good.stdout and "beacon value: ok" in good.stdout
    # A list with one ticket less than the one saved at the close.
    lines = open(saved, encoding="utf-8").read().splitlines()
    fewer = _save(tmp_path, "fewer.csv", "\n".join(lines[:-1]) + "\n")
    out = _verify(draw, fewer, BEACON)
    assert out.returncode == 1 and "ticket list: FAILS" in out.stdout and "THE DRAW DOES NOT CHECK OUT" in out.stdout
    # The beacon's value at its source is not the one the organiser typed.
    out = _verify(draw, saved, "a1b2c4 beacon value")
    # The winners may be the same by chance (three volunteers, two prizes): the beacon's check fails the draw.
    assert out.returncode == 1 and "beacon value: FAILS" in out.stdout and "DOES NOT CHECK OUT" in out.stdout
    # A ticket voided after the close (behind the site's back: the site refuses it) shows in the record.
    from app.models import Ticket

    ticket = db.session.scalars(select(Ticket).where(Ticket.voided_at.is_(None)).order_by(Ticket.number)).first()
    ticket.voided_at = utcnow()
    db.session.commit()
    late = _save(tmp_path, "late.json", json.dumps(public.get("/c/test/raffle.json").get_json()))
    out = _verify(late, saved, BEACON)
    assert out.returncode == 1 and f"voids: FAILS: voided after the close: ticket {ticket.number}" in out.stdout
    # Files it cannot read: a clear message, exit 2.
    out = _verify(str(tmp_path / "missing.json"), saved, BEACON)
    assert out.returncode == 2 and "cannot read the files" in out.stderr


def test_a_commitment_without_a_beacon_names_one_before_the_close_or_never_draws(app, make_campaign):
    from app.models import RaffleCommitment

    campaign = make_campaign(sentences=30)
    campaign.ends_at = (utcnow() + timedelta(days=1)).replace(second=0, microsecond=0)
    # As a commitment made before beacons were required was stored.
    db.session.add(RaffleCommitment(campaign_id=campaign.id, seed_sha256=sha256_hex("old seed"),
                                    draw_at=campaign.ends_at))
    db.session.commit()
    runner = app.test_cli_runner()
    at = (campaign.ends_at + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S")
    early = runner.invoke(args=["raffle", "beacon", "test", "--beacon", "drand quicknet round 5", "--beacon-at",
                                campaign.ends_at.strftime("%Y-%m-%dT%H:%M")])
    assert early.exit_code != 0 and "after the campaign's end" in early.output
    assert raffle.commitment(campaign).beacon is None
    # Past the close it is too late: no draw without a beacon.
    later = campaign.ends_at + timedelta(days=1)
    with pytest.raises(raffle.RaffleError, match="names no beacon"):
        raffle.draw(campaign, "old seed", 1, now=later, beacon="7")
    with pytest.raises(raffle.RaffleError, match="before the campaign closes"):
        raffle.name_beacon(campaign, "drand quicknet round 5", campaign.ends_at + timedelta(hours=1), now=later)
    done = runner.invoke(args=["raffle", "beacon", "test", "--beacon", "drand quicknet round 5", "--beacon-at", at])
    assert done.exit_code == 0, done.output
    again = runner.invoke(args=["raffle", "beacon", "test", "--beacon", "another", "--beacon-at", at])
    assert again.exit_code != 0 and "already names its beacon" in again.output
    record = raffle.draw(campaign, "old seed", 1, now=later, beacon="7")
    assert record.beacon == "drand quicknet round 5" and record.beacon_value == "7"
