"""The raffle's published ticket list, kept per process and campaign.

The list is read far more often (the public page, raffle.json, the
dashboard) than it changes, and reading the rule of who counts for every
ticket costs as much as the list is long (0.59 s at 124,000 tickets). Each
process keeps each campaign's list as its CSV lines, their running SHA-256
and the latest voids, and checks them at every read against one small read
of the campaign's row (the voids are read at each view, from their index,
so that a void is public at once however it was made):

- ``raffle_version`` moves in the same transaction as every change of who
  counts or of a ticket's validity (``rewards.list_changed``): the list is
  read again. A version committed with the change, rather than an age
  (``leaderboard.MAX_AGE``) or a message between processes (``realtime``'s
  Redis versions): whichever process made the change, the next read in any
  process sees it, and nothing can serve a list older than the database's.
- ``next_ticket`` moves with every new ticket; numbers only grow, so the
  tickets numbered since the last read are appended and the SHA-256 goes on.
- ``check_every`` and the moment the list froze are the rule's inputs;
  the DA judge test's verdicts (``counting.dropped``) are compared as they
  are, and the holders left out only as untested are checked for their
  first control check.
"""
import hashlib
import threading
from collections import Counter
from dataclasses import dataclass, field

from sqlalchemy import bindparam, false, func, or_, select

from ..extensions import db
from ..models import Campaign, Participation, Ticket, User
from .. import protocols
from . import counting, quality, research
from .pseudonyms import pseudonym

VOIDS_SHOWN = 50  # the latest voids the page and raffle.json carry; voids.csv has them all

_lists = {}  # campaign id -> _List
_lock = threading.Lock()  # held while a list is checked or changed

_KEY = select(Campaign.raffle_version, Campaign.next_ticket, Campaign.check_every).where(
    Campaign.id == bindparam("campaign_id"))


@dataclass(frozen=True)
class Published:
    """What a view shows of the list: its SHA-256, its length, the latest
    voids ((number, holder, voided_at), in the order voided), how many
    tickets were voided in all and how many are valid (eligible or not)."""

    digest: str
    count: int
    voids: tuple
    void_count: int
    valid: int


@dataclass
class _List:
    key: tuple
    next_ticket: int  # every ticket numbered below was read
    dropped: frozenset
    waiting: set = field(default_factory=set)  # holders left out only as untested
    body: bytearray = field(default_factory=bytearray)  # "number,volunteer\n" lines, by number
    sha: object = field(default_factory=hashlib.sha256)
    count: int = 0


def published(campaign, frozen, now):
    """The list's ``Published`` figures; ``frozen``: when it froze, or None."""
    with _lock:
        state = _current(campaign, frozen, now)
        digest, count, next_ticket = state.sha.hexdigest(), state.count, state.next_ticket
    void_count, voids = _voids(campaign)
    # Ticket numbers run from 1 without a gap (rewards.award_ticket).
    return Published(digest, count, voids, void_count, next_ticket - 1 - void_count)


def body(campaign, frozen, now):
    """The list's CSV lines (bytes), whose SHA-256 is the published one."""
    with _lock:
        return bytes(_current(campaign, frozen, now).body)


def tickets(campaign, frozen, now):
    """The list as [(number, volunteer)], sorted by number."""
    lines = body(campaign, frozen, now).decode().splitlines()
    return [(int(number), holder) for number, holder in (line.split(",") for line in lines)]


def forget(campaign_id=None):
    with _lock:
        if campaign_id is None:
            _lists.clear()
        else:
            _lists.pop(campaign_id, None)


def _current(campaign, frozen, now):
    """The campaign's list, brought up to date (``_lock`` held)."""
    version, next_ticket, check_every = db.session.execute(_KEY, {"campaign_id": campaign.id}).one()
    # A close nobody stamped freezes the list "now" (raffle.frozen_at): not a
    # moment to key on, and the same list as an open one until something changes.
    key = (version, check_every, None if frozen == now else frozen)
    dropped = frozenset(counting.dropped(campaign))
    state = _lists.get(campaign.id)
    if state is None or state.key != key or state.dropped != dropped or _tested(state, check_every):
        state = _lists[campaign.id] = _List(key=key, next_ticket=1, dropped=dropped)
    if state.next_ticket < next_ticket:
        _append(state, campaign, frozen, next_ticket)
    state.next_ticket = next_ticket
    return state


def _tested(state, check_every):
    """Whether a holder left out only as untested has reached their first check since."""
    if not state.waiting:
        return False
    return db.session.scalar(select(Participation.id).where(
        Participation.id.in_(list(state.waiting)), Participation.items_answered >= check_every).limit(1)) is not None


