"""The Direct Assessment part of the organisers' dashboard.

System scores are the analysis's own (``app.stats.da``, with the defaults
of ``scripts/analyse.py``) on the campaign's scores that count for research
(``services/research.py``), so the dashboard
and an analysis of the ``da-judgments`` export agree. Unlike the rest of the
dashboard this reads every valid score: the result is kept per campaign
until a score arrives or a volunteer is dismissed, held or cleared.
"""
import threading

from sqlalchemy import func, select
from sqlalchemy.orm import aliased

from ..extensions import db
from ..models import Item, Participation, Sentence, Slot
from ..stats.da import analyse_da
from ..stats.da_quality import judge_quality
from ..stats.da_loader import from_da_records
from ..stats.research import left_out
from . import da_quality, research

SYSTEM = "system"  # the kind of a test item, as the analysis names it
LIVE_RULE = (da_quality.NOT_LOWER, da_quality.LOW_VARIATION)
_cache = {}  # campaign id -> (state, analysis)
_lock = threading.Lock()


def score_records(campaign, participations=None):
    """(judge, system, sentence, kind, score) of every score that counts for
    research (``research``: the rule of the exports and of the analysis), in
    the order given: the analysis's in-memory input (``from_da_records``);
    with ``participations`` (ids), only those volunteers' scores."""
    names = {system.id: system.name for system in campaign.systems}
    query = (
        select(Item.participation_id, Item.left_system_id, Sentence.number, Item.qc_kind, Item.score,
               Item.too_fast)
        .join(Sentence, Sentence.id == Item.sentence_id)
        .where(Item.campaign_id == campaign.id, Item.answered_at.is_not(None), Item.discarded_at.is_(None),
               Item.score.is_not(None),
               # a bad reference served first counts once its original is scored (protocols/da.py)
               Item.qc_kind.is_(None) | Item.original_item_id.is_not(None))
        .order_by(Item.answered_at, Item.id))
    if participations is not None:
        query = query.where(Item.participation_id.in_(participations))
    rows = db.session.execute(query).all()
    flags = research.volunteer_flags(db.session, {row[0] for row in rows})
    return [(str(judge), names[system], str(number), kind or SYSTEM, score)
            for judge, system, number, kind, score, fast in rows
            if left_out(research.answer_flags(flags[judge], False, False, fast)) is None]


def analysis(campaign, state):
    """The analysis of the campaign's valid scores (None without any),
    computed again only when ``state`` differs from the last call's."""
    with _lock:
        cached = _cache.get(campaign.id)
    if cached is not None and cached[0] == state:
        return cached[1]
    records = score_records(campaign)
    # no intervals on the dashboard: the judge bootstrap would only cost time
    result = analyse_da(from_da_records(records), bootstrap=0) if records else None
    with _lock:
        _cache[campaign.id] = (state, result)
    return result


def completion(campaign):
    """{system id: (collected, target)} from the slots' counters."""
    rows = db.session.execute(
        select(Slot.system_a_id, func.sum(Slot.collected), func.sum(Slot.target))
        .join(Sentence, Sentence.id == Slot.sentence_id)
        .where(Sentence.campaign_id == campaign.id)
        .group_by(Slot.system_a_id)
    )
    return {system: (int(collected or 0), int(target or 0)) for system, collected, target in rows}


def system_table(campaign, result):
    """One row per system: the analysis's figures (best z first), then the
    systems without a score yet, in the campaign's order."""
    done = completion(campaign)
    ids = {system.name: system.id for system in campaign.systems}
    scored = {row["system"]: row for row in (result["systems"] if result else [])}
    order = list(scored) + [s.name for s in campaign.systems if s.name not in scored]
    table = []
    for name in order:
        row = scored.get(name, {})
        collected, target = done.get(ids[name], (0, 0))
        table.append({"system": name, "scores": row.get("judgments", 0), "raw": row.get("raw"),
                      "z": row.get("z"), "segments": row.get("segments", 0),
                      "collected": collected, "target": target})
    return table


_original = aliased(Item)


