"""Why an answer may not count for research, read from the database for the
exports and the dashboard; the rule that decides is ``app.stats.research``
(which ``scripts/analyse.py`` applies to the exported columns).

A volunteer's flags (dismissed, held, untested) are read as they are when
asked: a hold cleared later makes their answers count again.
"""
import threading
from collections import Counter
from datetime import timedelta

from sqlalchemy import bindparam, func, select

from ..models import Item, Participation
from ..stats import research

IN_CHUNK = 500  # participations per query: a bounded number of parameters


def pairwise_untested(items_answered, check_every):
    """Whether a pairwise volunteer is untested: they have not reached the
    first check of their controls (``quality.dismissal_reason`` decides only
    at every ``check_every``-th item), so no control has judged them yet."""
    return items_answered < check_every


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


# The dashboard's counts: answers per (participation, control, too fast),
# read incrementally (only the answers since the last call).
# Up to LAG ago only: an answer is stamped before its transaction commits
# (a busy database retries it for up to BOZKA_BUSY_WAIT seconds), and one
# committed after a read that had gone past its stamp would never be counted.
LAG = timedelta(seconds=30)
_answers = {}  # campaign id -> _new_state()
_lock = threading.Lock()


def _new_state():
    # answers: pid -> Counter{(control, too fast): n}; made: pid -> Counter{reason or "counted": n};
    # result: the sum of made; version, check_every: what the flags were read under.
    return {"until": None, "answers": {}, "unpaired": set(), "made": {}, "result": Counter(), "version": None,
            "check_every": None}


_KEY = (Item.participation_id, Item.control_id.is_not(None), Item.too_fast)
# A DA quality-control item served before its original is no answer of the
# exports until its original is scored and pairs it (protocols/da.py): such
# items are kept aside by id and counted once paired.
_UNPAIRED = Item.qc_kind.is_not(None) & Item.original_item_id.is_(None)


def _read_answers(session, state, campaign_id, until):
    """Add the answers up to ``until`` not read yet to ``state``; returns the
    participation ids whose counts moved."""
    moved = set()
    window = [Item.campaign_id == campaign_id, Item.answered_at.is_not(None), Item.answered_at <= until]
    if state["until"] is not None:
        if until <= state["until"]:
            return moved
        window.append(Item.answered_at > state["until"])

    def add(pid, control, fast, n):
        state["answers"].setdefault(pid, Counter())[(bool(control), bool(fast))] += n
        moved.add(pid)

    grouped = select(*_KEY, func.count(Item.id)).where(*window, ~_UNPAIRED).group_by(*_KEY)
    for pid, control, fast, n in session.execute(grouped):
        add(pid, control, fast, n)
    state["unpaired"].update(session.scalars(select(Item.id).where(*window, _UNPAIRED)))
    waiting = sorted(state["unpaired"])
    for start in range(0, len(waiting), IN_CHUNK):
        paired = select(Item.id, *_KEY).where(Item.id.in_(waiting[start:start + IN_CHUNK]),
                                              Item.original_item_id.is_not(None))
        for item_id, pid, control, fast in session.execute(paired):
            add(pid, control, fast, 1)
            state["unpaired"].discard(item_id)
    state["until"] = until
    return moved


def counts(session, campaign, now, *, check_every=None):
    """How many answers, answered up to ``LAG`` before ``now``, count for
    research and how many are left out for each reason: {"counted": n,
    reason: n} (``research.REASONS``; absent reasons are 0), under the same
    rule and flags as the exports.

    Kept per campaign and moved by what changed since the last call: the
    volunteers with answers since, and everyone after a change of who counts
    (a dismissal or hold moves the campaign's ``raffle_version``), so that a
    call reads as much at 20,000 volunteers as at 100."""
    with _lock:
        state = _answers.setdefault(campaign.id, _new_state())
        stale = _read_answers(session, state, campaign.id, now - LAG)
        if (state["version"], state["check_every"]) != (campaign.raffle_version, check_every):
            state["version"], state["check_every"] = campaign.raffle_version, check_every
            stale = set(state["answers"])
        else:
            # Answers not yet in the window may have changed a volunteer's flags (untested).
            # (Not DISTINCT: SQLite would then walk another index, every answer.)
            stale |= set(session.scalars(select(Item.participation_id).where(
                Item.campaign_id == campaign.id, Item.answered_at > now - LAG)))
        stale &= set(state["answers"])
        flags = volunteer_flags(session, stale, check_every=check_every)
        for pid in stale:
            made = Counter()
            for (control, fast), n in state["answers"][pid].items():
                made[research.left_out(answer_flags(flags[pid], control, flags[pid]["dismissed"], fast))
                     or "counted"] += n
            state["result"].subtract(state["made"].get(pid, Counter()))
            state["result"].update(made)
            state["made"][pid] = made
        return dict.fromkeys(("counted",) + research.REASONS, 0) | {k: n for k, n in state["result"].items() if n}


def forget(campaign_id=None):
    with _lock:
        if campaign_id is None:
            _answers.clear()
        else:
            _answers.pop(campaign_id, None)
