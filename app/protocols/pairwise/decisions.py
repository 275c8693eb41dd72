"""The pairs' live decisions (issue 32), kept on the pair rows.

``replan`` runs the rules of ``pair_plan`` on a campaign's pair counters
(the sentences each system won, moved with every commit) and writes what
changed: the system decided better, when, and whether the pair still gets
judgments. The live ticker calls it once per broadcast (coalesced like the
ranking), so a judgment's request never pays for it; serving reads the
``is_open`` it wrote. Decisions come only from the anytime-valid test,
whatever the campaign's assignment: under the paper's rule they are shown,
not acted on.
"""
from dataclasses import dataclass
from functools import lru_cache

from sqlalchemy import bindparam, func, select, update

from ...extensions import db
from ...formats import iso_utc
from ...models import Campaign, PairTotal, utcnow
from ...services import reservations
from . import plan as pair_plan


def pair_totals(campaign_id):
    """The campaign's pairwise pair rows, in a fixed order (the lock order of ``totals.write``)."""
    return db.session.scalars(
        select(PairTotal)
        .where(PairTotal.campaign_id == campaign_id, PairTotal.system_b_id.is_not(None))
        .order_by(PairTotal.system_a_id, PairTotal.system_b_id)
    ).all()


def states_of(rows):
    return [pair_plan.PairState(row.system_a_id, row.system_b_id, row.wins_a, row.wins_b, row.collected)
            for row in rows]


def replan(campaign, now):
    """Decide the campaign's pairs from their counters and write what changed
    (the caller commits). Returns the pairs whose decision or openness
    changed: (system a, system b, open)."""
    rows = pair_totals(campaign.id)
    if not rows:
        return []
    plans = pair_plan.plan(states_of(rows), campaign.goal, estimate=False)
    changed = []
    for row, plan in zip(rows, plans):
        decided = plan.better if plan.decided else None
        if (row.decided_id, row.is_open) == (decided, plan.open):
            continue
        values = {"decided_id": decided, "is_open": plan.open}
        if decided != row.decided_id:
            values["decided_at"] = now if decided is not None else None
        db.session.execute(update(PairTotal).where(PairTotal.id == row.id).values(**values))
        changed.append((row.system_a_id, row.system_b_id, plan.open))
    return changed


_SETTLED = (
    select(func.count(PairTotal.id).filter(PairTotal.is_open.is_(False)), func.count(PairTotal.id))
    .where(PairTotal.campaign_id == bindparam("campaign_id"), PairTotal.system_b_id.is_not(None))
)


def settled(campaign_id):
    """(pairs that need no more judgments, pairs): the community's progress
    towards a sequential campaign's goal."""
    return tuple(db.session.execute(_SETTLED, {"campaign_id": campaign_id}).one())


def decided(campaign):
    """The pairs decided so far, as (better, worse) system names in the order decided."""
    names = {system.id: system.name for system in campaign.systems}
    rows = db.session.execute(
        select(PairTotal.system_a_id, PairTotal.system_b_id, PairTotal.decided_id)
        .where(PairTotal.campaign_id == campaign.id, PairTotal.decided_id.is_not(None))
        .order_by(PairTotal.decided_at, PairTotal.id)).all()
    return [(names[better], names[b if better == a else a]) for a, b, better in rows]


def goal_reached(campaign):
    """Whether a sequential campaign needs no more judgments: every pair settled."""
    if campaign.assignment != pair_plan.SEQUENTIAL:
        return False
    done, pairs = settled(campaign.id)
    return pairs > 0 and done == pairs


def refresh(campaign_id, now=None):
    """``replan`` a campaign and commit what changed (the live ticker's
    call); then, under sequential assignment, free the reservations of the
    pairs it retired, in a transaction of their own (as ``reservations``
    frees expired ones). Returns the number of pairs that changed."""
    campaign = db.session.get(Campaign, campaign_id)
    if campaign is None or campaign.protocol != "pairwise":
        return 0
    changed = replan(campaign, now or utcnow())
    if changed:
        db.session.commit()
    closed = [(system_a_id, system_b_id) for system_a_id, system_b_id, is_open in changed if not is_open]
    if closed and campaign.assignment == pair_plan.SEQUENTIAL:
        for system_a_id, system_b_id in closed:
            reservations.release_pair(campaign_id, system_a_id, system_b_id)
        db.session.commit()
    return len(changed)


