"""The ESA panel of the organiser's dashboard: per system the segments
annotated, the mean score and the error spans, from the answers that count
for research as the exports have them (not discarded nor too fast, the
volunteer neither dismissed nor held), read from the answers at each call: a cost that grows
with the campaign (DA keeps running sums instead; to do for ESA). The analysis (scripts/analyse.py on the exports) gives the
exact figures: per domain, z-scores, significance."""
from sqlalchemy import func, select

from ...extensions import db
from ...models import Item, Participation, System
from . import spans as esa_spans

_COUNTED = (Item.answered_at.is_not(None), Item.discarded_at.is_(None), Item.qc_kind.is_(None),
            Item.too_fast.is_(False), Participation.dismissed_at.is_(None), Participation.held_at.is_(None))
# Read per system: the counts and score sums in SQL, the spans' lengths in Python
# (a JSON column's elements are counted differently by SQLite and PostgreSQL).
_SYSTEMS = (
    select(System.name, func.count(Item.id), func.avg(Item.score))
    .join(Item, Item.left_system_id == System.id)
    .join(Participation, Participation.id == Item.participation_id)
    .where(Item.campaign_id == System.campaign_id, *_COUNTED)
    .group_by(System.id, System.name, System.position)
    .order_by(System.position)
)
_SPANS = (
    select(Item.left_system_id, Item.spans)
    .join(Participation, Participation.id == Item.participation_id)
    .where(*_COUNTED)
)


def summary(campaign):
    names = {system.id: system.name for system in campaign.systems}
    marks = {name: [0, 0, 0] for name in names.values()}  # minor, major, omissions
    for system_id, spans in db.session.execute(_SPANS.where(Item.campaign_id == campaign.id)):
        counted = esa_spans.counts(spans or [])
        marks[names[system_id]] = [a + b for a, b in zip(marks[names[system_id]], counted)]
    systems = []
    for name, segments, mean in db.session.execute(_SYSTEMS.where(System.campaign_id == campaign.id)):
        minor, major, omissions = marks[name]
        systems.append({"system": name, "segments": segments, "mean": float(mean) if mean is not None else None,
                        "minor": minor / segments if segments else None, "major": major / segments if segments else None,
                        "omissions": omissions})
    return {"systems": systems}
