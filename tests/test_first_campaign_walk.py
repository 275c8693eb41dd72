"""What a newcomer's first campaign found misleading: a ticket confirmed
after the close, the draw's time, the README's steps, the "Ends at" label,
the password prompt, the import's output, a confirmation link used twice,
and the raffle page that said nothing of the volunteer's own tickets."""
import os
from datetime import timedelta

from flask_babel import format_datetime
from sqlalchemy import select

from app.extensions import db
from app.models import Participation, Ticket, User, utcnow
from app.services import accounts, lifecycle, raffle, rewards
from helpers import close_in_the_past, committed_campaign, register, staff_client, ticketed_volunteer, write_campaign

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEACON = "beacon value 42"


def user_of(name):
    return db.session.scalar(select(User).where(User.username == name))


def test_a_volunteer_who_confirms_after_the_close_is_told_their_tickets_are_not_in_the_draw(app, make_campaign):
    campaign = committed_campaign(make_campaign)
    ticketed_volunteer(app, "ane")
    late = ticketed_volunteer(app, "mikel", confirmed=False)
    close_in_the_past(campaign)
    page = late.get("/c/test/welcome").get_data(as_text=True)
    assert "your email was not confirmed by then" in page
    assert "only confirmed volunteers take part in the raffle" not in page  # confirming now would not help

    token = accounts.make_token(app.config["SECRET_KEY"], "confirm", user_of("mikel"))
    late.get(f"/confirm/{token}")
    assert user_of("mikel").is_confirmed
    told = "Your raffle numbers are not in the draw: the ticket list froze when the campaign closed"
    page = late.get("/c/test/welcome").get_data(as_text=True)
    assert told in page and "before you confirmed your email" in page
    mine = late.get("/c/test/raffle").get_data(as_text=True)
    assert 'id="my-tickets"' in mine and "before you confirmed your email" in mine

    raffle.draw(campaign, "the seed", 2, beacon=BEACON)
    db.session.commit()
    page = late.get("/c/test/welcome").get_data(as_text=True)
    assert "before you confirmed your email" in page  # after the draw too
    # The rule is the list's: ane, confirmed in time, is on it and was drawn.
    assert [w["volunteer"] for w in raffle.commitment(campaign).winners] == \
        [raffle.pseudonym(campaign, user_of("ane").id)]


def test_the_raffle_page_tells_a_volunteer_their_tickets_and_whether_they_won(app, make_campaign):
    campaign = committed_campaign(make_campaign)
    ane = ticketed_volunteer(app, "ane")
    mikel = ticketed_volunteer(app, "mikel")
    page = ane.get("/c/test/raffle").get_data(as_text=True)
    numbers = [t.number for t in db.session.scalars(
        select(Ticket).join(Participation).where(Participation.user_id == user_of("ane").id))]
    assert numbers and f"Your raffle number: <strong>{numbers[0]}</strong>" in page
    assert "Your raffle number is in the list for the draw." in page  # one number: the singular
    assert 'id="my-tickets"' not in app.test_client().get("/c/test/raffle").get_data(as_text=True)

    held = db.session.scalar(select(Participation).where(Participation.user_id == user_of("mikel").id))
    held.held_at, held.held_reason = utcnow() - timedelta(minutes=30), "same_side"
    rewards.list_changed(campaign.id)
    db.session.commit()
    assert "not in the draw while the organisers review your answers" in mikel.get("/c/test/raffle").get_data(
        as_text=True)

    close_in_the_past(campaign)
    raffle.draw(campaign, "the seed", 1, beacon=BEACON)
    db.session.commit()
    page = ane.get("/c/test/raffle").get_data(as_text=True)
    assert "Your raffle number was in the draw." in page
    assert f"You won prize 1 in the raffle, with ticket {numbers[0]}!" in page


def test_the_draw_time_is_the_same_on_the_dashboard_the_public_page_and_the_command_line(app, make_campaign):
    campaign = committed_campaign(make_campaign)
    record = raffle.commitment(campaign)
    # Closed early; the beacon comes out after the committed time, so it is the draw's time.
    campaign.status = "closed"
    raffle.note_status(campaign, utcnow())
    record.beacon_at = record.draw_at + timedelta(minutes=3)
    db.session.commit()
    earliest = raffle.draw_from(record)
    assert earliest == record.beacon_at
    assert lifecycle.of(campaign, utcnow()).draw_from == earliest
    with app.test_request_context():
        said = format_datetime(earliest, "medium")
    assert said in app.test_client().get("/c/test/raffle").get_data(as_text=True)
    assert said in staff_client(app, username="boss").get("/organiser/c/test/").get_data(as_text=True)
    result = app.test_cli_runner().invoke(args=["raffle", "draw", "test", "--seed", "the seed", "--beacon", "x"])
    assert result.exit_code != 0 and said in result.output and "wait until then" in result.output
    # With the committed time the later one, that is the time everywhere.
    record.beacon_at = record.draw_at + timedelta(minutes=1)
    record.draw_at += timedelta(minutes=2)
    db.session.commit()
    assert raffle.draw_from(record) == record.draw_at


def test_a_confirmation_link_used_twice_says_the_email_is_confirmed(app, client, make_campaign):
    make_campaign()
    register(client)
    token = accounts.make_token(app.config["SECRET_KEY"], "confirm", user_of("ane"))
    first = client.get(f"/confirm/{token}", follow_redirects=True).get_data(as_text=True)
    assert "your email is confirmed" in first
    again = app.test_client().get(f"/confirm/{token}")
    assert again.status_code == 302 and "/c/test/" in again.location
    page = app.test_client().get(f"/confirm/{token}", follow_redirects=True).get_data(as_text=True)
    assert "Your email is already confirmed." in page
    # A forged token learns nothing.
    page = app.test_client().get(f"/confirm/{token[:-2]}xx", follow_redirects=True).get_data(as_text=True)
    assert "invalid, already used or expired" in page and "already confirmed" not in page


def test_user_create_without_a_terminal_asks_for_password_option(app):
    result = app.test_cli_runner().invoke(args=["user", "create", "--role", "organiser", "--email",
                                                "o@example.org", "--username", "org"])
    assert result.exit_code == 1 and "no terminal to ask the password: give --password" in result.output
    assert "GetPassWarning" not in result.output and user_of("org") is None


def test_the_import_says_controls_are_generated_and_imported_open_is_not_a_draft(app, tmp_path):
    folder = write_campaign(str(tmp_path / "c"), systems=("A", "B"))
    runner = app.test_cli_runner()
    dry = runner.invoke(args=["campaign", "import", "--dry-run", folder])
    assert "2 systems (1 pair), controls generated for each volunteer" in dry.output, dry.output
    ends = (utcnow() + timedelta(days=2)).strftime("%Y-%m-%d %H:%M")
    beacon_at = (utcnow() + timedelta(days=2, hours=1)).strftime("%Y-%m-%d %H:%M")
    done = runner.invoke(args=["campaign", "import", folder, "--open", "--ends-at", ends, "--beacon", "drand",
                               "--beacon-at", beacon_at])
    assert done.exit_code == 0, done.output
    assert "Imported: test" in done.output and "as a draft" not in done.output and "is open now" in done.output


def test_the_end_field_says_it_is_needed_and_the_readme_tells_the_truth(app, make_campaign):
    make_campaign()
    page = staff_client(app, username="boss").get("/organiser/c/test/").get_data(as_text=True)
    assert "needed before the raffle commitment and opening" in page and "UTC, optional)" not in page.split(
        "Ends at")[1][:40]
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    assert "Closing early does not let you draw early" in readme and "--password" in readme
