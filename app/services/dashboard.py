"""The organisers' live dashboard: aggregates from maintained counters.

Nothing here scans every judgment, sentence or slot: volunteer figures
are aggregates of the participations' counters (``volunteer_figures``); completion per system pair, the
sentences' completeness and the answers per minute from the campaign's
totals (``totals``), moved with each judgment's commit.
"""
from collections import Counter
from datetime import datetime, timedelta

from sqlalchemy import func, select

from .. import protocols
from ..choices import AGE_GROUPS, DISMISSAL_KINDS, LANGUAGE_LEVELS, STUDIES_FIELDS, STUDIES_LEVELS, dismissal_kind, label
from ..extensions import db
from ..models import Item, RaffleCommitment, utcnow
from . import counting, leaderboard, quality, raffle, raffle_list, research, totals, volunteer_figures
from .pseudonyms import pseudonym

CONTRIBUTION_BANDS = [(1, 25), (26, 100), (101, 250), (251, 600), (601, None)]
ACTIVE_MINUTES = 5


def _profile(counter, options, total):
    rows = []
    for key, label in options:
        count = counter.get(key, 0)
        rows.append({"key": key, "label": str(label), "count": count,
                     "percent": round(100 * count / total, 2) if total else 0.0})
    return rows


_NO_CHART = {"bars": [], "minutes": 1, "peak": 0, "start": None, "end": None}


