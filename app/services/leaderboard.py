"""The contributors' ranking, from one service with explicit invalidation.

Order: more answers that count first (``Participation.items_counted``: not
below the reading floor); on equal counts, whoever reached that count
earlier is listed first (then the earlier participant), but equal counts
share a rank ("1, 2, 2, 4": ``competition_ranks``). Dismissed volunteers,
volunteers held for review, volunteers who have not confirmed their email
and volunteers with no counted answer yet are not ranked. A volunteer who
hides their name appears as anonymous (``name`` None) to everybody else.

Pages and the live game read the top (``get``: one indexed ``LIMIT``
query, cached) and one volunteer's place (``standing``: a few indexed
queries), never the whole list; ``build`` makes the whole list, for the
live game's occasional full pass and the tests.
"""
import threading
import time
from dataclasses import dataclass
from datetime import datetime

from flask import current_app
from sqlalchemy import bindparam, case, func, select, tuple_

from ..extensions import db
from ..models import Campaign, Participation, User
from .. import protocols
from . import counters

# How many of the top win the organisers' prizes is the campaign's
# leaderboard_prizes (5 unless campaign.toml says; 0: none, at most TOP).
TOP = 20
NEIGHBOURS = 2


def competition_ranks(counts):
    """Standard competition ranking of ``counts`` (sorted, highest first):
    equal counts share a rank and the next rank skips ("1, 2, 2, 4")."""
    ranks = []
    for i, count in enumerate(counts):
        ranks.append(ranks[-1] if i and count == counts[i - 1] else i + 1)
    return ranks


@dataclass(frozen=True)
class Entry:
    participation_id: int
    user_id: int
    name: str
    hidden: bool
    count: int
    reached: datetime = None

    @property
    def key(self):
        """Sorts as the ranking lists (first place first)."""
        return order_key(self.count, self.reached, self.participation_id)

    def public(self, rank, me=False):
        row = {"r": rank, "n": None if self.hidden and not me else self.name, "c": self.count}
        if me:
            row["me"] = True
        return row


def order_key(count, reached, participation_id):
    return (-count, reached or datetime.min, participation_id)


class Ranking:
    """The whole ranking (``build``), or its top with the public figures (``get``)."""

    def __init__(self, entries, volunteers, last_comer, collected, target, prizes, settled=None):
        self.entries = entries
        self.prizes = prizes
        # Sequential assignment (issue 32): (pairs settled, pairs) towards the goal, else None.
        self.settled = settled
        self.volunteers = volunteers
        self.last_comer = last_comer
        self.collected = collected
        self.target = target
        self._ranks = competition_ranks([entry.count for entry in entries])
        self._index = {entry.participation_id: i for i, entry in enumerate(entries)}

    def rank_of(self, participation_id):
        index = self._index.get(participation_id)
        return None if index is None else self._ranks[index]

    def key_of(self, participation_id):
        """The volunteer's order_key, None when not ranked."""
        index = self._index.get(participation_id)
        return None if index is None else self.entries[index].key

    def top(self, n=TOP):
        return [entry.public(self._ranks[i]) for i, entry in enumerate(self.entries[:n])]

    def around(self, participation_id, k=NEIGHBOURS):
        """The volunteer's row with the k contributors above and below."""
        index = self._index.get(participation_id)
        if index is None:
            return []
        start, stop = max(0, index - k), min(len(self.entries), index + k + 1)
        return [
            self.entries[i].public(self._ranks[i], me=self.entries[i].participation_id == participation_id)
            for i in range(start, stop)
        ]

    def public_payload(self):
        """Compact, the same for everybody in the campaign."""
        return {
            "collected": self.collected,
            "target": self.target,
            "settled": self.settled,
            "volunteers": self.volunteers,
            "prizes": self.prizes,
            "top": self.top(),
            "last": self.last_comer,
        }

    def personal_payload(self, participation_id, count, held, tickets):
        """``held``: under review (the volunteer is told, neutrally; they have no rank meanwhile)."""
        return {
            "rank": self.rank_of(participation_id),
            "count": count,
            "held": held,
            "around": self.around(participation_id),
            "tickets": list(tickets),
        }


