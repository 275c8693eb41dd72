"""The raffle: nobody can steer it, anyone can check it (docs/raffle.md).

Before the first ticket the organiser publishes SHA-256(seed) of a secret
seed, and the commitment names the time of the draw: the campaign's end.
After the campaign has closed, the draw reveals the seed; the winners
depend on the seed and on the SHA-256 of the final ticket list, and anyone
can recompute them with ``draw_winners`` (or ``scripts/verify_raffle.py``).
"""
import secrets

from flask_babel import format_datetime, lazy_gettext as _l
from sqlalchemy import select

from ..extensions import db
from ..models import Campaign, Participation, RaffleCommitment, Ticket, User, utcnow
from .pseudonyms import pseudonym
from .raffle_rules import draw_winners, sha256_hex, tickets_digest  # noqa: F401


class RaffleError(ValueError):
    """A refused raffle step; its message (translated when shown) says why."""


def new_seed():
    return secrets.token_hex(32)


def eligible_tickets(campaign):
    """(number, pseudonym) of tickets of confirmed volunteers who are neither
    dismissed nor held for review."""
    rows = db.session.execute(
        select(Ticket.number, User.id)
        .join(Participation, Participation.id == Ticket.participation_id)
        .join(User, User.id == Participation.user_id)
        .where(
            Ticket.campaign_id == campaign.id,
            Ticket.voided_at.is_(None),
            Participation.dismissed_at.is_(None),
            Participation.held_at.is_(None),
            User.email_confirmed_at.is_not(None),
        )
        .order_by(Ticket.number)
    ).all()
    return [(number, pseudonym(campaign, user_id)) for number, user_id in rows]


def published_tickets(campaign):
    """The list the draw used once drawn; before that, today's eligible tickets."""
    record = commitment(campaign)
    if record is not None and record.drawn_at is not None:
        return [tuple(ticket) for ticket in record.tickets]
    return eligible_tickets(campaign)


def commitment(campaign):
    return db.session.scalar(select(RaffleCommitment).where(RaffleCommitment.campaign_id == campaign.id))


def is_closed(campaign, now):
    """Closed by the organiser, or past its end: no ticket is won any more."""
    return campaign.status == "closed" or (campaign.ends_at is not None and now >= campaign.ends_at)


def has_tickets(campaign):
    """Whether any ticket was ever won in this campaign, void ones included."""
    return db.session.scalar(select(Ticket.id).where(Ticket.campaign_id == campaign.id).limit(1)) is not None


def commit(campaign, seed_sha256, user_id=None, now=None):
    """Publish SHA-256(seed); the draw will take place at the campaign's end."""
    now = now or utcnow()
    seed_sha256 = seed_sha256.strip().lower()
    if len(seed_sha256) != 64 or any(c not in "0123456789abcdef" for c in seed_sha256):
        raise RaffleError(_l("The commitment must be a SHA-256 in hexadecimal (64 characters)."))
    if commitment(campaign) is not None:
        raise RaffleError(_l("This campaign's raffle commitment is already published."))
    if is_closed(campaign, now):
        raise RaffleError(_l("The commitment must be published before the campaign closes."))
    if campaign.ends_at is None:
        raise RaffleError(_l("Set the campaign's end time first: the commitment names it as the time of the draw."))
    if has_tickets(campaign):
        # Once tickets exist, an organiser who knows the seed could pick a
        # moment to commit that favours someone.
        raise RaffleError(_l("The commitment must be published before the first raffle ticket is won."))
    record = RaffleCommitment(campaign_id=campaign.id, seed_sha256=seed_sha256, committed_by=user_id,
                              committed_at=now, draw_at=campaign.ends_at)
    db.session.add(record)
    db.session.flush()
    return record


def end_too_early(record, ends_at):
    """The committed draw time when the campaign's end may not move to
    ``ends_at``, else None: once committed, the end may move later but never
    before the draw's time, or the organiser could close the ticket list at
    a moment of their choice. Compared to the minute, as the form sends it."""
    if record is None or record.drawn_at is not None or record.draw_at is None:
        return None
    if ends_at is None or ends_at < record.draw_at.replace(second=0, microsecond=0):
        return record.draw_at
    return None


def draw(campaign, seed, prizes, now=None):
    """Reveal the seed and draw from the final ticket list; refuses a seed
    that does not match and a draw before the time the commitment named."""
    now = now or utcnow()
    record = commitment(campaign)
    if record is None:
        raise RaffleError(_l("No commitment was published for this campaign."))
    if record.drawn_at is not None:
        raise RaffleError(_l("The raffle was already drawn."))
    if not is_closed(campaign, now):
        raise RaffleError(_l("The draw is possible only after the campaign has closed."))
    if record.draw_at is not None and now < record.draw_at:
        raise RaffleError(_l("The commitment names %(time)s UTC as the time of the draw: wait until then.",
                             time=format_datetime(record.draw_at, "medium")))
    if sha256_hex(seed) != record.seed_sha256:
        raise RaffleError(_l("This seed does not match the published SHA-256."))
    if prizes < 1:
        raise RaffleError(_l("At least one prize."))
    tickets = eligible_tickets(campaign)
    record.seed = seed
    record.prizes = prizes
    record.drawn_at = now
    record.tickets = [list(ticket) for ticket in tickets]
    record.tickets_sha256 = tickets_digest(tickets)
    record.winners = draw_winners(seed, tickets, prizes)
    db.session.flush()
    return record


def prizes_won(campaign, user_id):
    """The winners' entries ({prize, ticket, volunteer}) of this volunteer."""
    record = commitment(campaign)
    if record is None or record.drawn_at is None:
        return []
    mine = pseudonym(campaign, user_id)
    return [winner for winner in record.winners if winner["volunteer"] == mine]


def campaign_by_slug(slug):
    return db.session.scalar(select(Campaign).where(Campaign.slug == slug))
