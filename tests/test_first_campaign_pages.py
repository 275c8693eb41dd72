"""What a newcomer's first real campaign asked of the organisers' and the
raffle pages: the dashboard's names link to each volunteer's review page
(and keep doing so in the live panel), the winners' notify forms say whom
they are for and whether they were sent, the winner's email answers to the
organiser who sent it, and the public raffle page follows the campaign's
protocol and, once drawn, says what was drawn, in the volunteer's language."""
import logging
import random
from datetime import timedelta
from email import message_from_bytes

from flask_babel import force_locale, format_datetime
from sqlalchemy import select

from app.extensions import db
from app.models import OutboxMail, Participation, Ticket, User, utcnow
from app.services import leaderboard, outbox, raffle
from app.services.raffle_rules import sha256_hex
from da_simulation import honest, join, make_da_campaign, run
from helpers import staff_client

BEACON = "drand quicknet round 1234"


def judged(campaign, username, answers, answer):
    """A confirmed volunteer who gave ``answers`` answers; returns their participation id."""
    participation_id = join(campaign, username)
    run(campaign, participation_id, answer, limit=answers, rng=random.Random(len(username)))
    leaderboard.invalidate(campaign.id)
    return participation_id


def pairwise_answer(texts, kind=None):
    return "left"


def da_answer(texts, kind=None):
    return 70


def review_links(html, slug):
    return {int(part.split('"', 1)[0]) for part in html.split(f'href="/organiser/c/{slug}/volunteer/')[1:]}


# --- 1. the dashboard's names link to the review page ----------------------------------

def test_the_top_contributors_link_to_their_review_pages_pairwise(app, make_campaign):
    campaign = make_campaign(sentences=30)
    ids = {judged(campaign, name, n, pairwise_answer) for name, n in (("ane", 3), ("jon", 2))}
    organiser = staff_client(app, "organiser")
    for url in ("/organiser/c/test/", "/organiser/c/test/panel"):  # the page and its live refresh
        html = organiser.get(url).get_data(as_text=True)
        top = html.split('id="dash-top"', 1)[1].split("</ol>", 1)[0]
        assert review_links(top, "test") == ids, url
        assert ">ane</a>" in top and ">jon</a>" in top
    for participation_id in ids:
        assert organiser.get(f"/organiser/c/test/volunteer/{participation_id}").status_code == 200
    # A researcher sees pseudonyms and no link (the review page is the organisers').
    researcher = staff_client(app, "researcher")
    assert review_links(researcher.get("/organiser/c/test/panel").get_data(as_text=True), "test") == set()


def test_the_top_contributors_link_to_their_review_pages_da(app, tmp_path):
    campaign = make_da_campaign(str(tmp_path / "da"))
    participation_id = judged(campaign, "miren", 4, da_answer)
    organiser = staff_client(app, "organiser")
    for url in ("/organiser/c/test/", "/organiser/c/test/panel"):
        top = organiser.get(url).get_data(as_text=True).split('id="dash-top"', 1)[1].split("</ol>", 1)[0]
        assert review_links(top, "test") == {participation_id}, url


# --- 3. the winners' notify forms and the Reply-To -----------------------------------

def committed(campaign):
    """The campaign's end a day away and the raffle's commitment naming BEACON."""
    campaign.ends_at = (utcnow() + timedelta(days=1)).replace(second=0, microsecond=0)
    db.session.commit()
    raffle.commit(campaign, sha256_hex("the seed"), beacon=BEACON, beacon_at=campaign.ends_at + timedelta(minutes=5))
    db.session.commit()


def drawn(campaign, names, prizes=2):
    """Committed; ``names`` judge honestly (a ticket every 10 answers); then
    the end and the beacon pass and the raffle is drawn. Returns the commitment."""
    committed(campaign)
    for n, name in enumerate(names):
        run(campaign, join(campaign, name), honest(random.Random(n)), limit=12)
    record = raffle.commitment(campaign)
    earlier = utcnow() - timedelta(hours=3)
    campaign.ends_at = record.draw_at = utcnow() - timedelta(minutes=2)
    record.beacon_at = campaign.ends_at + timedelta(minutes=1)
    record.committed_at = earlier - timedelta(hours=1)
    for ticket in db.session.scalars(select(Ticket)):
        ticket.created_at = earlier
    for user in db.session.scalars(select(User).where(User.email_confirmed_at.is_not(None))):
        user.email_confirmed_at = earlier
    db.session.commit()
    record = raffle.draw(campaign, "the seed", prizes, beacon="a1b2c3 beacon value")
    db.session.commit()
    assert len(record.winners) == prizes
    return record


def username_of(record, prize):
    ticket = next(w["ticket"] for w in record.winners if w["prize"] == prize)
    return db.session.scalar(select(User.username).join(Participation, Participation.user_id == User.id)
                             .join(Ticket, Ticket.participation_id == Participation.id)
                             .where(Ticket.number == ticket))


def notify_form(html, prize):
    return html.split(f'id="notify-{prize}"', 1)[1].split("</form>", 1)[0]


