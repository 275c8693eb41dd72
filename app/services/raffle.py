"""The raffle: reproducible and auditable (docs/raffle.md).

Before the campaign closes the organiser publishes SHA-256(seed) of a secret
seed. The draw reveals the seed; anyone can check the hash and recompute the
winners from the published ticket list with ``draw_winners`` (or
``scripts/verify_raffle.py``): the same seed and tickets always give the same
winners.
"""
import secrets

from flask_babel import lazy_gettext as _l
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
    """(number, pseudonym) of tickets of confirmed, not dismissed volunteers."""
    rows = db.session.execute(
        select(Ticket.number, User.id)
        .join(Participation, Participation.id == Ticket.participation_id)
        .join(User, User.id == Participation.user_id)
        .where(
            Ticket.campaign_id == campaign.id,
            Ticket.voided_at.is_(None),
            Participation.dismissed_at.is_(None),
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


def commit(campaign, seed_sha256, user_id=None):
    seed_sha256 = seed_sha256.strip().lower()
    if len(seed_sha256) != 64 or any(c not in "0123456789abcdef" for c in seed_sha256):
        raise RaffleError(_l("The commitment must be a SHA-256 in hexadecimal (64 characters)."))
    if commitment(campaign) is not None:
        raise RaffleError(_l("This campaign's raffle commitment is already published."))
    if campaign.status == "closed":
        raise RaffleError(_l("The commitment must be published before the campaign closes."))
    record = RaffleCommitment(campaign_id=campaign.id, seed_sha256=seed_sha256, committed_by=user_id)
    db.session.add(record)
    db.session.flush()
    return record


def draw(campaign, seed, prizes):
    """Reveal the seed and draw; refuses a seed that does not match."""
    record = commitment(campaign)
    if record is None:
        raise RaffleError(_l("No commitment was published for this campaign."))
    if record.drawn_at is not None:
        raise RaffleError(_l("The raffle was already drawn."))
    if sha256_hex(seed) != record.seed_sha256:
        raise RaffleError(_l("This seed does not match the published SHA-256."))
    if prizes < 1:
        raise RaffleError(_l("At least one prize."))
    tickets = eligible_tickets(campaign)
    record.seed = seed
    record.prizes = prizes
    record.drawn_at = utcnow()
    record.tickets = [list(ticket) for ticket in tickets]
    record.tickets_sha256 = tickets_digest(tickets)
    record.winners = draw_winners(seed, tickets, prizes)
    db.session.flush()
    return record


def campaign_by_slug(slug):
    return db.session.scalar(select(Campaign).where(Campaign.slug == slug))
