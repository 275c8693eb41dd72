"""The raffle nobody can steer, and the prize that reaches its winner
(issue 18, items 5 and 6): the rules as pure functions, then the pages."""
import logging
from datetime import datetime, timedelta
from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import select

from app.extensions import db
from app.models import AuditLog, User, utcnow
from app.services import accounts, outbox, prizes, raffle
from app.services.pseudonyms import pseudonym
from app.services.raffle_rules import draw_winners, sha256_hex, tickets_digest
from helpers import csrf_token, register

# --- the rules ------------------------------------------------------------------

TICKETS = st.lists(st.tuples(st.integers(1, 500), st.sampled_from([f"v-{n}" for n in range(12)])),
                   min_size=1, max_size=40, unique_by=lambda ticket: ticket[0])


@given(seed=st.text(max_size=20), tickets=TICKETS, prizes_=st.integers(1, 5))
def test_the_winning_numbers_follow_the_published_formula(seed, tickets, prizes_):
    """Prize k: index int(SHA-256(seed:L:k), 16) mod n, L the list's SHA-256."""
    pool = sorted(tickets)
    digest = tickets_digest(pool)
    expected = []
    for prize in range(1, prizes_ + 1):
        if not pool:
            break
        number, holder = pool[int(sha256_hex(f"{seed}:{digest}:{prize}"), 16) % len(pool)]
        expected.append({"prize": prize, "ticket": number, "volunteer": holder})
        pool = [ticket for ticket in pool if ticket[1] != holder]
    assert draw_winners(seed, tickets, prizes_) == expected


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


def test_the_end_may_move_later_never_before_the_committed_draw():
    draw_at = datetime(2026, 12, 1, 18, 0, 30)
    record = SimpleNamespace(draw_at=draw_at, drawn_at=None)
    assert raffle.end_too_early(None, None) is None  # no commitment: anything goes
    assert raffle.end_too_early(record, draw_at) is None
    assert raffle.end_too_early(record, draw_at.replace(second=0)) is None  # the form's minutes
    assert raffle.end_too_early(record, draw_at + timedelta(days=3)) is None
    assert raffle.end_too_early(record, draw_at - timedelta(minutes=1)) == draw_at
    assert raffle.end_too_early(record, None) == draw_at
    drawn = SimpleNamespace(draw_at=draw_at, drawn_at=draw_at)
    assert raffle.end_too_early(drawn, None) is None


def test_the_email_language_is_the_winners_then_the_campaigns():
    assert prizes.mail_locale(["en", "es", "eu"], "eu", "es") == "eu"
    assert prizes.mail_locale(["en", "es", "eu"], None, "es") == "es"
    assert prizes.mail_locale(["en", "es", "eu"], "xx", "yy") == "en"


# --- the pages ------------------------------------------------------------------

def staff_client(app, role, name):
    user = accounts.create_user(f"{name}@example.org", name, "staff-password", role=role)
    user.email_confirmed_at = utcnow()
    db.session.commit()
    client = app.test_client()
    token = csrf_token(client, "/login")
    client.post("/login", data={"csrf_token": token, "email": user.email, "password": "staff-password"})
    return client


def _answer_all(client, count):
    """Judge ``count`` items through the JSON API, controls answered right."""
    from app.models import Control

    better = set(db.session.scalars(select(Control.better)))
    token = csrf_token(client, "/c/test/instructions")
    for _ in range(count):
        item = client.get("/c/test/api/item").get_json()["item"]
        choice = "right" if item["right"] in better else "left"
        client.post("/c/test/api/judgment", json={"token": item["token"], "choice": choice},
                    headers={"X-CSRFToken": token})


def _campaign_with_tickets(app, make_campaign, volunteers):
    """A campaign committed before it opens, and volunteers with a ticket each."""
    campaign = make_campaign(sentences=30, fast_seconds_per_word=0.0)
    campaign.ends_at = (utcnow() + timedelta(days=1)).replace(second=0, microsecond=0)
    db.session.commit()
    raffle.commit(campaign, sha256_hex("the seed"))
    db.session.commit()
    clients = {}
    for name in volunteers:
        client = clients[name] = app.test_client()
        register(client, username=name, email=f"{name}@example.org")
        db.session.scalar(select(User).where(User.username == name)).email_confirmed_at = utcnow()
        db.session.commit()
        _answer_all(client, 10)
    return campaign, clients


def _close_and_draw(campaign, prizes_):
    past = utcnow() - timedelta(minutes=1)
    campaign.ends_at = raffle.commitment(campaign).draw_at = past
    db.session.commit()
    record = raffle.draw(campaign, "the seed", prizes_)
    db.session.commit()
    return record


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
        assert f'<td class="sent">{utc(record.notified["1"])}</td>' in page


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
    held.held_at, held.held_reason = utcnow(), "same_side"
    db.session.commit()
    assert len(listed()) == 1 and listed()[0].endswith("," + ane)
    record = _close_and_draw(campaign, 2)
    assert [w["volunteer"] for w in record.winners] == [ane]  # one prize: the held volunteer wins none
    # The list the draw used stays as it was, whatever happens to holds later.
    final = listed()
    held.held_at = None
    db.session.commit()
    assert listed() == final
