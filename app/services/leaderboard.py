"""The contributors' ranking, from one service with explicit invalidation.

Order: more answers that count first (``Participation.items_counted``: not
below the reading floor); on equal counts, whoever reached that count
earlier is listed first (then the earlier participant), but equal counts
share a rank ("1, 2, 2, 4": ``competition_ranks``). Dismissed volunteers,
volunteers held for review, volunteers who have not confirmed their email
and volunteers with no counted answer yet are not ranked. A volunteer who
hides their name appears as anonymous (``name`` None) to everybody else.
"""
import threading
import time
from dataclasses import dataclass

from flask import current_app
from sqlalchemy import func, select

from ..extensions import db
from ..models import Campaign, Participation, User
from . import counters

PRIZES = 5  # the top five win the organisers' prizes
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

    def public(self, rank, me=False):
        row = {"r": rank, "n": None if self.hidden and not me else self.name, "c": self.count}
        if me:
            row["me"] = True
        return row


class Ranking:
    def __init__(self, entries, volunteers, last_comer, collected, target):
        self.entries = entries
        self.volunteers = volunteers
        self.last_comer = last_comer
        self.collected = collected
        self.target = target
        self._ranks = competition_ranks([entry.count for entry in entries])
        self._index = {entry.participation_id: i for i, entry in enumerate(entries)}

    def rank_of(self, participation_id):
        index = self._index.get(participation_id)
        return None if index is None else self._ranks[index]

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
            "volunteers": self.volunteers,
            "prizes": PRIZES,
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


def build(campaign_id):
    """One query for the ranking, one for the last comer and the counts."""
    rows = db.session.execute(
        select(Participation.id, User.id, User.username, User.hide_from_ranking, Participation.items_counted)
        .join(User, User.id == Participation.user_id)
        .where(
            Participation.campaign_id == campaign_id,
            Participation.dismissed_at.is_(None),
            Participation.held_at.is_(None),
            Participation.items_counted > 0,
            User.email_confirmed_at.is_not(None),  # one person, one account: unconfirmed ones win nothing
        )
        .order_by(
            Participation.items_counted.desc(),
            Participation.reached_count_at.asc(),
            Participation.id.asc(),
        )
    ).all()
    entries = [Entry(*row) for row in rows]
    volunteers = db.session.scalar(
        select(func.count(Participation.id)).where(
            Participation.campaign_id == campaign_id, Participation.dismissed_at.is_(None)
        )
    )
    newest = db.session.execute(
        select(User.username, User.hide_from_ranking)
        .join(Participation, Participation.user_id == User.id)
        .where(Participation.campaign_id == campaign_id, Participation.dismissed_at.is_(None),
               Participation.held_at.is_(None))  # a held volunteer's name is not shown anywhere public
        .order_by(Participation.joined_at.desc(), Participation.id.desc())
        .limit(1)
    ).first()
    last_comer = None
    if newest is not None:
        last_comer = {"n": None if newest.hide_from_ranking else newest.username}
    target = db.session.scalar(select(Campaign.target_judgments).where(Campaign.id == campaign_id))
    # As it stood at the start of the period: no answer's kind shows in it (counters.public_collected).
    collected = counters.public_collected(campaign_id, current_app.config.get("BOZKA_PUBLIC_FIGURES_SECONDS", 60))
    return Ranking(entries, volunteers, last_comer, collected, target)


_cache = {}
_lock = threading.Lock()


MAX_AGE = 1.0  # seconds: bounds staleness when another process made the change


def get(campaign_id):
    """The cached ranking; rebuilt after ``invalidate`` (called after each
    commit that changes it) or when older than MAX_AGE."""
    entry = _cache.get(campaign_id)
    now = time.monotonic()
    if entry is None or now - entry[0] > MAX_AGE:
        entry = (now, build(campaign_id))
        with _lock:
            _cache[campaign_id] = entry
    return entry[1]


def invalidate(campaign_id=None):
    with _lock:
        if campaign_id is None:
            _cache.clear()
        else:
            _cache.pop(campaign_id, None)