class Top(Ranking):
    """The top TOP and the public figures; a volunteer's place below the top
    comes from ``standing`` (indexed queries), not from the whole list."""

    def __init__(self, campaign_id, entries, *figures):
        super().__init__(entries, *figures)
        self.campaign_id = campaign_id

    def rank_of(self, participation_id):
        return standing(self.campaign_id, participation_id).rank

    def key_of(self, participation_id):
        return standing(self.campaign_id, participation_id).key

    def around(self, participation_id, k=NEIGHBOURS):
        return standing(self.campaign_id, participation_id, k).around

    def personal_payload(self, participation_id, count, held, tickets):
        return Places(self.campaign_id, [participation_id]).personal_payload(participation_id, count, held, tickets)


class Places(Ranking):
    """The places of a few volunteers (``standing``), read once, answering
    as the whole ranking would for them."""

    def __init__(self, campaign_id, participation_ids):
        super().__init__([], None, None, None, None, None)
        ranks = {}  # the volunteers tied at a count share its rank: counted once
        self.places = {pid: standing(campaign_id, pid, ranks=ranks) for pid in participation_ids}

    def rank_of(self, participation_id):
        return self.places[participation_id].rank

    def key_of(self, participation_id):
        return self.places[participation_id].key

    def around(self, participation_id, k=NEIGHBOURS):
        return self.places[participation_id].around


_ENTRY = (Participation.id, User.id, User.username, User.hide_from_ranking, Participation.items_counted,
          Participation.reached_count_at)
_FIRST = (Participation.items_counted.desc(), Participation.reached_count_at.asc(), Participation.id.asc())
_LAST = (Participation.items_counted.asc(), Participation.reached_count_at.desc(), Participation.id.desc())


def _ranked(campaign_id, *columns, more_than=0):
    """The ranked volunteers of a campaign (the rules above) with more than
    ``more_than`` counted items; the index ix_participations_ranking answers
    it in the ranking's order. The bound is one condition, not a second one
    beside "more than 0": given both, SQLite walked the index from the
    lowest counts up, past every volunteer below (1.6 ms at 20,000)."""
    return (
        select(*(columns or _ENTRY))
        .select_from(Participation)
        .join(User, User.id == Participation.user_id)
        .where(
            Participation.campaign_id == campaign_id,
            Participation.dismissed_at.is_(None),
            Participation.held_at.is_(None),
            Participation.items_counted > more_than,
            User.email_confirmed_at.is_not(None),  # one person, one account: unconfirmed ones win nothing
        )
    )


def _public_figures(campaign_id):
    """(volunteers, last comer, collected, target, prizes)."""
    newest = db.session.execute(
        select(User.username, User.hide_from_ranking, User.email_confirmed_at)
        .join(Participation, Participation.user_id == User.id)
        .where(Participation.campaign_id == campaign_id, Participation.dismissed_at.is_(None),  # ix_participations_newest
               Participation.held_at.is_(None))  # a held volunteer's name is not shown anywhere public
        .order_by(Participation.joined_at.desc(), Participation.id.desc())
        .limit(1)
    ).first()
    last_comer = None
    if newest is not None:
        # Named once their email is confirmed, as in the ranking (a name nobody vouched for is not shown).
        unnamed = newest.hide_from_ranking or newest.email_confirmed_at is None
        last_comer = {"n": None if unnamed else newest.username}
    # The count is kept on the campaign's row (counters.count_for_campaign): counting rows grew with the campaign.
    volunteers, target, prizes, protocol, assignment = db.session.execute(
        select(Campaign.volunteers, Campaign.target_judgments, Campaign.leaderboard_prizes, Campaign.protocol,
               Campaign.assignment)
        .where(Campaign.id == campaign_id)).one()
    # As it stood at the start of the period: no answer's kind shows in it (counters.public_collected).
    collected = counters.public_collected(campaign_id, current_app.config.get("BOZKA_PUBLIC_FIGURES_SECONDS", 60))
    settled = protocols.settled(protocol, campaign_id, assignment)
    return volunteers, last_comer, collected, target, prizes, settled


def build(campaign_id):
    """The whole ranking: every ranked volunteer (the live game's full pass)."""
    rows = db.session.execute(_ranked(campaign_id).order_by(*_FIRST)).all()
    return Ranking([Entry(*row) for row in rows], *_public_figures(campaign_id))


def build_top(campaign_id, n=TOP):
    """The first ``n`` and the public figures: as many rows read at 100 volunteers as at 20,000."""
    rows = db.session.execute(_ranked(campaign_id).order_by(*_FIRST).limit(n)).all()
    return Top(campaign_id, [Entry(*row) for row in rows], *_public_figures(campaign_id))


