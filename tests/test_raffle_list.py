"""The raffle's published list, kept per process (services/raffle_list.py):
every event that changes who counts or which tickets are valid changes the
public list and its SHA-256 at once, a change committed by another process
included; what a judgment's reply and the live message carry is bounded."""
from datetime import timedelta

from sqlalchemy import create_engine, func, select, text

from app.extensions import db
from app.models import Campaign, Participation, Ticket, User, utcnow
from app.services import accounts, raffle, rewards
from app.services.raffle_rules import tickets_digest
from helpers import csrf_token, give_every_campaign, register
from test_volunteer_flow import right_answer

NAMES = ("ane", "mikel", "jon")


def _judge(client, count):
    token = csrf_token(client, "/c/test/instructions")
    data = None
    for _ in range(count):
        item = client.get("/c/test/api/item").get_json()["item"]
        data = client.post("/c/test/api/judgment", json={"token": item["token"],
                                                         "choice": right_answer(item["left"], item["right"])},
                           headers={"X-CSRFToken": token}).get_json()
    return data


def _setup(app, make_campaign, confirmed=NAMES):
    """Three volunteers with a ticket each (those in ``confirmed`` confirmed their email)."""
    make_campaign(sentences=40)
    clients = {}
    for name in NAMES:
        clients[name] = app.test_client()
        register(clients[name], username=name, email=f"{name}@example.org")
        if name in confirmed:
            _user(name).email_confirmed_at = utcnow()
        db.session.commit()
        _judge(clients[name], 10)
    return clients


def _user(name):
    return db.session.scalar(select(User).where(User.username == name))


def _participation(name):
    return db.session.scalar(select(Participation).join(User).where(User.username == name))


def _public(app):
    """(ticket numbers of tickets.csv, the page's SHA-256), checking that the page's is the list's."""
    public = app.test_client()
    lines = public.get("/c/test/raffle/tickets.csv").get_data(as_text=True).splitlines()[1:]
    tickets = [(int(line.split(",")[0]), line.split(",")[1]) for line in lines]
    digest = public.get("/c/test/raffle.json").get_json()["tickets_sha256"]
    assert digest == tickets_digest(tickets)
    assert digest in public.get("/c/test/raffle").get_data(as_text=True)
    return [number for number, _holder in tickets], digest


def _organiser(app):
    user = accounts.create_user("boss@example.org", "boss", "staff-password", role="organiser")
    user.email_confirmed_at = utcnow()
    give_every_campaign(user)
    client = app.test_client()
    client.post("/login", data={"csrf_token": csrf_token(client, "/login"), "email": user.email,
                                "password": "staff-password"})
    return client, csrf_token(client, "/organiser/c/test/")


def test_each_event_changes_the_public_list_and_its_digest_at_once(app, make_campaign):
    clients = _setup(app, make_campaign, confirmed=("ane", "mikel"))
    organiser, token = _organiser(app)
    numbers, digest = _public(app)
    assert len(numbers) == 2  # jon has not confirmed their email

    def changed(expected):
        nonlocal digest
        now, new_digest = _public(app)
        assert sorted(now) == sorted(expected) and new_digest != digest
        # The dashboard counts the list without reading it, from counts a recount agrees with.
        assert raffle.list_counts_now(db.session.scalar(select(Campaign)))[1] == len(now)
        valid = dict(db.session.execute(select(Participation.id, Participation.tickets_valid)).all())
        rewards.recount_valid(db.session.scalar(select(Campaign.id)))
        assert dict(db.session.execute(select(Participation.id, Participation.tickets_valid)).all()) == valid
        db.session.rollback()
        digest = new_digest
        return now

    tickets = {name: [t.number for t in db.session.scalars(
        select(Ticket).where(Ticket.participation_id == _participation(name).id))] for name in NAMES}
    # A new ticket.
    _judge(clients["ane"], 10)
    ane_new = db.session.scalar(select(func.max(Ticket.number)))
    numbers = changed(numbers + [ane_new])
    # An email confirmed (the link in the email).
    link = accounts.make_token(app.config["SECRET_KEY"], "confirm", _user("jon"))
    assert "your email is confirmed" in clients["jon"].get(f"/confirm/{link}", follow_redirects=True).get_data(
        as_text=True)
    numbers = changed(numbers + tickets["jon"])
    # A void.
    pid = _participation("ane").id
    organiser.post(f"/organiser/c/test/volunteer/{pid}/ticket/{ane_new}/void", data={"csrf_token": token})
    numbers = changed([n for n in numbers if n != ane_new])
    assert [void["ticket"] for void in app.test_client().get("/c/test/raffle.json").get_json()["voids"]] == [ane_new]
    # A dismissal.
    organiser.post(f"/organiser/c/test/volunteer/{_participation('jon').id}/dismiss",
                   data={"csrf_token": token, "reason": "copied answers"})
    numbers = changed([n for n in numbers if n not in tickets["jon"]])
    # A hold, by the signs after the volunteer's own answers (a run of answers below the reading floor).
    campaign = db.session.scalar(select(Campaign))
    campaign.fast_seconds_per_word, campaign.hold_fast_run = 10.0, 2
    db.session.commit()
    _judge(clients["mikel"], 2)
    assert _participation("mikel").held_at is not None
    numbers = changed([n for n in numbers if n not in tickets["mikel"]])
    # The hold cleared.
    organiser.post(f"/organiser/c/test/volunteer/{_participation('mikel').id}/clear-hold",
                   data={"csrf_token": token})
    changed(numbers + tickets["mikel"])