def _bar_minutes(start, end, bars):
    """(minutes per bar, rounded up, and how many bars) for at most ``bars`` bars from ``start`` to ``end``."""
    span = int((end - start).total_seconds() // 60) + 1
    width = -(-span // bars)
    return width, -(-span // width)


def rate_chart(per_minute, bars=120):
    """Answers per minute as at most ``bars`` bars over the whole span, with
    the quiet minutes in it: each bar covers ``minutes`` minutes and shows
    the mean answers per minute over them. Times are naive UTC datetimes,
    for the template to format in the interface language. ``per_minute``:
    (ISO minute, answers) pairs."""
    if not per_minute:
        return dict(_NO_CHART)
    counts = {datetime.fromisoformat(minute): n for minute, n in per_minute}
    start, end = min(counts), max(counts)
    width, count = _bar_minutes(start, end, bars)
    sums = [0] * count
    for minute, n in counts.items():
        sums[int((minute - start).total_seconds() // 60) // width] += n
    return _chart(start, end, width, sums)


def answer_rate(campaign_id, bars=120):
    """``rate_chart`` of the campaign's answers, from its answers per minute
    (``totals``): the first and last minute, then one sum per bar."""
    start, end = totals.minute_span(campaign_id)
    if start is None:
        return dict(_NO_CHART)
    width, count = _bar_minutes(start, end, bars)
    sums = [0] * count
    for bar, n in totals.answers_per_bar(campaign_id, start, width).items():
        sums[bar] += int(n)
    return _chart(start, end, width, sums)


def _chart(start, end, width, sums):
    rows = [{"start": start + timedelta(minutes=i * width), "rate": total / width} for i, total in enumerate(sums)]
    return {"bars": rows, "minutes": width, "peak": max(row["rate"] for row in rows), "start": start, "end": end,
            "one_day": start.date() == end.date()}


def dismissal_kinds(dismissed):
    """[{"reason": kind, "label", "count"}] from {stored reason: volunteers},
    most first: an organiser's reasons (free text) counted as one kind."""
    kinds = Counter()
    for reason, n in dismissed.items():
        kinds[dismissal_kind(reason)] += n
    return [{"reason": kind, "label": label(DISMISSAL_KINDS, kind), "count": n} for kind, n in kinds.most_common()]


def summary(campaign, now):
    """The dashboard's figures: the shared ones, and under ``protocol`` those
    of the campaign's protocol (``dashboard``), shown by its ``PANEL``."""
    protocol = protocols.of(campaign)
    check_every = campaign.check_every if protocol.USES_CONTROLS else None
    volunteers = volunteer_figures.read(campaign.id, check_every, counting.dropped_condition(campaign))
    profile = volunteer_figures.profile_counts(campaign.id)
    registered = volunteers.registered
    active_now = db.session.scalar(
        select(func.count(func.distinct(Item.participation_id))).where(
            Item.campaign_id == campaign.id,
            Item.answered_at > now - timedelta(minutes=ACTIVE_MINUTES),
        )
    )
    # Took part: not dismissed, at least one judgment (never "active", which
    # means answering in the last ACTIVE_MINUTES minutes).
    bands = [{"band": f"{low}-{high}" if high else f">{low - 1}", "count": volunteers.took_part_between(low, high)}
             for low, high in CONTRIBUTION_BANDS]
    return {
        "campaign": {"slug": campaign.slug, "name": campaign.name, "status": campaign.status},
        "totals": {
            "judgments": campaign.collected_judgments,
            "target": campaign.target_judgments,
            "completion": round(100 * campaign.collected_judgments / campaign.target_judgments, 2)
            if campaign.target_judgments else 0.0,
            "over_collected": campaign.over_collected,
            "registered": registered,
            "active_now": active_now,
            "active_minutes": ACTIVE_MINUTES,
            "with_no_judgment": volunteers.with_no_judgment,
            "dismissed": sum(volunteers.dismissed.values()),
            "dismissed_reasons": dismissal_kinds(volunteers.dismissed),
            "took_part": sum(volunteers.took_part.values()),
            "median_took_part": volunteers.median_took_part(),
            "mean_took_part": volunteers.mean_took_part(),
        },
        "profile": {
            "age_group": _profile(profile["age_group"], AGE_GROUPS, registered),
            "studies_level": _profile(profile["studies_level"], STUDIES_LEVELS, registered),
            "studies_field": _profile(profile["studies_field"], STUDIES_FIELDS, registered),
            "source_level": _profile(profile["source_level"], LANGUAGE_LEVELS, registered),
            "target_level": _profile(profile["target_level"], LANGUAGE_LEVELS, registered),
        },
        "research": research.counts(db.session, campaign, check_every=check_every),
        "who_counts": volunteers.who_counts,
        "contributions": bands,
        "panel": protocol.PANEL,
        "protocol": protocol.dashboard(campaign, volunteers),
        "sentences": sentence_histogram(campaign),
        "chart": answer_rate(campaign.id),
        "top": top_contributors(campaign),
        "raffle": raffle_state(campaign, now),
    }


SHOWN_WITHOUT_PRIZES = 5  # the top contributors listed when the ranking wins no prize


def top_contributors(campaign):
    """The prize winners (``leaderboard_prizes``; the first five when the
    ranking wins none), from the cached ranking. Each row carries both the
    username (organisers award the prizes, and open the volunteer's review
    page by ``participation``) and the export pseudonym (all a researcher is
    shown); ``hidden`` says the volunteer hides their name from the public
    ranking. Equal counts share a rank, as in the volunteers' ranking
    (``leaderboard.competition_ranks``; the ranks of a top are those of the
    whole list)."""
    entries = leaderboard.get(campaign.id).entries[:campaign.leaderboard_prizes or SHOWN_WITHOUT_PRIZES]
    ranks = leaderboard.competition_ranks([entry.count for entry in entries])
    return [
        {"rank": rank, "username": entry.name, "hidden": entry.hidden, "participation": entry.participation_id,
         "volunteer": pseudonym(campaign, entry.user_id), "count": entry.count}
        for rank, entry in zip(ranks, entries)
    ]


def sentence_histogram(campaign):
    """Sentences by completeness, in 10% bins (100% = complete)."""
    counts = totals.bin_counts(campaign.id)
    bins = [{"bin": f"{10 * k}-{10 * k + 9}%", "count": counts.get(k, 0)} for k in range(10)]
    bins.append({"bin": "100%", "count": counts.get(totals.COMPLETE, 0)})
    return {"bins": bins, "nothing_to_judge": counts.get(totals.NOTHING_TO_JUDGE, 0)}


def raffle_state(campaign, now=None):
    record = db.session.scalar(select(RaffleCommitment).where(RaffleCommitment.campaign_id == campaign.id))
    return {
        **raffle_tickets(campaign, raffle_list.valid(campaign),
                         raffle_list.holders(campaign, raffle.frozen_at(campaign, record, now or utcnow()))),
        "commitment": record.seed_sha256 if record else None,
        "draw_at": record.draw_at if record else None,
        "beacon": record.beacon if record else None,
        "beacon_at": record.beacon_at if record else None,
        "drawn_at": record.drawn_at.isoformat(timespec="seconds") + "Z" if record and record.drawn_at else None,
        "seed": record.seed if record and record.drawn_at else None,
        "winners": record.winners if record and record.drawn_at else [],
    }


def raffle_tickets(campaign, valid, holders):
    """The raffle's ticket figures as the published list has them: ``eligible``
    on the list (the rule of who counts, counting.py), and the valid tickets
    left out of it by why (``left_out``: [(reason, tickets)], the codes of
    ``quality.WHO_COUNTS`` and "unconfirmed": their holder's email is not
    confirmed), from ``valid`` and ``raffle_list.holders``' counts."""
    listed = holders.get(None, 0)
    left_out = [(reason, holders[reason]) for reason in quality.WHO_COUNTS if holders.get(reason)]
    # Valid tickets whose holders have not confirmed their email: in no row of ``holders``.
    unconfirmed = valid - sum(holders.values())
    if unconfirmed > 0:
        left_out.append(("unconfirmed", unconfirmed))
    return {"tickets": valid, "eligible": listed, "left_out": left_out,
            "left_out_total": sum(n for _reason, n in left_out)}


def forget(campaign_id=None):
    raffle_list.forget(campaign_id)
