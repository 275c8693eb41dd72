"""A campaign's lifecycle as its organiser walks it (README, "Running a
campaign"): a draft is imported; its end is set and the raffle's commitment
published; it opens (at once, or scheduled); it ends or is closed; the
raffle is drawn; the winners are told.

Every campaign has a raffle (``raffle_every`` is at least 1) and volunteers
win numbers from their first answers, so a campaign opens only once its
commitment is published: a commitment made after the first ticket could be
steered, and ``raffle.commit`` refuses it for good. Once drawn, nothing
about the campaign's status or dates changes.
"""
from dataclasses import dataclass

from flask_babel import lazy_gettext as _l
from sqlalchemy import select

from ..choices import CAMPAIGN_STATUSES
from ..extensions import db
from ..models import RaffleCommitment
from . import raffle
from .schedule import ENDED, UPCOMING, phase

DRAFT, READY, SCHEDULED, OPEN, CLOSED, DRAWN = "draft", "ready", "scheduled", "open", "closed", "drawn"


def stage(campaign, record, now):
    """Where the campaign stands: DRAFT (no commitment yet), READY (a draft
    with its commitment), SCHEDULED, OPEN, CLOSED (ended or closed, not
    drawn) or DRAWN. ``record`` is its raffle commitment, or None."""
    if record is not None and record.drawn_at is not None:
        return DRAWN
    where = phase(campaign.status, campaign.starts_at, campaign.ends_at, now)
    if where == ENDED:
        return CLOSED
    if campaign.status == "draft":
        return READY if record is not None else DRAFT
    return SCHEDULED if where == UPCOMING else OPEN


@dataclass
class Lifecycle:
    stage: str
    record: object  # the raffle commitment, or None
    may_commit: bool  # publishing the commitment can succeed now
    may_change: bool  # the status and dates may still change
    draw_from: object  # the earliest time of the draw (raffle.draw_from), or None
    may_draw: bool  # closed, committed, not drawn, that time passed: the draw's form is offered
    told: bool  # drawn, and every winner was sent their email


def of(campaign, now):
    """The campaign's ``Lifecycle`` now: what the dashboard shows and offers."""
    record = raffle.commitment(campaign)
    where = stage(campaign, record, now)
    draw_from = raffle.draw_from(record)
    told = where == DRAWN and len(record.notified or {}) >= len(record.winners or [])
    return Lifecycle(where, record, may_commit(campaign, record, now),
                     may_change(campaign, record, now), draw_from,
                     where == CLOSED and record is not None and (draw_from is None or now >= draw_from), told)


def statuses_offered(campaign, record):
    """The statuses the dashboard's form offers: "open" only once committed
    (or if it is open already, from before the commitment was required)."""
    keep_open = record is not None or campaign.status == "open"
    return [(code, label) for code, label in CAMPAIGN_STATUSES if code != "open" or keep_open]


def stages(campaigns, now):
    """{campaign id: stage} for a list of campaigns, their commitments read at once."""
    ids = [campaign.id for campaign in campaigns]
    records = {record.campaign_id: record for record in db.session.scalars(
        select(RaffleCommitment).where(RaffleCommitment.campaign_id.in_(ids)))} if ids else {}
    return {campaign.id: stage(campaign, records.get(campaign.id), now) for campaign in campaigns}


def may_commit(campaign, record, now):
    """Whether publishing the commitment can succeed now (the dashboard
    offers its form only then): none yet, an end time set, and the campaign
    not closed. ``raffle.commit`` checks the rest (no ticket yet)."""
    return record is None and campaign.ends_at is not None and stage(campaign, record, now) in (DRAFT, OPEN, SCHEDULED)


def may_change(campaign, record, now):
    """Whether the status and dates may still change at all: not once the
    raffle was drawn, nor once a committed campaign has closed."""
    return stage(campaign, record, now) not in (DRAWN, CLOSED) or record is None


def change_refused(campaign, record, status, starts_at, ends_at, now):
    """Why the organiser may not set ``status``, ``starts_at`` and ``ends_at``
    (from the dashboard or the command line), or None."""
    if starts_at is not None and ends_at is not None and ends_at <= starts_at:
        return _l("The end must come after the start.")
    if record is not None and record.drawn_at is not None:
        return _l("The raffle was drawn: the campaign's status and dates cannot change any more.")
    if status == "open" and record is None:
        return _l("Publish the raffle's commitment before the campaign opens: volunteers win raffle numbers from "
                  "their first answers, and a commitment made after the first ticket could be steered.")
    return raffle.change_refused(campaign, record, status, ends_at, now)


class Refused(ValueError):
    """A lifecycle step refused; its message (translated when shown) says why."""


def set_schedule(campaign, status, starts_at, ends_at, now, commitment=None, user_id=None):
    """Set the campaign's status and dates, as the dashboard's form and the
    command line do, after ``change_refused``. ``commitment``: (SHA-256 of
    the seed, beacon, beacon's time) to publish first, once the end is set,
    so that opening and committing are one step (the command line, the
    demo). Raises ``Refused``; the caller commits."""
    if commitment is not None:
        seed_sha256, beacon, beacon_at = commitment
        campaign.ends_at = ends_at  # the commitment names it as the time of the draw
        try:
            raffle.commit(campaign, seed_sha256, user_id=user_id, now=now, beacon=beacon, beacon_at=beacon_at)
        except raffle.RaffleError as exc:
            raise Refused(str(exc)) from None
    refused = change_refused(campaign, raffle.commitment(campaign), status, starts_at, ends_at, now)
    if refused:
        raise Refused(str(refused))
    campaign.status, campaign.starts_at, campaign.ends_at = status, starts_at, ends_at
    raffle.note_status(campaign, now)
