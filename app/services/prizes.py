"""The prize reaches its winner: who won (for organisers only) and the
email that tells them, in their own interface language."""
from flask_babel import force_locale, gettext as _, lazy_gettext as _l
from sqlalchemy import select

from ..extensions import db
from ..languages import mail_locale  # the one rule of a mail's language (the winner's, else the campaign's)
from ..models import Participation, Ticket, User
from . import outbox
from .campaign_texts import campaign_text
from .raffle import RaffleError, commitment


def winners(campaign):
    """The drawn winners in prize order, each with the account behind the
    ticket: prize, ticket, volunteer (pseudonym), username, email, locale,
    notified_at (ISO text or None). Empty before the draw."""
    record = commitment(campaign)
    if record is None or record.drawn_at is None or not record.winners:
        return []
    numbers = [winner["ticket"] for winner in record.winners]
    users = dict(
        db.session.execute(
            select(Ticket.number, User)
            .join(Participation, Participation.id == Ticket.participation_id)
            .join(User, User.id == Participation.user_id)
            .where(Ticket.campaign_id == campaign.id, Ticket.number.in_(numbers))
        ).all()
    )
    notified = record.notified or {}
    found = []
    for winner in record.winners:
        user = users[winner["ticket"]]
        found.append({**winner, "username": user.username, "email": user.email, "locale": user.locale,
                      "notified_at": notified.get(str(winner["prize"]))})
    return found


def winner_email(username, campaign_name, prize, ticket, link, note=""):
    """(subject, body) in the current locale (the caller forces the winner's)."""
    subject = _("You won the raffle of %(campaign)s", campaign=campaign_name)
    body = _("Hello %(name)s,\n\nCongratulations: you won prize %(prize)d in the raffle of %(campaign)s, with "
             "ticket %(ticket)d.\nThe draw and how to check it:\n%(link)s\n",
             name=username, prize=prize, campaign=campaign_name, ticket=ticket, link=link)
    if note:
        body += "\n" + _("A message from the organisers:") + "\n" + note + "\n"
    return subject, body


def notify(campaign, prize, config, link, note, now, reply_to=None):
    """Queue the email to the winner of ``prize`` and record when (the caller
    commits both; the outbox sends it); returns their entry. ``reply_to``:
    the sending organiser's email, so the winner's answer reaches a person."""
    entry = next((winner for winner in winners(campaign) if winner["prize"] == prize), None)
    if entry is None:
        raise RaffleError(_l("There is no winner of this prize."))
    locale = mail_locale(config["LANGUAGES"], entry["locale"], campaign.interface_language)
    with force_locale(locale):
        name = campaign_text(campaign, "name", locale).text
        subject, body = winner_email(entry["username"], name, prize, entry["ticket"], link, note)
    outbox.enqueue(entry["email"], subject, body, reply_to=reply_to)
    record = commitment(campaign)
    record.notified = {**(record.notified or {}), str(prize): now.isoformat(timespec="seconds") + "Z"}
    db.session.flush()
    return entry
