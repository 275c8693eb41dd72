"""The Direct Assessment part of the organisers' dashboard, read from the
volunteers' running sums (``score_sums``, moved in each answer's transaction):
a few rows per volunteer, never every score.

The sums count the scores that count for research (``services/research.py``:
not too fast, volunteers neither held nor dismissed) and the analysis's
judge test (``stats.da.quality``) leaves out the judges it fails, as
``scripts/analyse.py`` does. The system figures are means over scores, with
each judge's z from their own mean and standard deviation; the analysis
averages per segment first, so its exact figures are in the export and the
analysis.
"""
from sqlalchemy import func, select

from ...extensions import db
from ...models import DaJudge, Participation
from ...services import score_quality, score_sums, totals
from . import quality as da_quality

LIVE_RULE = (score_quality.NOT_LOWER, score_quality.LOW_VARIATION)
_COUNTED = score_sums.COUNTED


def completion(campaign):
    """{system id: (collected, target)} from the campaign's totals per system."""
    return totals.system_completion(campaign.id)


def system_table(campaign):
    """One row per system: scores, judges, raw and z means (best z first),
    then the systems without a score yet, in the campaign's order."""
    done = completion(campaign)
    scored = score_sums.system_scores(campaign.id)
    table = []
    for system in campaign.systems:
        row = scored.get(system.id, {"scores": 0, "judges": 0, "raw": None, "z": None})
        collected, target = done.get(system.id, (0, 0))
        table.append(row | {"system": system.name, "collected": collected, "target": target})
    table.sort(key=lambda r: (r["raw"] is None, r["z"] is None, -(r["z"] or 0.0), -(r["raw"] or 0.0)))
    return table


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
    count = dict.fromkeys((score_quality.RELIABLE, score_quality.UNRELIABLE, score_quality.UNTESTED), 0)
    scores = 0
    for status, n, counted in db.session.execute(_JUDGES.where(DaJudge.campaign_id == campaign.id)):
        count[status] = n
        scores += int(counted)
    return count | {"judges": sum(count.values()), "left_out": count[score_quality.UNRELIABLE]}, scores


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
        DaJudge.campaign_id == campaign.id, DaJudge.status == score_quality.UNRELIABLE))


def summary(campaign, volunteers):
    """The DA dashboard's figures; ``volunteers``: the shared dashboard's
    ``volunteer_figures``."""
    judge_counts, scores = judges(campaign)
    dismissed = {code: volunteers.dismissed.get(code, 0) for code in LIVE_RULE}
    return {
        "systems": system_table(campaign),
        "quality": score_sums.quality_items(campaign.id, da_quality.KINDS),
        "judges": judge_counts,
        "dismissed_by_rule": [{"reason": code, "count": n} for code, n in dismissed.items()],
        "scores": scores,
        "settings": {"min_pairs": campaign.qc_min_pairs, "min_spread": campaign.qc_min_spread,
                     "share": campaign.qc_share, "distance": campaign.qc_distance},
    }
