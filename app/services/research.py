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
_answers = {}  # campaign id -> {"until": datetime, "counts": Counter, "unpaired": item ids}
_lock = threading.Lock()


_KEY = (Item.participation_id, Item.control_id.is_not(None), Item.too_fast)
# A DA quality-control item served before its original is no answer of the
# exports until its original is scored and pairs it (protocols/da.py): such
# items are kept aside by id and counted once paired.
_UNPAIRED = Item.qc_kind.is_not(None) & Item.original_item_id.is_(None)


def _answer_counts(session, campaign_id, until):
    with _lock:
        state = _answers.setdefault(campaign_id, {"until": None, "counts": Counter(), "unpaired": set()})
        window = [Item.campaign_id == campaign_id, Item.answered_at.is_not(None), Item.answered_at <= until]
        if state["until"] is not None:
            if until <= state["until"]:
                return dict(state["counts"])
            window.append(Item.answered_at > state["until"])
        grouped = select(*_KEY, func.count(Item.id)).where(*window, ~_UNPAIRED).group_by(*_KEY)
        for pid, control, fast, n in session.execute(grouped):
            state["counts"][(pid, bool(control), bool(fast))] += n
        state["unpaired"].update(session.scalars(select(Item.id).where(*window, _UNPAIRED)))
        waiting = sorted(state["unpaired"])
        for start in range(0, len(waiting), IN_CHUNK):
            paired = select(Item.id, *_KEY).where(Item.id.in_(waiting[start:start + IN_CHUNK]),
                                                  Item.original_item_id.is_not(None))
            for item_id, pid, control, fast in session.execute(paired):
                state["counts"][(pid, bool(control), bool(fast))] += 1
                state["unpaired"].discard(item_id)
        state["until"] = until
        return dict(state["counts"])


def counts(session, campaign, now, *, check_every=None):
    """How many answers, answered up to ``LAG`` before ``now``, count for
    research and how many are left out for each reason: {"counted": n,
    reason: n} (``research.REASONS``; absent reasons are 0), under the same
    rule and flags as the exports."""
    answers = _answer_counts(session, campaign.id, now - LAG)
    volunteers = volunteer_flags(session, {pid for pid, *_rest in answers}, check_every=check_every)
    result = dict.fromkeys(("counted",) + research.REASONS, 0)
    for (pid, control, fast), n in answers.items():
        reason = research.left_out(answer_flags(volunteers[pid], control, volunteers[pid]["dismissed"], fast))
        result["counted" if reason is None else reason] += n
    return result


def forget(campaign_id=None):
    with _lock:
        if campaign_id is None:
            _answers.clear()
        else:
            _answers.pop(campaign_id, None)
