"""The Direct Assessment part of the organisers' dashboard, read from the
volunteers' running sums (``da_sums``, moved in each answer's transaction):
a few rows per volunteer, never every score.

The sums count the scores that count for research (``services/research.py``:
not too fast, volunteers neither held nor dismissed) and the analysis's
judge test (``stats.da.quality``) leaves out the judges it fails, as
``scripts/analyse.py`` does. The system figures are means over scores, with
each judge's z from their own mean and standard deviation; the analysis
averages per segment first, so its exact figures are in the export and the
analysis.
"""
from sqlalchemy import case, func, select

from ...extensions import db
from ...models import DaJudge, DaJudgeKind, DaJudgeSystem, Participation
from ...services import totals
from . import quality as da_quality

LIVE_RULE = (da_quality.NOT_LOWER, da_quality.LOW_VARIATION)
# Volunteers whose scores count: neither held nor dismissed.
_COUNTED = (Participation.dismissed_at.is_(None), Participation.held_at.is_(None))


def completion(campaign):
    """{system id: (collected, target)} from the campaign's totals per system."""
    return totals.system_completion(campaign.id)


# Per system, over the judges whose scores count: scores, judges, sum of
# scores, sum of z scores and the scores that have one.
_SYSTEM_SUMS = (
    select(DaJudgeSystem.system_id, func.sum(DaJudgeSystem.scores), func.count(), func.sum(DaJudgeSystem.total),
           func.sum(DaJudgeSystem.total * DaJudge.z_scale - DaJudgeSystem.scores * DaJudge.z_shift),
           func.sum(case((DaJudge.z_scale > 0, DaJudgeSystem.scores), else_=0)))
    .join(DaJudge, DaJudge.participation_id == DaJudgeSystem.participation_id)
    .join(Participation, Participation.id == DaJudge.participation_id)
    .where(*_COUNTED, DaJudge.status != da_quality.UNRELIABLE, DaJudgeSystem.scores > 0)
    .group_by(DaJudgeSystem.system_id)
)


def system_scores(campaign):
    """{system id: {"scores", "judges", "raw", "z"}}: means over the scores
    that count, z with each judge's mean and standard deviation (None when
    no judge of the system has one)."""
    return {system: {"scores": int(n), "judges": judges, "raw": int(total) / int(n),
                     "z": z_sum / int(z_scores) if z_scores else None}
            for system, n, judges, total, z_sum, z_scores
            in db.session.execute(_SYSTEM_SUMS.where(DaJudge.campaign_id == campaign.id))}


def system_table(campaign):
    """One row per system: scores, judges, raw and z means (best z first),
    then the systems without a score yet, in the campaign's order."""
    done = completion(campaign)
    scored = system_scores(campaign)
    table = []
    for system in campaign.systems:
        row = scored.get(system.id, {"scores": 0, "judges": 0, "raw": None, "z": None})
        collected, target = done.get(system.id, (0, 0))
        table.append(row | {"system": system.name, "collected": collected, "target": target})
    table.sort(key=lambda r: (r["raw"] is None, r["z"] is None, -(r["z"] or 0.0), -(r["raw"] or 0.0)))
    return table


_KINDS = (
    select(DaJudgeKind.kind, Participation.dismissed_at.is_not(None), func.sum(DaJudgeKind.items),
           func.sum(DaJudgeKind.total), func.sum(DaJudgeKind.original_total))
    .join(Participation, Participation.id == DaJudgeKind.participation_id)
    .group_by(DaJudgeKind.kind, Participation.dismissed_at.is_not(None))
)


def quality_items(campaign):
    """Per kind of quality-control item: how many were answered and paired
    (valid, and discarded with a dismissed volunteer) and, over the valid
    ones, the mean score of the item and of its original."""
    kinds = {kind: {"kind": kind, "valid": 0, "discarded": 0, "mean": None, "original_mean": None}
             for kind in da_quality.KINDS}
    for kind, discarded, count, total, original_total in db.session.execute(
            _KINDS.where(Participation.campaign_id == campaign.id)):
        entry = kinds[kind]
        if discarded:
            entry["discarded"] = int(count)
        elif count:
            entry.update(valid=int(count), mean=int(total) / int(count), original_mean=int(original_total) / int(count))
    return list(kinds.values())


_JUDGES = (
    select(DaJudge.status, func.count(), func.sum(DaJudge.counted))
    .join(Participation, Participation.id == DaJudge.participation_id)
    .where(*_COUNTED, DaJudge.counted > 0)
    .group_by(DaJudge.status)
)


def judges(campaign):
    """How many judges (volunteers with a score that counts) the judge test
    found reliable, unreliable (left out) or has not tested yet, and their
    scores."""
    count = dict.fromkeys((da_quality.RELIABLE, da_quality.UNRELIABLE, da_quality.UNTESTED), 0)
    scores = 0
    for status, n, counted in db.session.execute(_JUDGES.where(DaJudge.campaign_id == campaign.id)):
        count[status] = n
        scores += int(counted)
    return count | {"judges": sum(count.values()), "left_out": count[da_quality.UNRELIABLE]}, scores


def dropped(campaign):
    """The participation ids whose judges the analysis leaves out (its judge
    test, on the scores that count): ``quality.left_out_volunteer``'s
    "dropped", for the raffle and the dashboard's count of volunteers who
    count. Reads only their rows (the verdict is kept with the sums)."""
    return set(db.session.scalars(select(Participation.id).where(*_COUNTED, dropped_condition(campaign))))


def dropped_condition(campaign):
    """``dropped`` as a condition on a participation (the database reads
    the verdicts; no list of ids): dismissed or held volunteers are left
    out for that first, wherever it is used (``quality.left_out_volunteer``)."""
    return Participation.id.in_(select(DaJudge.participation_id).where(
        DaJudge.campaign_id == campaign.id, DaJudge.status == da_quality.UNRELIABLE))


def summary(campaign, volunteers):
    """The DA dashboard's figures; ``volunteers``: the shared dashboard's
    ``volunteer_figures``."""
    judge_counts, scores = judges(campaign)
    dismissed = {code: volunteers.dismissed.get(code, 0) for code in LIVE_RULE}
    return {
        "systems": system_table(campaign),
        "quality": quality_items(campaign),
        "judges": judge_counts,
        "dismissed_by_rule": [{"reason": code, "count": n} for code, n in dismissed.items()],
        "scores": scores,
        "settings": {"min_pairs": campaign.qc_min_pairs, "min_spread": campaign.qc_min_spread,
                     "share": campaign.qc_share, "distance": campaign.qc_distance},
    }
