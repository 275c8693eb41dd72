"""The raffle: nobody can steer it, anyone can check it (docs/raffle.md).

Before the first ticket the organiser publishes SHA-256(seed) of a secret
seed, and the commitment names the campaign's end and a public beacon (a
lottery's draw, a drand round) published after it. The ticket list freezes
at the close: no void, no hold cleared, no re-opening. The draw reveals the
seed and takes the beacon's value; the winners depend on both and on the
SHA-256 of the frozen list, so nobody knew them while the list could still
change, and anyone can check them with ``scripts/verify_raffle.py``.
"""
import secrets
from dataclasses import dataclass

from flask_babel import format_datetime, lazy_gettext as _l
from sqlalchemy import select

from ..extensions import db
from ..models import Campaign, Participation, RaffleCommitment, Ticket, utcnow
from . import raffle_list
from .pseudonyms import pseudonym
from .rewards import latest_tickets_of
from .schedule import is_closed
from .raffle_rules import draw_winners, iso, normal_beacon, sha256_hex, tickets_digest  # noqa: F401


class RaffleError(ValueError):
    """A refused raffle step; its message (translated when shown) says why."""


def new_seed():
    return secrets.token_hex(32)


def eligible_tickets(campaign, now=None):
    """(number, pseudonym) of the valid tickets of confirmed volunteers who
    count (``counting``: not dismissed, not held for review, not left out by
    the analysis's judge test, not untested); once the list froze
    (``frozen_at``), as they were at that moment. Read from the list each
    process keeps (``raffle_list``), the one whose SHA-256 is published."""
    now = now or utcnow()
    return raffle_list.tickets(campaign, frozen_at(campaign, commitment(campaign), now), now)


def published_now(campaign, now=None):
    """The list's ``raffle_list.Published`` figures (SHA-256, length, latest voids)."""
    now = now or utcnow()
    return raffle_list.published(campaign, frozen_at(campaign, commitment(campaign), now), now)


def list_counts_now(campaign, now=None):
    """(valid tickets, tickets on the published list) now, counted without
    reading the list (``raffle_list.valid``, ``length``): the dashboard's figures."""
    now = now or utcnow()
    return raffle_list.valid(campaign), raffle_list.length(campaign, frozen_at(campaign, commitment(campaign), now))


def voids(campaign):
    """Every voided ticket of the campaign (number, pseudonym, voided_at), in
    the order voided: published, so that no void goes unseen (voids.csv)."""
    rows = db.session.execute(
        select(Ticket.number, Participation.user_id, Ticket.voided_at)
        .join(Participation, Participation.id == Ticket.participation_id)
        .where(Ticket.campaign_id == campaign.id, Ticket.voided_at.is_not(None))
        .order_by(Ticket.voided_at, Ticket.number)
    )
    return ((number, pseudonym(campaign, user_id), voided_at) for number, user_id, voided_at in rows)


def published_tickets(campaign):
    """The list the draw used once drawn; before that, today's eligible tickets."""
    record = commitment(campaign)
    if record is not None and record.drawn_at is not None:
        return [tuple(ticket) for ticket in record.tickets]
    return eligible_tickets(campaign)


def published_csv(campaign):
    """The published ticket list as CSV lines (bytes): after the draw, the
    list the draw used; before, today's eligible tickets."""
    record = commitment(campaign)
    if record is not None and record.drawn_at is not None:
        return "".join(f"{number},{holder}\n" for number, holder in record.tickets).encode()
    now = utcnow()
    return raffle_list.body(campaign, frozen_at(campaign, record, now), now)


def public_record(campaign, now=None):
    """What ``/c/<slug>/raffle.json`` publishes, plain values: everything
    ``raffle_rules.check_draw`` needs but the ticket list and the beacon's
    value, which a checker takes from their own copy and from the beacon.
    Of the voids, the latest ``raffle_list.VOIDS_SHOWN`` (a void after the
    close, which the check looks for, would be among them) and their number;
    voids.csv lists them all."""
    now = now or utcnow()
    record = commitment(campaign)
    frozen = frozen_at(campaign, record, now)
    listed = raffle_list.published(campaign, frozen, now)
    drawn = record is not None and record.drawn_at is not None
    made = {"campaign": campaign.slug, "commitment": None, "closed_at": iso(frozen),
            "voids": [{"ticket": number, "volunteer": holder, "voided_at": iso(at)}
                      for number, holder, at in listed.voids],
            "voids_count": listed.void_count,
            "tickets_sha256": record.tickets_sha256 if drawn else listed.digest, "draw": None}
    if record is not None:
        made["commitment"] = {"seed_sha256": record.seed_sha256, "committed_at": iso(record.committed_at),
                              "draw_at": iso(record.draw_at), "beacon": record.beacon,
                              "beacon_at": iso(record.beacon_at)}
        if drawn:
            made["draw"] = {"drawn_at": iso(record.drawn_at), "seed": record.seed, "beacon_value": record.beacon_value,
                            "prizes": record.prizes, "tickets_sha256": record.tickets_sha256,
                            "winners": record.winners}
    return made