def _valid(frozen):
    """The conditions of a ticket that may be on the list (valid, its holder's
    email confirmed; once frozen, as they were then)."""
    if frozen is None:
        return Ticket.voided_at.is_(None), User.email_confirmed_at.is_not(None)
    return (Ticket.created_at < frozen, or_(Ticket.voided_at.is_(None), Ticket.voided_at >= frozen),
            User.email_confirmed_at < frozen)


def _tickets(campaign, frozen, *columns):
    return (select(*columns).select_from(Ticket)
            .join(Participation, Participation.id == Ticket.participation_id)
            .join(User, User.id == Participation.user_id)
            .where(Ticket.campaign_id == campaign.id, *_valid(frozen)))


def length(campaign, frozen):
    """How many tickets the list has (``holders``): the dashboard's figure."""
    return holders(campaign, frozen)[None]


def holders(campaign, frozen, participation_id=None):
    """The valid tickets of holders who confirmed their email, by why they
    are left out of the list ({None: on the list, "held": ..., the codes of
    ``quality.left_out_volunteer``}): the holders' counts of valid tickets
    (``Participation.tickets_valid``) summed by their state, one row per
    state, without reading a ticket. Once the list froze no ticket is won or
    voided, so the counts are those of the moment it froze. Given
    ``participation_id``, that one volunteer's (their raffle page)."""
    before = (lambda column: column.is_not(None)) if frozen is None else (lambda column: column < frozen)
    dropped = counting.dropped_condition(campaign)
    untested = research.untested_condition(campaign.check_every) if protocols.of(campaign).USES_CONTROLS else None
    state = (before(Participation.dismissed_at), before(Participation.held_at), dropped, untested)
    # None: the rule does not apply. Selected as false, never grouped on (a constant there is a column number).
    rows = (select(func.sum(Participation.tickets_valid), *(false() if flag is None else flag for flag in state))
            .join(User, User.id == Participation.user_id)
            .where(Participation.campaign_id == campaign.id, before(User.email_confirmed_at),
                   Participation.tickets_valid > 0,
                   *([] if participation_id is None else [Participation.id == participation_id]))
            .group_by(*(flag for flag in state if flag is not None)))
    counts = Counter({None: 0})
    for n, *flags in db.session.execute(rows):
        counts[_reason(flags)] += int(n)
    return counts


def valid(campaign):
    """How many of the campaign's tickets are valid (on the list or not)."""
    next_ticket = db.session.execute(_KEY, {"campaign_id": campaign.id}).one().next_ticket
    return next_ticket - 1 - _void_count(campaign)


def _reason(flags):
    dismissed, held, dropped, untested = flags
    return quality.left_out_volunteer(dismissed=bool(dismissed), held=bool(held), dropped=bool(dropped),
                                      untested=bool(untested))


def _append(state, campaign, frozen, next_ticket):
    """Read the tickets numbered from ``state.next_ticket`` to ``next_ticket``
    (excluded) and add those that count."""
    rows = db.session.execute(
        _tickets(campaign, frozen, Ticket.number, User.id, Ticket.participation_id)
        .where(Ticket.number >= state.next_ticket, Ticket.number < next_ticket)
        .order_by(Ticket.number)
    ).all()
    # The whole campaign's volunteers at once when the list is read afresh.
    ids = None if state.next_ticket == 1 else {pid for _number, _user, pid in rows}
    left_out = counting.reasons(campaign, frozen, ids=ids, left_out=state.dropped) if rows else {}
    holders, lines = {}, []
    for number, user_id, pid in rows:
        reason = left_out[pid]
        if reason is None:
            holder = holders.get(user_id) or holders.setdefault(user_id, pseudonym(campaign, user_id))
            lines.append(f"{number},{holder}\n")
        elif reason == quality.UNTESTED:
            state.waiting.add(pid)
    chunk = "".join(lines).encode()
    state.body += chunk
    state.sha.update(chunk)
    state.count += len(lines)


def _voids(campaign):
    """(how many, the latest VOIDS_SHOWN in the order voided) of the campaign's voided tickets."""
    count = _void_count(campaign)
    rows = db.session.execute(
        select(Ticket.number, Participation.user_id, Ticket.voided_at)
        .join(Participation, Participation.id == Ticket.participation_id)
        .where(Ticket.campaign_id == campaign.id, Ticket.voided_at.is_not(None))
        .order_by(Ticket.voided_at.desc(), Ticket.number.desc())
        .limit(VOIDS_SHOWN)
    ).all()
    return count, tuple((number, pseudonym(campaign, user_id), at) for number, user_id, at in reversed(rows))


def _void_count(campaign):
    return db.session.scalar(select(func.count(Ticket.id)).where(
        Ticket.campaign_id == campaign.id, Ticket.voided_at.is_not(None)))
