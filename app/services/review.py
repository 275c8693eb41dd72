"""What an organiser sees and decides about one volunteer (issue 18, item 3).

The page shows the evidence; the decisions are three: clear a hold, dismiss,
void one ticket. Each works inside the caller's transaction on a
participation locked with ``locked_volunteer`` (a judgment of the same
volunteer waits meanwhile), and refuses, changing nothing, with a
``ReviewError`` whose message says why.
"""
from dataclasses import dataclass, field

from flask_babel import lazy_gettext as _l
from sqlalchemy import func, select

from .. import protocols
from ..extensions import db
from ..models import Item, Participation, Ticket, User, utcnow
from . import answers, raffle, rewards
from .assignment import lock_participation


class ReviewError(ValueError):
    """A refused decision; its message (translated when shown) says why."""


def share(part, whole):
    """part / whole, or None when there is nothing to divide."""
    return part / whole if whole else None


def longest_run(flags):
    """The longest run of true values in ``flags`` (oldest first)."""
    longest = current = 0
    for flag in flags:
        current = current + 1 if flag else 0
        longest = max(longest, current)
    return longest


@dataclass
class Signs:
    """The evidence of the signs that hold a volunteer, over their test answers."""

    left: int = 0
    right: int = 0
    equal: int = 0
    # Every test answer, scores too: DA's have no side, so the three above add up to 0 there.
    tests: int = 0
    too_fast: int = 0
    fast_run: int = 0  # longest run of answers below the reading floor
    crowd_equal: float = None  # the share of "equal" of the crowd without the volunteer, for comparison
    # The signs' own counters, since joining or the last cleared hold.
    since_clear: dict = field(default_factory=dict)

    @property
    def side_share(self):
        """Share of the side chosen more often, "equal" left out (as the sign reads it)."""
        return share(max(self.left, self.right), self.left + self.right)

    @property
    def equal_share(self):
        return share(self.equal, self.tests)


def read_signs(choices_and_speed, crowd_equal=None, since_clear=None):
    """Signs from (choice, too_fast) of the test answers, oldest first."""
    answered = list(choices_and_speed)
    count = {choice: sum(1 for c, _fast in answered if c == choice) for choice in ("left", "right", "equal")}
    fast = [bool(too_fast) for _c, too_fast in answered]
    return Signs(
        left=count["left"], right=count["right"], equal=count["equal"], tests=len(answered), too_fast=sum(fast),
        fast_run=longest_run(fast), crowd_equal=crowd_equal, since_clear=since_clear or {},
    )


@dataclass
class Record:
    participation: Participation
    user: User
    address_group: int  # accounts of this campaign registered from the same address
    judgments: list
    tickets: list
    signs: Signs
    # The protocol's part of the page and the signs that apply (protocols: REVIEW, SIGNS).
    template: str = None
    signs_shown: tuple = ()

    @property
    def controls(self):
        return [judgment for judgment in self.judgments if judgment.control]

    @property
    def quality(self):
        """The protocol's quality-control evidence, when its judgments carry
        one (DA and ESA: ``score_quality.Evidence``), else None."""
        return getattr(self.judgments, "quality", None)

    @property
    def counted_note(self):
        """Why the answers that count do not count now: "held" (not until
        the hold is cleared), "dismissed" (discarded), or None
        (``quality.left_out_volunteer``: the dashboard's rule)."""
        if self.participation.is_dismissed:
            return "dismissed"
        return "held" if self.participation.is_held else None


JUDGMENTS_PAGE = 10  # rows of the judgments table a page shows: about two screens on a phone


@dataclass
class Page:
    """One page of a long list: its rows, its number (from 1) and the count of pages."""

    rows: list
    number: int
    pages: int
    first: int  # the position in the list of its first row (from 1), 0 when empty
    total: int