def commitment(campaign):
    return db.session.scalar(select(RaffleCommitment).where(RaffleCommitment.campaign_id == campaign.id))


def frozen_at(campaign, record, now):
    """When the ticket list froze, or None while it may still change: the
    organiser's early close (stamped by ``note_status``), else the campaign's
    end once past, else (a close nobody stamped) the end or now."""
    if record is not None and record.closed_at is not None:
        return record.closed_at
    if campaign.ends_at is not None and now >= campaign.ends_at:
        return campaign.ends_at
    if campaign.status == "closed":
        return campaign.ends_at or now
    return None


def has_tickets(campaign):
    """Whether any ticket was ever won in this campaign, void ones included."""
    return db.session.scalar(select(Ticket.id).where(Ticket.campaign_id == campaign.id).limit(1)) is not None


def commit(campaign, seed_sha256, user_id=None, now=None, beacon=None, beacon_at=None):
    """Publish SHA-256(seed) and the beacon the draw will use: ``beacon``
    names it (what to read, where), ``beacon_at`` is when its value is
    published, after the campaign's end; the draw takes place after both."""
    now = now or utcnow()
    seed_sha256 = seed_sha256.strip().lower()
    beacon = " ".join((beacon or "").split())
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
    check_beacon(campaign, beacon, beacon_at)
    record = RaffleCommitment(campaign_id=campaign.id, seed_sha256=seed_sha256, committed_by=user_id,
                              committed_at=now, draw_at=campaign.ends_at, beacon=beacon, beacon_at=beacon_at)
    db.session.add(record)
    db.session.flush()
    return record


def check_beacon(campaign, beacon, beacon_at):
    """Refuses a beacon with no name, or whose value comes out before the
    campaign's end: its value must be unknown while the list can change."""
    if not beacon:
        raise RaffleError(_l("Name the public draw or beacon whose value the draw will use."))
    if beacon_at is None or beacon_at <= campaign.ends_at:
        raise RaffleError(_l("The beacon's value must be published after the campaign's end (%(time)s UTC).",
                             time=format_datetime(campaign.ends_at, "medium")))


def name_beacon(campaign, beacon, beacon_at, now=None):
    """Name the beacon of a commitment made before beacons were required,
    while the campaign is still open."""
    now = now or utcnow()
    record = commitment(campaign)
    if record is None:
        raise RaffleError(_l("No commitment was published for this campaign."))
    if record.beacon is not None:
        raise RaffleError(_l("This commitment already names its beacon."))
    if is_closed(campaign, now):
        raise RaffleError(_l("The beacon must be named before the campaign closes."))
    beacon = " ".join((beacon or "").split())
    check_beacon(campaign, beacon, beacon_at)
    record.beacon, record.beacon_at = beacon, beacon_at
    db.session.flush()
    return record


def _minute(moment):
    return None if moment is None else moment.replace(second=0, microsecond=0)


def change_refused(campaign, record, status, ends_at, now):
    """Why the campaign's status and end may not become ``status`` and
    ``ends_at`` (the form's, to the minute), or None. Once committed
    (``record``): before the close the end may move later, never before the
    committed draw time nor to the beacon's; after the close, nothing
    re-opens the campaign."""
    if record is None:
        return None
    if is_closed(campaign, now):
        if (status != "closed" and campaign.status == "closed") or status == "draft" \
                or _minute(ends_at) != _minute(campaign.ends_at):
            return _l("The campaign has closed and its raffle is committed: it cannot re-open, and its end cannot "
                      "move.")
        return None
    if record.draw_at is not None and (ends_at is None or ends_at < _minute(record.draw_at)):
        return _l("The raffle commitment names %(time)s UTC as the time of the draw: the campaign cannot end "
                  "earlier.", time=format_datetime(record.draw_at, "medium"))
    if record.beacon_at is not None and (ends_at is None or ends_at >= record.beacon_at):
        return _l("The raffle's beacon is published at %(time)s UTC: the campaign must end before it.",
                  time=format_datetime(record.beacon_at, "medium"))
    return None


def note_status(campaign, now):
    """After the campaign's settings were saved: an organiser's close stamps
    the moment the ticket list froze (the end, if that came first)."""
    record = commitment(campaign)
    if record is not None and record.closed_at is None and campaign.status == "closed":
        record.closed_at = min(now, campaign.ends_at) if campaign.ends_at else now
        db.session.flush()