def test_the_list_is_kept_until_the_version_moves_even_from_another_process(app, make_campaign):
    _setup(app, make_campaign)
    numbers, digest = _public(app)
    assert len(numbers) == 3
    # A hold written behind the site's back (no list_changed) is not seen: the list is kept...
    mikel = _participation("mikel")
    mikel.held_at, mikel.held_reason = utcnow() - timedelta(minutes=1), "same_side"
    db.session.commit()
    assert _public(app) == (numbers, digest)
    # ... until the version moves, here committed by another connection, as another server process would.
    engine = create_engine(app.config["SQLALCHEMY_DATABASE_URI"])
    try:
        with engine.begin() as connection:
            connection.execute(text("UPDATE campaigns SET raffle_version = raffle_version + 1"))
    finally:
        engine.dispose()
    after, new_digest = _public(app)
    assert len(after) == 2 and new_digest != digest


def test_the_draw_uses_the_published_list(app, make_campaign):
    _setup(app, make_campaign)
    campaign = db.session.scalar(select(Campaign))
    campaign.ends_at = (utcnow() + timedelta(days=1)).replace(second=0, microsecond=0)
    db.session.commit()
    _numbers, digest = _public(app)
    listed = raffle.eligible_tickets(campaign)
    assert tickets_digest(listed) == digest
    assert raffle.published_now(campaign).count == 3 and raffle.published_now(campaign).valid == 3


def test_a_reply_carries_the_count_and_the_latest_five_tickets(app, make_campaign):
    make_campaign(sentences=20)
    client = app.test_client()
    register(client)
    participation = _participation("ane")
    campaign = db.session.scalar(select(Campaign))
    now = utcnow()
    for number in range(1, 62):  # the last one voided: neither shown nor counted
        db.session.add(Ticket(campaign_id=campaign.id, participation_id=participation.id, number=number,
                              item_position=10 * number, created_at=now, voided_at=now if number == 61 else None))
    campaign.next_ticket = 62
    rewards.recount_valid(campaign.id)  # the count award and void keep, for tickets inserted here
    db.session.commit()
    data = _judge(client, 1)
    assert data["tickets_count"] == 60 and data["tickets"] == [56, 57, 58, 59, 60]
    assert "60 raffle numbers" in data["mine"] and "56, 57, 58, 59, 60" in data["mine"] and ", 55" not in data["mine"]
    page = client.get("/c/test/evaluate").get_data(as_text=True)
    assert '"known_tickets": [56, 57, 58, 59, 60]' in page
    # The live message's tickets: the latest five of each volunteer, in one query.
    assert rewards.latest_tickets_of([participation.id, participation.id + 1]) == {
        participation.id: [56, 57, 58, 59, 60], participation.id + 1: []}
    # The volunteer's own page lists them all.
    welcome = client.get("/c/test/welcome").get_data(as_text=True)
    assert "1, 2, 3" in welcome and "59, 60" in welcome
