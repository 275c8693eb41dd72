"""Raffle tickets: one for every ``raffle_every`` items answered."""
from sqlalchemy import bindparam, func, insert, select, update

from ..extensions import db
from ..database import at_commit, committed, dialect_name, execute
from ..models import Campaign, Participation, Ticket
from .schedule import is_closed


def earns_ticket(position, raffle_every=10):
    return position > 0 and position % raffle_every == 0


def to_next_ticket(answered, raffle_every=10):
    """How many more answers that count win the next ticket (1 .. raffle_every)."""
    return raffle_every - answered % raffle_every


def award_ticket(campaign_id, participation_id, position, now):
    """Give the next ticket number of the campaign; numbers never repeat.
    The number, or on PostgreSQL None: the ticket is made with the commit
    (``ticket_made_at_commit`` tells its number afterwards), so the
    campaign's row, which every ticket changes, is locked only while the
    transaction commits (``database.at_commit``), after the sentence and slot
    it answered: the lock order of ``assignment``."""
    params = {"campaign_id": campaign_id, "participation_id": participation_id, "position": position, "now": now}
    execute(_VALID_MOVED, {"participation_id": participation_id, "delta": 1})
    if dialect_name() == "postgresql":
        at_commit(_TICKET_AT_COMMIT, params, key=_TICKET)
        return None
    number = execute(_take_number, {"campaign_id": campaign_id}).scalar() - 1
    execute(_INSERT_TICKET, {**params, "number": number})
    return number


# A volunteer's count of valid tickets, moved by one award or void (relative:
# the commit's counters statement leaves the column alone).
_VALID_MOVED = (
    update(Participation.__table__)
    .where(Participation.id == bindparam("participation_id"))
    .values(tickets_valid=Participation.tickets_valid + bindparam("delta", type_=Participation.tickets_valid.type))
)


def ticket_voided(participation_id):
    """Count one of the volunteer's tickets void (``review.void_ticket``)."""
    execute(_VALID_MOVED, {"participation_id": participation_id, "delta": -1})


def recount_valid(campaign_id):
    """Set every volunteer's count of valid tickets from the tickets (a
    repair, and for benchmarks that build states by inserting rows)."""
    valid = select(func.count(Ticket.id)).where(Ticket.participation_id == Participation.id,
                                                Ticket.voided_at.is_(None)).scalar_subquery()
    db.session.execute(update(Participation).where(Participation.campaign_id == campaign_id)
                       .values(tickets_valid=valid))


# Takes the campaign's next ticket number.
_take_number = (
    update(Campaign.__table__)
    .where(Campaign.id == bindparam("campaign_id"))
    .values(next_ticket=Campaign.next_ticket + 1)
    .returning(Campaign.next_ticket)
)
# A ticket's columns but its number, from the parameters of award_ticket.
_ticket_values = {
    "campaign_id": bindparam("campaign_id", type_=Ticket.campaign_id.type),
    "participation_id": bindparam("participation_id", type_=Ticket.participation_id.type),
    "item_position": bindparam("position", type_=Ticket.item_position.type),
    "created_at": bindparam("now", type_=Ticket.created_at.type),
}
# SQLite (one writer at a time): the number, then the ticket.
_INSERT_TICKET = insert(Ticket).values(**_ticket_values, number=bindparam("number", type_=Ticket.number.type))
# PostgreSQL: one statement takes the number and inserts the ticket.
_counted = _take_number.cte("counted")
_TICKET_AT_COMMIT = (
    insert(Ticket)
    .from_select(
        [*_ticket_values, "number"],
        select(*_ticket_values.values(), _counted.c.next_ticket - 1).select_from(_counted),
    )
    .returning(Ticket.number)
    .add_cte(_counted)
)
_TICKET = "ticket"


def ticket_made_at_commit():
    """The number of the ticket the last commit made (PostgreSQL), or None."""
    rows = committed(_TICKET)
    return rows[0][0] if rows else None


def ticket_numbers(participation_id):
    """The volunteer's valid ticket numbers, in the order won."""
    return ticket_numbers_of([participation_id])[participation_id]


_TICKETS_OF = (
    select(Ticket.participation_id, Ticket.number)
    .where(Ticket.participation_id.in_(bindparam("participation_ids", expanding=True)), Ticket.voided_at.is_(None))
    .order_by(Ticket.participation_id, Ticket.number)
)


def ticket_numbers_of(participation_ids):
    """Each volunteer's valid ticket numbers, in the order won, in one query."""
    numbers = {participation_id: [] for participation_id in participation_ids}
    if numbers:
        for participation_id, number in db.session.execute(_TICKETS_OF, {"participation_ids": list(numbers)}):
            numbers[participation_id].append(number)
    return numbers


# Moves the campaign's raffle_version (raffle_list reads it).
_LIST_CHANGED = (
    update(Campaign.__table__)
    .where(Campaign.id == bindparam("campaign_id"))
    .values(raffle_version=Campaign.raffle_version + 1)
)


def list_changed(campaign_id):
    """Say that who counts or a ticket's validity changed in this campaign
    (a void, a dismissal, a hold or its release, an email confirmed): the
    campaign's ``raffle_version`` moves with the commit, so every process's
    cached list (``raffle_list``) is read again at its next view. With the
    commit: the campaign's row is locked last, as for a ticket."""
    at_commit(_LIST_CHANGED, {"campaign_id": campaign_id})


LATEST_SHOWN = 5  # a reply or live message carries the count and these latest numbers


def latest(tickets):
    """The latest ``LATEST_SHOWN`` of a volunteer's ticket numbers (in the order won)."""
    return tuple(tickets[-LATEST_SHOWN:])


_RECENT = func.row_number().over(partition_by=Ticket.participation_id, order_by=Ticket.number.desc())
_LATEST_OF = (
    select(Ticket.participation_id, Ticket.number)
    .where(Ticket.participation_id.in_(bindparam("participation_ids", expanding=True)), Ticket.voided_at.is_(None))
    .add_columns(_RECENT.label("recent"))
    .subquery()
)
_LATEST_TICKETS_OF = (
    select(_LATEST_OF.c.participation_id, _LATEST_OF.c.number)
    .where(_LATEST_OF.c.recent <= LATEST_SHOWN)
    .order_by(_LATEST_OF.c.participation_id, _LATEST_OF.c.number)
)


def latest_tickets_of(participation_ids):
    """Each volunteer's latest ``LATEST_SHOWN`` valid ticket numbers, in the
    order won, in one query: what the live personal message carries."""
    numbers = {participation_id: [] for participation_id in participation_ids}
    if numbers:
        for participation_id, number in db.session.execute(_LATEST_TICKETS_OF,
                                                           {"participation_ids": list(numbers)}):
            numbers[participation_id].append(number)
    return numbers


def void_tickets(participation_id, now):
    """Void the volunteer's valid tickets, unless the campaign has closed:
    the raffle's list froze then, and a void after it would change the draw
    (a dismissal after the close keeps the tickets in the frozen list).
    Called on every dismissal, it tells the raffle's list (``list_changed``)."""
    campaign = db.session.scalar(
        select(Campaign).join(Participation, Participation.campaign_id == Campaign.id)
        .where(Participation.id == participation_id)
    )
    if campaign is not None:
        list_changed(campaign.id)
    if campaign is not None and is_closed(campaign, now):
        return
    db.session.execute(
        update(Ticket)
        .where(Ticket.participation_id == participation_id, Ticket.voided_at.is_(None))
        .values(voided_at=now)
    )
    db.session.execute(update(Participation.__table__).where(Participation.id == participation_id)
                       .values(tickets_valid=0))
