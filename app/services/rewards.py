"""Raffle tickets: one for every ``raffle_every`` items answered."""
from sqlalchemy import bindparam, select, update

from ..extensions import db
from ..models import Campaign, Ticket


def earns_ticket(position, raffle_every=10):
    return position > 0 and position % raffle_every == 0


def award_ticket(campaign_id, participation_id, position, now):
    """Give the next ticket number of the campaign; numbers never repeat."""
    number = db.session.execute(
        update(Campaign)
        .where(Campaign.id == campaign_id)
        .values(next_ticket=Campaign.next_ticket + 1)
        .returning(Campaign.next_ticket)
    ).scalar_one() - 1
    ticket = Ticket(
        campaign_id=campaign_id,
        participation_id=participation_id,
        number=number,
        item_position=position,
        created_at=now,
    )
    db.session.add(ticket)
    return ticket


_TICKET_NUMBERS = (
    select(Ticket.number)
    .where(Ticket.participation_id == bindparam("participation_id"), Ticket.voided_at.is_(None))
    .order_by(Ticket.number)
)  # built once: every answer's response lists the volunteer's tickets


def ticket_numbers(participation_id):
    """The volunteer's valid ticket numbers, in the order won."""
    return list(db.session.scalars(_TICKET_NUMBERS, {"participation_id": participation_id}))


def void_tickets(participation_id, now):
    db.session.execute(
        update(Ticket)
        .where(Ticket.participation_id == participation_id, Ticket.voided_at.is_(None))
        .values(voided_at=now)
    )
