"""Why an answer may not count for research, read from the database for the
exports and the dashboard; the rule that decides is ``app.stats.research``
(which ``scripts/analyse.py`` applies to the exported columns).

A volunteer's flags (dismissed, held, untested) are read as they are when
asked: a hold cleared later makes their answers count again.
"""
from sqlalchemy import bindparam, func, or_, select, update

from ..extensions import db
from ..models import Item, Participation
from ..stats import research

IN_CHUNK = 500  # participations per query: a bounded number of parameters


def pairwise_untested(items_answered, check_every):
    """Whether a pairwise volunteer is untested: they have not reached the
    first check of their controls (pairwise's ``controls.dismissal_reason`` decides only
    at every ``check_every``-th item), so no control has judged them yet."""
    return items_answered < check_every


def untested_condition(check_every):
    """``pairwise_untested`` as a condition on the volunteers' rows (for aggregates)."""
    return Participation.items_answered < check_every


_VOLUNTEERS = select(
    Participation.id, Participation.dismissed_at, Participation.held_at, Participation.held_reason,
    Participation.items_answered,
).where(Participation.id.in_(bindparam("ids", expanding=True)))


def volunteer_flags(connection, participation_ids, *, check_every=None):
    """{participation id: {"dismissed", "held", "held_reason", "untested"}}
    read on ``connection`` (a Connection or Session). The untested rule is
    pairwise's, given ``check_every``; without it (DA) nobody is untested:
    the analysis's judge test keeps the judges it cannot test yet, as WMT
    does (issue 29)."""
    ids = sorted(set(participation_ids))
    flags = {}
    for start in range(0, len(ids), IN_CHUNK):
        chunk = ids[start:start + IN_CHUNK]
        for pid, dismissed_at, held_at, held_reason, answered in connection.execute(_VOLUNTEERS, {"ids": chunk}):
            untested = check_every is not None and pairwise_untested(answered, check_every)
            flags[pid] = {"dismissed": dismissed_at is not None, "held": held_at is not None,
                          "held_reason": held_reason, "untested": untested}
    return flags


def answer_flags(volunteer, is_control, discarded, too_fast):
    """The flags ``research.left_out`` reads, of one answer of a volunteer
    with the flags ``volunteer`` (``volunteer_flags``)."""
    return {"control": is_control, "discarded": discarded, "dismissed": volunteer["dismissed"],
            "held": volunteer["held"], "untested": volunteer["untested"], "too_fast": too_fast}


def flag_values(volunteer, is_control, discarded, too_fast):
    """The exports' flag columns (``research.FLAG_COLUMNS``) of one answer,
    ``left_out`` decided by the rule."""
    return {
        "too_fast": too_fast, "dismissed": volunteer["dismissed"], "held": volunteer["held"],
        "held_reason": volunteer["held_reason"], "untested": volunteer["untested"],
        "left_out": research.left_out(answer_flags(volunteer, is_control, discarded, too_fast)),
    }


def is_row(item):
    """Whether an answered item is a row of the judgments exports: every
    answer but a quality-control item whose original is not answered yet
    (DA's bad references served before it; ``protocols/da/protocol.py`` pairs them
    later, and they are counted then)."""
    return item.qc_kind is None or item.original_item_id is not None


def row_counters(participation, rows):
    """The volunteer's export-row counters after ``rows`` more rows: items
    (answered, ``is_row``) with their ``control_id`` and ``too_fast``. Kept
    on the volunteer's row with the answer's commit (``set_counters``), so
    that the dashboard's research counts read no judgment."""
    controls = sum(1 for item in rows if item.control_id is not None)
    fast = sum(1 for item in rows if item.control_id is None and item.too_fast)
    return {"research_controls": participation.research_controls + controls,
            "research_tests": participation.research_tests + len(rows) - controls,
            "research_tests_too_fast": participation.research_tests_too_fast + fast}


_STATE = (Participation.dismissed_at.is_not(None), Participation.held_at.is_not(None))


def counts(session, campaign, *, check_every=None):
    """How many answers count for research and how many are left out for
    each reason: {"counted": n, reason: n} (``research.REASONS``; absent
    reasons are 0), under the same rule and flags as the exports. One row
    per state of volunteers (dismissed, held, untested) summing their
    export-row counters: as much read at 1,000,000 judgments as at 100."""
    state = _STATE if check_every is None else (*_STATE, untested_condition(check_every))
    query = (
        select(func.sum(Participation.research_controls), func.sum(Participation.research_tests),
               func.sum(Participation.research_tests_too_fast), *state)
        .where(Participation.campaign_id == campaign.id)
        .group_by(*state)
    )
    result = dict.fromkeys(("counted",) + research.REASONS, 0)
    for controls, tests, fast, dismissed, held, *untested in session.execute(query):
        volunteer = {"dismissed": bool(dismissed), "held": bool(held), "untested": any(untested)}
        for is_control, too_fast, n in ((True, False, controls), (False, True, fast), (False, False, tests - fast)):
            reason = research.left_out(answer_flags(volunteer, is_control, volunteer["dismissed"], too_fast))
            result[reason or "counted"] += int(n or 0)
    return result


def recount(campaign_id):
    """Set every volunteer's export-row counters from their stored answers
    (a repair, and for benchmarks that build states by inserting rows)."""
    rows = select(func.count(Item.id)).where(
        Item.participation_id == Participation.id, Item.answered_at.is_not(None),
        or_(Item.qc_kind.is_(None), Item.original_item_id.is_not(None)))
    tests = rows.where(Item.control_id.is_(None))
    db.session.execute(update(Participation).where(Participation.campaign_id == campaign_id).values(
        research_controls=rows.where(Item.control_id.is_not(None)).scalar_subquery(),
        research_tests=tests.scalar_subquery(),
        research_tests_too_fast=tests.where(Item.too_fast).scalar_subquery()))