def quality_items(campaign):
    """Per kind of quality-control item: how many were answered (valid and
    discarded) and, over the valid ones, the mean score of the item and of
    its original."""
    rows = db.session.execute(
        select(Item.qc_kind, Item.discarded_at.is_not(None), func.count(Item.id), func.avg(Item.score),
               func.avg(_original.score))
        .join(_original, _original.id == Item.original_item_id)
        .where(Item.campaign_id == campaign.id, Item.answered_at.is_not(None), Item.qc_kind.is_not(None))
        .group_by(Item.qc_kind, Item.discarded_at.is_not(None))
    )
    kinds = {kind: {"kind": kind, "valid": 0, "discarded": 0, "mean": None, "original_mean": None}
             for kind in da_quality.KINDS}
    for kind, discarded, count, mean, original_mean in rows:
        entry = kinds[kind]
        if discarded:
            entry["discarded"] = count
        else:
            entry.update(valid=count, mean=float(mean), original_mean=float(original_mean))
    return list(kinds.values())


def judges(result):
    """How many judges the analysis tested, found reliable or not, and left out."""
    entries = result["judges"] if result else []
    count = {status: sum(1 for e in entries if e["status"] == status)
             for status in ("reliable", "unreliable", "untested")}
    return count | {"judges": len(entries), "left_out": sum(1 for e in entries if not e["kept"])}


def state_of(participations, campaign):
    """What the analysis's cache is kept for: the volunteers' counters."""
    return (sum(p.items_answered for p in participations),
            sum(1 for p in participations if p.dismissed_reason),
            frozenset(p.user_id for p in participations if p.held_at is not None), campaign.collected_judgments)




_JUDGED = select(Participation.id, Participation.items_answered, Participation.dismissed_reason,
                 Participation.held_at.is_not(None))
_judged = {}  # campaign id -> {participation id: (its counters, left out by the judge test)}
FEW = 2000  # changed volunteers read by id up to this many, else the whole campaign in one read


def dropped(campaign):
    """The participation ids whose judges the analysis leaves out (its judge
    test, the same function and scores as ``analysis``): ``quality.left_out_volunteer``'s
    "dropped", for the raffle and the dashboard's count of volunteers who count.
    A judge's test reads only their own scores, so it runs again only for the
    volunteers whose counters changed since the last call: the public raffle
    page does not pay for an analysis of every score."""
    rows = db.session.execute(_JUDGED.where(Participation.campaign_id == campaign.id)).all()
    with _lock:
        known = dict(_judged.get(campaign.id, {}))
    changed = {pid: tuple(counters) for pid, *counters in rows if known.get(pid, (None,))[0] != tuple(counters)}
    if changed:
        records = score_records(campaign, list(changed) if len(changed) <= FEW else None)
        failed = {int(entry["judge"]) for entry in (judge_quality(from_da_records(records)) if records else [])
                  if entry["status"] == "unreliable"}
        known.update({pid: (counters, pid in failed) for pid, counters in changed.items()})
        with _lock:
            _judged[campaign.id] = known
    return {pid for pid, (_counters, out) in known.items() if out}


def summary(campaign, participations):
    """The DA dashboard's figures; ``participations`` are the rows the
    shared dashboard read (their counters make the cache's state)."""
    result = analysis(campaign, state_of(participations, campaign))
    dismissed = {code: sum(1 for p in participations if p.dismissed_reason == code) for code in LIVE_RULE}
    return {
        "systems": system_table(campaign, result),
        "quality": quality_items(campaign),
        "judges": judges(result),
        "dismissed_by_rule": [{"reason": code, "count": n} for code, n in dismissed.items()],
        "scores": result["input"]["scores"] if result else 0,
        "settings": {"min_pairs": campaign.qc_min_pairs, "min_spread": campaign.qc_min_spread,
                     "share": campaign.qc_share, "distance": campaign.qc_distance},
    }


def forget(campaign_id=None):
    with _lock:
        if campaign_id is None:
            _cache.clear()
        else:
            _cache.pop(campaign_id, None)