@dataclass(frozen=True)
class Standing:
    key: tuple  # order_key of the volunteer; None when not ranked
    rank: int
    around: list


_UNRANKED = Standing(None, None, [])


def standing(campaign_id, participation_id, k=NEIGHBOURS, ranks=None):
    """A volunteer's key, rank and ``around`` rows, as ``build``'s would be:
    their row, up to k rows on each side (two LIMIT queries a side: their
    equals, then the others) and the ranks of those rows (one count, for
    the counts not already in ``ranks``: {count: rank}, kept for the next)."""
    me = db.session.execute(_ranked(campaign_id).where(Participation.id == participation_id)).first()
    if me is None:
        return _UNRANKED
    me = Entry(*me)
    count, after_me = Participation.items_counted, tuple_(Participation.reached_count_at, Participation.id)
    mine = (me.reached, me.participation_id)
    above = _rows(campaign_id, k, (count == me.count, after_me < mine), _LAST[1:])
    above += _rows(campaign_id, k - len(above), (), _LAST, more_than=me.count)
    below = _rows(campaign_id, k, (count == me.count, after_me > mine), _FIRST[1:])
    below += _rows(campaign_id, k - len(below), (count < me.count,), _FIRST)
    window = above[::-1] + [me] + below
    ranks = {} if ranks is None else ranks
    missing = sorted({entry.count for entry in window} - set(ranks))
    if missing:
        ranks.update(_ranks_of(campaign_id, missing))
    return Standing(me.key, ranks[me.count], [
        entry.public(ranks[entry.count], me=entry is me) for entry in window])


def _rows(campaign_id, n, conditions, order, more_than=0):
    if n <= 0:
        return []
    return [Entry(*row) for row in db.session.execute(
        _ranked(campaign_id, more_than=more_than).where(*conditions).order_by(*order).limit(n))]


def _ranks_of(campaign_id, counts):
    """{count: its competition rank}: one plus the ranked volunteers with more.
    Those are counted from the ranking's index alone, less the unconfirmed
    among them (from their own small index): a join to every user ahead
    would cost a lookup each."""
    def ahead(query):
        return query.where(
            Participation.campaign_id == campaign_id, Participation.dismissed_at.is_(None),
            Participation.held_at.is_(None), Participation.items_counted > counts[0])

    sums = [func.coalesce(func.sum(case((Participation.items_counted > c, 1), else_=0)), 0) for c in counts]
    listed = db.session.execute(ahead(select(*sums).select_from(Participation))).one()
    # IN, not a join: with a join SQLite looked up the user of every volunteer
    # ahead (5 ms at 20,000); this walks the unconfirmed and finds their rows.
    unconfirmed = db.session.execute(ahead(select(*sums).select_from(Participation).where(
        Participation.user_id.in_(select(User.id).where(User.email_confirmed_at.is_(None)))))).one()
    return {c: 1 + n - u for c, n, u in zip(counts, listed, unconfirmed)}


IN_CHUNK = 500
_KEYS_OF = _ranked(bindparam("campaign_id"), Participation.id, Participation.items_counted,
                   Participation.reached_count_at).where(
    Participation.id.in_(bindparam("participation_ids", expanding=True)))


def keys_of(campaign_id, participation_ids):
    """{participation id: order_key} of those of ``participation_ids`` who are ranked."""
    participation_ids, keys = list(participation_ids), {}
    for start in range(0, len(participation_ids), IN_CHUNK):  # a bounded number of parameters per query
        rows = db.session.execute(_KEYS_OF, {"campaign_id": campaign_id,
                                             "participation_ids": participation_ids[start:start + IN_CHUNK]})
        keys.update((pid, order_key(count, reached, pid)) for pid, count, reached in rows)
    return keys


_cache = {}
_lock = threading.Lock()


MAX_AGE = 1.0  # seconds: bounds staleness when another process made the change


def get(campaign_id):
    """The cached top of the ranking (``build_top``); read again after
    ``invalidate`` (called after each commit that changes it) or when older
    than MAX_AGE."""
    entry = _cache.get(campaign_id)
    now = time.monotonic()
    if entry is None or now - entry[0] > MAX_AGE:
        entry = (now, build_top(campaign_id))
        with _lock:
            _cache[campaign_id] = entry
    return entry[1]


def invalidate(campaign_id=None):
    with _lock:
        if campaign_id is None:
            _cache.clear()
        else:
            _cache.pop(campaign_id, None)
