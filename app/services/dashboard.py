"""The organisers' live dashboard: aggregates from maintained counters.

Nothing here scans every judgment, sentence or slot: volunteer figures
come from the participations' counters; completion per system pair, the
sentences' completeness and the answers per minute from the campaign's
totals (``totals``), moved with each judgment's commit.
"""
import statistics
from collections import Counter
from datetime import datetime, timedelta

from sqlalchemy import func, select

from .. import protocols
from ..choices import AGE_GROUPS, LANGUAGE_LEVELS, STUDIES_FIELDS, STUDIES_LEVELS
from ..extensions import db
from ..models import Item, Participation, RaffleCommitment, User
from . import counting, da_dashboard, leaderboard, quality, raffle, raffle_list, research, totals
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


def summary(campaign, now):
    """The dashboard's figures: the shared ones, and under ``protocol`` those
    of the campaign's protocol (``dashboard``), shown by its ``PANEL``."""
    protocol = protocols.of(campaign)
    participations = db.session.execute(
        select(
            Participation.id, Participation.items_answered, Participation.dismissed_reason,
            Participation.dismissed_at, Participation.controls_answered,
            Participation.controls_failed, Participation.controls_seen_all, Participation.held_at,
            Participation.source_level,
            Participation.target_level, User.age_group, User.studies_level, User.studies_field,
            User.id.label("user_id"), User.username,
        )
        .join(User, User.id == Participation.user_id)
        .where(Participation.campaign_id == campaign.id)
    ).all()
    registered = len(participations)
    dismissed = Counter(p.dismissed_reason for p in participations if p.dismissed_reason)
    valid = [p for p in participations if not p.dismissed_reason]
    # Took part: not dismissed, at least one judgment (never "active", which
    # means answering in the last ACTIVE_MINUTES minutes).
    took_part = [p.items_answered for p in valid if p.items_answered > 0]
    active_now = db.session.scalar(
        select(func.count(func.distinct(Item.participation_id))).where(
            Item.campaign_id == campaign.id,
            Item.answered_at > now - timedelta(minutes=ACTIVE_MINUTES),
        )
    )
    bands = []
    for low, high in CONTRIBUTION_BANDS:
        n = sum(1 for c in took_part if c >= low and (high is None or c <= high))
        bands.append({"band": f"{low}-{high}" if high else f">{low - 1}", "count": n})
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
            "with_no_judgment": sum(1 for p in participations if p.items_answered == 0),
            "dismissed": sum(dismissed.values()),
            "dismissed_reasons": [{"reason": r, "count": n} for r, n in dismissed.most_common()],
            "took_part": len(took_part),
            "median_took_part": statistics.median(took_part) if took_part else 0,
            "mean_took_part": round(statistics.fmean(took_part), 2) if took_part else 0,
        },
        "profile": {
            "age_group": _profile(Counter(p.age_group for p in participations), AGE_GROUPS, registered),
            "studies_level": _profile(Counter(p.studies_level for p in participations), STUDIES_LEVELS, registered),
            "studies_field": _profile(Counter(p.studies_field for p in participations), STUDIES_FIELDS, registered),
            "source_level": _profile(Counter(p.source_level for p in participations), LANGUAGE_LEVELS, registered),
            "target_level": _profile(Counter(p.target_level for p in participations), LANGUAGE_LEVELS, registered),
        },
        "research": research_counts(campaign, protocol, now),
        "who_counts": who_counts(campaign, participations),
        "contributions": bands,
        "panel": protocol.PANEL,
        "protocol": protocol.dashboard(campaign, participations),
        "sentences": sentence_histogram(campaign),
        "chart": answer_rate(campaign.id),
        "top": top_contributors(campaign),
        "raffle": raffle_state(campaign),
    }


def research_counts(campaign, protocol, now):
    """The answers that count for research and those left out, by reason
    (``research.counts``): the rule of the exports and of the analysis. A
    protocol with controls leaves a volunteer untested until their first
    control check; one without has nobody untested."""
    return research.counts(db.session, campaign, now,
                           check_every=campaign.check_every if protocol.USES_CONTROLS else None)


def who_counts(campaign, participations):
    """Volunteers with at least one answer under the one rule of who counts
    (``counting``): {"counted": n, reason: n} (``quality.WHO_COUNTS``), the
    same volunteers the analysis keeps and whose raffle tickets are drawn;
    ``participations``: the rows the dashboard read."""
    answered = [p for p in participations if p.items_answered > 0]
    rows = [(p.id, p.dismissed_at, p.held_at, p.items_answered) for p in answered]
    made = dict.fromkeys(("counted",) + quality.WHO_COUNTS, 0)
    for reason in counting.reasons(campaign, rows=rows).values():
        made[reason or "counted"] += 1
    return made


def top_contributors(campaign, n=leaderboard.PRIZES):
    """The prize winners, from the cached ranking. Each row carries both the
    username (organisers award the prizes) and the export pseudonym (all a
    researcher is shown); ``hidden`` says the volunteer hides their name
    from the public ranking."""
    return [
        {"rank": i + 1, "username": entry.name, "hidden": entry.hidden,
         "volunteer": pseudonym(campaign, entry.user_id), "count": entry.count}
        for i, entry in enumerate(leaderboard.get(campaign.id).entries[:n])
    ]


def pair_completion(campaign):
    """Per system pair, in the campaign's order: judgments collected, their
    target, those beyond their slot's target, and slots with identical outputs."""
    names = {s.id: s.name for s in campaign.systems}
    rows = totals.pair_rows(campaign.id)
    order = {s.id: s.position for s in campaign.systems}
    rows = sorted(rows, key=lambda r: (order[r[0]], order[r[1]]))
    return [
        {"systems": [names[a], names[b]], "collected": int(c or 0), "target": int(t or 0),
         "over": int(o or 0), "identical": int(i or 0)}
        for a, b, c, t, o, i in rows
    ]


def sentence_histogram(campaign):
    """Sentences by completeness, in 10% bins (100% = complete)."""
    counts = totals.bin_counts(campaign.id)
    bins = [{"bin": f"{10 * k}-{10 * k + 9}%", "count": counts.get(k, 0)} for k in range(10)]
    bins.append({"bin": "100%", "count": counts.get(totals.COMPLETE, 0)})
    return {"bins": bins, "nothing_to_judge": counts.get(totals.NOTHING_TO_JUDGE, 0)}


def raffle_state(campaign):
    record = db.session.scalar(select(RaffleCommitment).where(RaffleCommitment.campaign_id == campaign.id))
    listed = raffle.published_now(campaign)
    return {
        "tickets": listed.valid,
        "eligible": listed.count,  # the rule of who counts (counting.py)
        "commitment": record.seed_sha256 if record else None,
        "draw_at": record.draw_at if record else None,
        "beacon": record.beacon if record else None,
        "beacon_at": record.beacon_at if record else None,
        "drawn_at": record.drawn_at.isoformat(timespec="seconds") + "Z" if record and record.drawn_at else None,
        "seed": record.seed if record and record.drawn_at else None,
        "winners": record.winners if record and record.drawn_at else [],
    }


def forget(campaign_id=None):
    raffle_list.forget(campaign_id)
    da_dashboard.forget(campaign_id)
    research.forget(campaign_id)