def page_of(rows, number, size=JUDGMENTS_PAGE):
    """Page ``number`` of ``rows`` (a number out of range: the nearest page)."""
    pages = max(1, -(-len(rows) // size))
    number = min(max(1, number or 1), pages)
    start = (number - 1) * size
    return Page(rows[start:start + size], number, pages, start + 1 if rows else 0, len(rows))


def participation_in(campaign, participation_id):
    """The campaign's participation with this id, or None (another campaign's too)."""
    participation = db.session.get(Participation, participation_id)
    if participation is None or participation.campaign_id != campaign.id:
        return None
    return participation


def locked_volunteer(campaign, participation_id):
    """The campaign's participation, locked for a decision (a judgment of
    theirs waits meanwhile), or None (another campaign's volunteer too)."""
    if participation_in(campaign, participation_id) is None:
        return None
    return lock_participation(participation_id)


def volunteer_record(campaign, participation):
    """What the organiser's page about one volunteer shows."""
    user = participation.user
    group = 1
    if user.signup_address:
        group = db.session.scalar(
            select(func.count(User.id))
            .join(Participation, Participation.user_id == User.id)
            .where(Participation.campaign_id == campaign.id, User.signup_address == user.signup_address)
        )
    protocol = protocols.of(campaign)
    judgments = protocol.review_judgments(participation)
    tickets = db.session.scalars(
        select(Ticket).where(Ticket.participation_id == participation.id).order_by(Ticket.number)
    ).all()
    since_clear = {
        "left": participation.tests_left, "right": participation.tests_right,
        "equal": participation.tests_equal, "fast_run": participation.fast_run,
    }
    signs = read_signs(
        ((j.choice, j.too_fast) for j in judgments if not j.control),
        # The crowd without the volunteer, as the sign compares (holds.crowd_equal_share).
        crowd_equal=share(campaign.equal_judgments - participation.crowd_equal,
                          campaign.collected_judgments - participation.crowd_answers),
        since_clear=since_clear,
    )
    return Record(participation, user, group, judgments, tickets, signs, protocol.REVIEW, protocol.SIGNS)


def held_volunteers(campaign):
    """(participation, username) of the volunteers held for review, longest held first."""
    return db.session.execute(
        select(Participation, User.username)
        .join(User, User.id == Participation.user_id)
        .where(Participation.campaign_id == campaign.id, Participation.held_at.is_not(None),
               Participation.dismissed_at.is_(None))
        .order_by(Participation.held_at)
    ).all()


def clear_refused(campaign, now):
    """Why no hold of the campaign can be cleared now, or None (the
    organiser's page hides the button when there is a reason)."""
    if raffle.list_frozen(campaign, now):
        return _l("The campaign has closed: its raffle's ticket list is frozen until the draw, and "
                  "clearing the hold would change it. Clear it after the draw.")
    return None


def clear_hold(participation, now=None):
    """Let a held volunteer back into the ranking and the ticket list; the
    signs start again from the next answers (their counters back to 0)."""
    if participation.is_dismissed:
        raise ReviewError(_l("This volunteer was dismissed: there is no hold to clear."))
    if not participation.is_held:
        raise ReviewError(_l("This volunteer is not held."))
    refused = clear_refused(participation.campaign, now or utcnow())
    if refused is not None:
        raise ReviewError(refused)
    participation.held_at = None
    participation.held_reason = None
    participation.tests_left = participation.tests_right = participation.tests_equal = 0
    participation.fast_run = 0
    rewards.list_changed(participation.campaign_id)  # their tickets are back in the raffle's list
    db.session.flush()


def dismiss(campaign, participation, reason, now):
    """End a volunteer's participation for ``reason`` (``answers.dismiss``:
    judgments discarded, slots back to the pool, tickets void)."""
    reason = (reason or "").strip()
    if participation.is_dismissed:
        raise ReviewError(_l("This volunteer was already dismissed."))
    if not reason:
        raise ReviewError(_l("Give the reason for the dismissal."))
    answers.dismiss(campaign, participation, reason, now)
    db.session.flush()


def void_refused(campaign, now):
    """Why no ticket of the campaign can be voided now, or None (the
    organiser's page hides the void buttons when there is a reason)."""
    record = raffle.commitment(campaign)
    if record is not None and record.drawn_at is not None:
        return _l("The raffle was already drawn: its tickets can no longer change.")
    if raffle.is_closed(campaign, now):
        # The ticket list froze at the close; the draw uses it as it was then.
        return _l("The campaign has closed: its tickets can no longer be voided.")
    return None


def void_ticket(campaign, participation, number, now):
    """Void one of the volunteer's valid tickets; returns it."""
    ticket = db.session.scalar(select(Ticket).where(Ticket.campaign_id == campaign.id, Ticket.number == number))
    if ticket is None or ticket.participation_id != participation.id:
        raise ReviewError(_l("Ticket %(number)s is not this volunteer's.", number=number))
    if ticket.voided_at is not None:
        raise ReviewError(_l("Ticket %(number)s is already void.", number=number))
    refused = void_refused(campaign, now)
    if refused:
        raise ReviewError(refused)
    ticket.voided_at = now
    rewards.ticket_voided(participation.id)
    rewards.list_changed(campaign.id)
    db.session.flush()
    return ticket
