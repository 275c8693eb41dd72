"""The dashboard's figures about volunteers, read as aggregates: the
database returns one row per distinct state (answers given, dismissal,
hold, control pool), never one per volunteer, so that building them costs
a few milliseconds at 20,000 volunteers where reading every row took half
a second (issue 30). Who counts is decided by ``quality.left_out_volunteer``,
as everywhere else.
"""
from collections import Counter
from dataclasses import dataclass, field

from sqlalchemy import false, func, select

from ..extensions import db
from ..models import Participation, User
from . import quality, research

_STATES = (
    Participation.dismissed_reason, Participation.dismissed_at.is_not(None), Participation.held_at.is_not(None),
    Participation.items_answered, Participation.controls_seen_all,
)

PROFILE_KEYS = ("age_group", "studies_level", "studies_field", "source_level", "target_level")
_PROFILE_COLUMNS = (User.age_group, User.studies_level, User.studies_field, Participation.source_level,
                    Participation.target_level)
_BY_PROFILE = (select(*_PROFILE_COLUMNS, func.count()).join(User, User.id == Participation.user_id)
               .group_by(*_PROFILE_COLUMNS))


@dataclass
class Volunteers:
    registered: int = 0
    with_no_judgment: int = 0
    dismissed: Counter = field(default_factory=Counter)  # reason -> volunteers
    took_part: Counter = field(default_factory=Counter)  # answers -> volunteers (not dismissed, answered)
    who_counts: dict = field(default_factory=dict)  # "counted" or quality.WHO_COUNTS reason -> volunteers
    controls_answered: int = 0
    controls_failed: int = 0
    seen_all: int = 0  # volunteers who have seen every control

    def median_took_part(self):
        """The median of ``took_part``'s answers (as statistics.median of the list it counts)."""
        total = sum(self.took_part.values())
        if not total:
            return 0
        middle, seen, values = ((total - 1) // 2, total // 2), 0, []
        for answers in sorted(self.took_part):
            n = self.took_part[answers]
            values += [answers] * sum(1 for i in middle if seen <= i < seen + n)
            seen += n
        return values[0] if total % 2 else (values[0] + values[1]) / 2

    def mean_took_part(self):
        total = sum(self.took_part.values())
        return round(sum(a * n for a, n in self.took_part.items()) / total, 2) if total else 0

    def took_part_between(self, low, high=None):
        return sum(n for answers, n in self.took_part.items() if answers >= low and (high is None or answers <= high))


def read(campaign_id, check_every=None, dropped=None):
    """The figures of a campaign's volunteers. ``check_every``: pairwise's
    control check (a volunteer before it is untested), None for a protocol
    without controls; ``dropped``: the condition on a participation that its
    judge test leaves it out (``counting.dropped_condition``, DA), grouped
    on like the rest of the state."""
    figures = Volunteers(who_counts=dict.fromkeys(("counted",) + quality.WHO_COUNTS, 0))
    grouped = _STATES if dropped is None else (*_STATES, dropped)  # never a constant in GROUP BY: a column number
    rows = db.session.execute(
        select(*_STATES, false() if dropped is None else dropped, func.count(),
               func.sum(Participation.controls_answered), func.sum(Participation.controls_failed))
        .where(Participation.campaign_id == campaign_id).group_by(*grouped))
    for reason, dismissed, held, answered, seen_all, is_dropped, n, controls, failed in rows:
        figures.registered += n
        figures.controls_answered += int(controls or 0)
        figures.controls_failed += int(failed or 0)
        figures.seen_all += n if seen_all else 0
        if reason:
            figures.dismissed[reason] += n
        if answered == 0:
            figures.with_no_judgment += n
            continue
        if not reason:
            figures.took_part[answered] += n
        figures.who_counts[_who(check_every, dismissed, held, answered, bool(is_dropped)) or "counted"] += n
    return figures


def _who(check_every, dismissed, held, answered, dropped=False):
    untested = check_every is not None and research.pairwise_untested(answered, check_every)
    return quality.left_out_volunteer(dismissed=dismissed, held=held, dropped=dropped, untested=untested)


def profile_counts(campaign_id):
    """{profile key: Counter of its answers} over the campaign's volunteers."""
    counts = {key: Counter() for key in PROFILE_KEYS}
    for *values, n in db.session.execute(_BY_PROFILE.where(Participation.campaign_id == campaign_id)):
        for key, value in zip(PROFILE_KEYS, values):
            counts[key][value] += n
    return counts


def control_pool_volunteers(campaign_id, limit=50):
    """(username, user id) of up to ``limit`` volunteers not dismissed who have seen every control."""
    return db.session.execute(
        select(User.username, User.id).join(Participation, Participation.user_id == User.id)
        .where(Participation.campaign_id == campaign_id, Participation.controls_seen_all,
               Participation.dismissed_reason.is_(None))
        .order_by(Participation.id).limit(limit)
    ).all()