def draw_from(record):
    """The earliest time of the draw: the later of the time the commitment
    names and the beacon's publication (None without a commitment). The
    dashboard, the public page and ``draw`` all say and use this one."""
    if record is None or record.draw_at is None:
        return None
    return max(record.draw_at, record.beacon_at or record.draw_at)


def list_frozen(campaign, now):
    """Whether the committed raffle's ticket list froze and was not drawn
    yet: a hold cleared now would change it."""
    record = commitment(campaign)
    return record is not None and record.drawn_at is None and frozen_at(campaign, record, now) is not None


def draw(campaign, seed, prizes, now=None, beacon=None):
    """Reveal the seed, take the beacon's value and draw from the list as
    it froze; refuses a seed that does not match, and a draw before the
    time the commitment named or before the beacon's value is out."""
    now = now or utcnow()
    beacon = normal_beacon(beacon)
    record = commitment(campaign)
    if record is None:
        raise RaffleError(_l("No commitment was published for this campaign."))
    if record.drawn_at is not None:
        raise RaffleError(_l("The raffle was already drawn."))
    if not is_closed(campaign, now):
        raise RaffleError(_l("The draw is possible only after the campaign has closed."))
    earliest = draw_from(record)
    if earliest is not None and now < earliest:
        raise RaffleError(_l("The draw may take place from %(time)s UTC (the later of the time named in the "
                             "commitment and the beacon's publication): wait until then.",
                             time=format_datetime(earliest, "medium")))
    if record.beacon is None:
        raise RaffleError(_l("This commitment names no beacon, so its draw could be steered: name one "
                             "(flask raffle beacon) before the campaign closes."))
    if sha256_hex(seed) != record.seed_sha256:
        raise RaffleError(_l("This seed does not match the published SHA-256."))
    if not beacon:
        raise RaffleError(_l("Type the beacon's value as it was published."))
    if prizes < 1:
        raise RaffleError(_l("At least one prize."))
    # Read afresh from the database, not from this process's copy: the list
    # as it froze is the one drawn (the same as published, unless a change
    # bypassed rewards.list_changed).
    raffle_list.forget(campaign.id)
    tickets = eligible_tickets(campaign, now)
    record.closed_at = frozen_at(campaign, record, now)
    record.seed = seed
    record.beacon_value = beacon
    record.prizes = prizes
    record.drawn_at = now
    record.tickets = [list(ticket) for ticket in tickets]
    record.tickets_sha256 = tickets_digest(tickets)
    record.winners = draw_winners(seed, tickets, prizes, beacon)
    db.session.flush()
    return record


def prizes_won(campaign, user_id):
    """The winners' entries ({prize, ticket, volunteer}) of this volunteer."""
    record = commitment(campaign)
    if record is None or record.drawn_at is None:
        return []
    mine = pseudonym(campaign, user_id)
    return [winner for winner in record.winners if winner["volunteer"] == mine]


UNCONFIRMED, CONFIRMED_LATE = "unconfirmed", "confirmed late"  # besides quality.left_out_volunteer's codes


@dataclass(frozen=True)
class Standing:
    """A volunteer's tickets in the raffle, as their pages show them."""

    count: int  # valid tickets
    latest: tuple  # the latest few numbers (rewards.LATEST_SHOWN), in the order won
    in_draw: bool  # some are on the published list (after the draw: the list drawn)
    why_out: str  # when not in the draw, why (UNCONFIRMED, CONFIRMED_LATE or a quality.WHO_COUNTS code), else None
    frozen: object  # when the list froze, or None
    drawn: bool
    won: list  # the winners' entries of this volunteer


def standing(campaign, participation, user, now=None):
    """The volunteer's ``Standing``: whether they are on the list is the
    list's own rule (``raffle_list.holders``) for their one row."""
    now = now or utcnow()
    record = commitment(campaign)
    frozen = frozen_at(campaign, record, now)
    drawn = record is not None and record.drawn_at is not None
    count = participation.tickets_valid
    latest = tuple(latest_tickets_of([participation.id])[participation.id]) if count else ()
    states = raffle_list.holders(campaign, frozen, participation.id)
    in_draw = states[None] > 0
    why_out = None
    if count and not in_draw:
        left_out = [state for state, n in states.items() if state and n]
        if left_out:
            why_out = left_out[0]
        elif user.email_confirmed_at is None:
            why_out = UNCONFIRMED
        else:  # confirmed, but not before the list froze
            why_out = CONFIRMED_LATE
    won = prizes_won(campaign, user.id) if drawn else []
    return Standing(count, latest, in_draw, why_out, frozen, drawn, won)


def campaign_by_slug(slug):
    return db.session.scalar(select(Campaign).where(Campaign.slug == slug))