@dataclass
class PairDecision:
    system_a: str
    system_b: str
    wins_a: int
    wins_b: int
    judgments: int
    decided: bool
    better: str  # the system's name, or None
    open: bool
    more: object  # about how many more decisive judgments, or None
    decided_at: object


def overview(campaign):
    """Per pair, in the campaign's order of systems, for the dashboard: the
    counts, the decision (as last written by ``replan``) and about how many
    more decisive judgments an open pair needs."""
    names = {system.id: system.name for system in campaign.systems}
    order = {system.id: system.position for system in campaign.systems}
    rows = pair_totals(campaign.id)
    more = _estimates(tuple((r.system_a_id, r.system_b_id, r.wins_a, r.wins_b) for r in rows), campaign.goal)
    decisions = [PairDecision(names[row.system_a_id], names[row.system_b_id], row.wins_a, row.wins_b, row.collected,
                              row.decided_id is not None, names.get(row.decided_id), row.is_open,
                              estimate if row.is_open else None, row.decided_at)
                 for row, estimate in zip(rows, more)]
    return [d for _key, d in sorted(zip(((order[r.system_a_id], order[r.system_b_id]) for r in rows), decisions),
                                    key=lambda pair: pair[0])]


@lru_cache(maxsize=64)
def _estimates(counts, goal):
    """``plan``'s estimates for these counts ((system a, system b, wins a,
    wins b) per pair): the dashboard asks each second, the counts change far
    less often (kept per distinct counts)."""
    states = [pair_plan.PairState(a, b, wins_a, wins_b, 0) for a, b, wins_a, wins_b in counts]
    return tuple(plan.more for plan in pair_plan.plan(states, goal))


#: The "decisions" export's columns (services/export.py, docs/export-format.md):
#: what scripts/analyse.py --decisions reads to keep the campaign's sequential
#: decisions in its final analysis (app/stats/sequential.final_analysis).
EXPORT_COLUMNS = [
    "campaign", "system_a", "system_b", "wins_a", "wins_b", "judgments", "decided_better", "decided_at",
    "level", "assignment", "goal",
]


def export_rows(campaign, engine):
    """The "decisions" export: one row per system pair, in the campaign's
    order of systems, with the sentences each system won, the judgments
    collected and the pair's live decision (the system decided better by the
    anytime-valid test at ``level``, and when; empty when undecided).
    ``campaign`` is an export Source; the rows are read through ``engine``."""
    with engine.connect() as connection:  # one row per pair: a short read
        assignment, goal = connection.execute(
            select(Campaign.assignment, Campaign.goal).where(Campaign.id == campaign.id)).one()
        rows = connection.execute(
            select(PairTotal.system_a_id, PairTotal.system_b_id, PairTotal.wins_a, PairTotal.wins_b,
                   PairTotal.collected, PairTotal.decided_id, PairTotal.decided_at)
            .where(PairTotal.campaign_id == campaign.id, PairTotal.system_b_id.is_not(None))).all()
    names = campaign.system_names
    position = {system_id: n for n, system_id in enumerate(names)}  # names: in the campaign's order
    for row in sorted(rows, key=lambda r: (position[r.system_a_id], position[r.system_b_id])):
        yield {
            "campaign": campaign.slug,
            "system_a": names[row.system_a_id],
            "system_b": names[row.system_b_id],
            "wins_a": row.wins_a,
            "wins_b": row.wins_b,
            "judgments": row.collected,
            "decided_better": names.get(row.decided_id),  # None (empty in CSV) when undecided
            "decided_at": iso_utc(row.decided_at),
            "level": pair_plan.SEQUENTIAL_ALPHA,
            "assignment": assignment,
            "goal": goal,
        }