def test_each_notify_form_names_its_winner_and_says_when_it_was_sent(app, tmp_path, caplog):
    campaign = make_da_campaign(str(tmp_path / "da"))
    record = drawn(campaign, ("ane", "jon", "miren"))
    first, second = username_of(record, 1), username_of(record, 2)
    organiser = staff_client(app, "organiser", "boss")
    page = organiser.get("/organiser/c/test/raffle/winners").get_data(as_text=True)
    for prize, name in ((1, first), (2, second)):
        form = notify_form(page, prize)
        ticket = record.winners[prize - 1]["ticket"]
        assert f"Prize {prize}: ticket {ticket}, <bdi>{name}</bdi>" in form
        assert "Not sent yet." in form and "Send again" not in form
        assert f"Send the email to the winner of prize {prize} (<bdi>{name}</bdi>)" in form
    assert "boss@example.org" in page  # where the answers go, said before sending

    token = page.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    outbox.send_due(app.config)  # nothing but the winner's email after this
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="bozka.mail"):
        organiser.post("/organiser/c/test/raffle/notify", data={"csrf_token": token, "prize": "1"})
        mail = db.session.scalars(select(OutboxMail).order_by(OutboxMail.id.desc())).first()
        assert mail.recipient == f"{first}@example.org" and mail.reply_to == "boss@example.org"
        assert outbox.send_due(app.config) == 1
    (logged,) = [r.getMessage() for r in caplog.records if r.name == "bozka.mail"]
    assert "Reply-To: boss@example.org" in logged

    page = organiser.get("/organiser/c/test/raffle/winners").get_data(as_text=True)
    sent, waiting = notify_form(page, 1), notify_form(page, 2)
    db.session.refresh(record)
    with app.test_request_context():
        from app.formats import utc

        assert f"Sent <time datetime=\"{record.notified['1']}\">{utc(record.notified['1'])}</time>" in sent
    assert f"Send again to the winner of prize 1 (<bdi>{first}</bdi>)" in sent and "Not sent yet." not in sent
    assert "Send the email to the winner of prize 1" not in sent
    assert "Not sent yet." in waiting and "Send again" not in waiting


def test_the_mail_carries_its_reply_to_header():
    message = outbox.message_of("Bozka <noreply@bozka.test>", "ane@example.org", "Subject", "Body\n",
                                reply_to="boss@example.org")
    parsed = message_from_bytes(bytes(message))
    assert parsed["Reply-To"] == "boss@example.org" and parsed["To"] == "ane@example.org"
    assert "Reply-To" not in outbox.message_of("a@b.test", "c@d.test", "S", "B\n")


# --- 4. the volunteer's raffle page ----------------------------------------------------

PAIRWISE_RULE = "have not yet reached the first check of their control sentences"
DA_RULE = "left out by the analysis's quality test of their scores"


def test_the_raffle_page_explains_the_campaigns_own_protocol(app, make_campaign, tmp_path):
    make_campaign(sentences=12)
    pairwise = app.test_client().get("/c/test/raffle").get_data(as_text=True)
    assert PAIRWISE_RULE in pairwise and DA_RULE not in pairwise and "Direct Assessment" not in pairwise
    assert "quality checks" not in pairwise


def test_the_raffle_page_of_a_da_campaign(app, tmp_path):
    make_da_campaign(str(tmp_path / "da"))
    page = app.test_client().get("/c/test/raffle").get_data(as_text=True)
    assert DA_RULE in page and PAIRWISE_RULE not in page and "controls" not in page


def test_the_raffle_page_before_and_after_the_draw_in_the_volunteers_language(app, tmp_path):
    campaign = make_da_campaign(str(tmp_path / "da"))
    committed(campaign)
    before = app.test_client().get("/c/test/raffle").get_data(as_text=True)
    assert "The draw takes place once the campaign has closed" in before and 'id="drawn"' not in before
    assert f'<q class="beacon">{BEACON}</q>' in before and "Winning tickets" not in before
    db.session.delete(raffle.commitment(campaign))
    db.session.commit()

    record = drawn(campaign, ("ane", "jon", "miren"))
    page = app.test_client().get("/c/test/raffle").get_data(as_text=True)
    assert "takes place once" not in page and "The draw mixes" not in page
    drawn_text = page.split('<p id="drawn">', 1)[1].split("</p>", 1)[0]
    assert "The raffle was drawn on" in drawn_text and f'<q class="beacon">{BEACON}</q>' in drawn_text
    for winner in record.winners:
        assert f'<li data-prize="{winner["prize"]}">Prize {winner["prize"]}: ticket {winner["ticket"]} · ' in page
    assert "a1b2c3 beacon value" in page  # the value the draw used

    # In Basque for a volunteer who reads Basque: the times as Babel writes them there.
    volunteer = app.test_client()
    db.session.scalar(select(User).where(User.username == "ane")).locale = "eu"
    db.session.commit()
    from helpers import csrf_token

    volunteer.post("/login", data={"csrf_token": csrf_token(volunteer, "/login"), "email": "ane@example.org",
                                   "password": "password-123"})
    basque = volunteer.get("/c/test/raffle").get_data(as_text=True)
    with app.test_request_context(), force_locale("eu"):
        drawn_at = format_datetime(record.drawn_at, "medium")
    assert '<html lang="eu"' in basque and drawn_at in basque
    assert record.drawn_at.isoformat()[:10] not in basque  # Babel's style of the language, not ISO
