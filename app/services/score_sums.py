"""A scoring volunteer's running sums (DA and ESA: ``DaJudge``, named for
the protocol that came first, and its per-system and per-kind rows), moved
by each answer in its transaction: the live rules (``score_quality``), the
analysis's judge test and the dashboard panels read them instead of every
score.

What counts for research follows the dashboards' rule: a score not
faster than the reading floor; a bad reference served before its original
once that original is scored. Held and dismissed volunteers are left out
when the sums are read, not here.
"""
from sqlalchemy import case, func, select

from ..extensions import db
from ..models import DaJudge, DaJudgeKind, DaJudgeSystem, Item, Participation
from . import score_quality

RESEARCH_SUMS = ("counted", "counted_sum", "counted_squares", "tested_pairs", "diff_sum", "diff_squares")


def new_judge(participation_id, campaign_id):
    return DaJudge(participation_id=participation_id, campaign_id=campaign_id, status=score_quality.UNTESTED,
                   z_scale=0.0, z_shift=0.0, **dict.fromkeys(score_quality.LIVE_SUMS + RESEARCH_SUMS, 0))


def judge_of(participation):
    """The volunteer's ``DaJudge`` row, made (in the session) at their first answer."""
    judge = db.session.get(DaJudge, participation.id)
    if judge is None:
        judge = new_judge(participation.id, participation.campaign_id)
        db.session.add(judge)
    return judge


def record(participation, item, original, linked, marks=None):
    """Move the volunteer's sums by the answer to ``item``; ``original``:
    the item it repeats or degrades (None for a test item or a bad reference
    served first); ``linked``: the bad references served before it that it
    pairs now (rows with ``qc_kind``, ``score``, ``too_fast``,
    ``left_system_id``); ``marks``: ESA's (minor, major, omissions) of the
    answer, summed per system with its score. Returns (their ``DaJudge``,
    whether a bad-reference pair was completed)."""
    judge = judge_of(participation)

    def system_row(system_id):
        row = db.session.get(DaJudgeSystem, (judge.participation_id, system_id))
        if row is None:
            row = DaJudgeSystem(participation_id=judge.participation_id, system_id=system_id, scores=0, total=0,
                                minor=0, major=0, omissions=0)
            db.session.add(row)
        return row

    def kind_row(kind):
        row = db.session.get(DaJudgeKind, (judge.participation_id, kind))
        if row is None:
            row = DaJudgeKind(participation_id=judge.participation_id, kind=kind, items=0, total=0,
                              original_total=0)
            db.session.add(row)
        return row

    return judge, count_answer(judge, system_row, kind_row, item, original, linked, marks)


def count_answer(judge, system_row, kind_row, item, original, linked, marks=None):
    """The fold of one answer into the sums (``record``, and ``recompute``
    from the stored rows); ``system_row(id)`` and ``kind_row(kind)`` give
    the rows to move. Returns whether a bad-reference pair was completed."""
    score_quality.add_score(judge, item.score)
    if item.qc_kind is None:
        _count(judge, system_row, item, marks)
        for bad in linked:
            _pair(judge, system_row, kind_row, bad, item)
        return bool(linked)
    if original is None:
        return False  # a bad reference served first: counted once its original is scored
    _pair(judge, system_row, kind_row, item, original)
    return item.qc_kind == score_quality.BAD_REFERENCE


def _count(judge, system_row, item, marks=None):
    """A score that counts for research from now on (unless too fast), with
    its error marks (ESA)."""
    if item.too_fast:
        return
    judge.counted += 1
    judge.counted_sum += item.score
    judge.counted_squares += item.score * item.score
    n, total, squares = judge.counted, judge.counted_sum, judge.counted_squares
    if n > 1 and n * squares > total * total:  # a standard deviation (n - 1), as the analysis's
        judge.z_scale = 1 / score_quality.spread(n, total, squares, 1)
        judge.z_shift = total / n * judge.z_scale
    if item.qc_kind in (None, score_quality.REPEAT):  # a repeat scores its system again, as in the analysis
        row = system_row(item.left_system_id)
        row.scores += 1
        row.total += item.score
        if marks:
            row.minor, row.major, row.omissions = (a + b for a, b in zip((row.minor, row.major, row.omissions), marks))


def _pair(judge, system_row, kind_row, item, original):
    """A quality-control item paired with its original now."""
    kind = kind_row(item.qc_kind)
    kind.items += 1
    kind.total += item.score
    kind.original_total += original.score
    _count(judge, system_row, item)
    if item.qc_kind != score_quality.BAD_REFERENCE:
        return
    score_quality.add_pair(judge, original.score, item.score)
    if not (item.too_fast or original.too_fast):
        difference = item.score - original.score
        judge.tested_pairs += 1
        judge.diff_sum += difference
        judge.diff_squares += difference * difference
        judge.status = score_quality.judge_status(judge.tested_pairs, judge.diff_sum, judge.diff_squares)


_ANSWERED = (select(Item.id, Item.position, Item.qc_kind, Item.score, Item.too_fast, Item.left_system_id,
                    Item.original_item_id)
             .where(Item.answered_at.is_not(None), Item.score.is_not(None)).order_by(Item.position))


def recompute(participation_id, campaign_id, rows, marks_of=None):
    """The sums of a volunteer's answered ``rows`` (``_ANSWERED``'s columns,
    in position order), folded as their answers moved them: (``DaJudge``,
    [``DaJudgeSystem``], [``DaJudgeKind``]), not in any session."""
    judge = new_judge(participation_id, campaign_id)
    systems, kinds = {}, {}

    def system_row(system_id):
        return systems.setdefault(system_id, DaJudgeSystem(
            participation_id=participation_id, system_id=system_id, scores=0, total=0, minor=0, major=0, omissions=0))

    def kind_row(kind):
        return kinds.setdefault(kind, DaJudgeKind(participation_id=participation_id, kind=kind, items=0,
                                                  total=0, original_total=0))

    by_id = {row.id: row for row in rows}
    # The bad references served before their original, by that original.
    linked = {}
    for row in rows:
        original = by_id.get(row.original_item_id)
        if original is not None and original.position > row.position:
            linked.setdefault(original.id, []).append(row)
    for row in rows:
        original = by_id.get(row.original_item_id)
        if original is not None and original.position > row.position:
            original = None  # paired when its original is answered
        count_answer(judge, system_row, kind_row, row, original, linked.get(row.id, []),
                     marks_of(row) if marks_of is not None else None)
    return judge, list(systems.values()), list(kinds.values())


def recompute_from_database(participation):
    """``recompute`` on the volunteer's stored answers."""
    rows = db.session.execute(_ANSWERED.where(Item.participation_id == participation.id)).all()
    return recompute(participation.id, participation.campaign_id, rows)


# The dashboards read the sums of the volunteers whose scores count: neither
# held nor dismissed.
COUNTED = (Participation.dismissed_at.is_(None), Participation.held_at.is_(None))
# Per system, over those judges: scores, judges, sum of scores, sum of z
# scores and the scores that have one, and the errors marked (ESA).
_SYSTEM_SUMS = (
    select(DaJudgeSystem.system_id, func.sum(DaJudgeSystem.scores), func.count(), func.sum(DaJudgeSystem.total),
           func.sum(DaJudgeSystem.total * DaJudge.z_scale - DaJudgeSystem.scores * DaJudge.z_shift),
           func.sum(case((DaJudge.z_scale > 0, DaJudgeSystem.scores), else_=0)),
           func.sum(DaJudgeSystem.minor), func.sum(DaJudgeSystem.major), func.sum(DaJudgeSystem.omissions))
    .join(DaJudge, DaJudge.participation_id == DaJudgeSystem.participation_id)
    .join(Participation, Participation.id == DaJudge.participation_id)
    .where(*COUNTED, DaJudgeSystem.scores > 0)
    .group_by(DaJudgeSystem.system_id)
)


def system_scores(campaign_id, leave_out_unreliable=True):
    """{system id: {"scores", "judges", "raw", "z", "minor", "major",
    "omissions"}}: means over the scores that count, z with each judge's
    mean and standard deviation (None when no judge of the system has one),
    and the errors marked in all. Judges the judge test fails are left out
    when the protocol's analysis leaves them out (DA's does)."""
    statement = _SYSTEM_SUMS.where(DaJudge.campaign_id == campaign_id)
    if leave_out_unreliable:
        statement = statement.where(DaJudge.status != score_quality.UNRELIABLE)
    return {system: {"scores": int(n), "judges": judges, "raw": int(total) / int(n),
                     "z": z_sum / int(z_scores) if z_scores else None,
                     "minor": int(minor), "major": int(major), "omissions": int(omissions)}
            for system, n, judges, total, z_sum, z_scores, minor, major, omissions in db.session.execute(statement)}


_KINDS = (
    select(DaJudgeKind.kind, Participation.dismissed_at.is_not(None), func.sum(DaJudgeKind.items),
           func.sum(DaJudgeKind.total), func.sum(DaJudgeKind.original_total))
    .join(Participation, Participation.id == DaJudgeKind.participation_id)
    .group_by(DaJudgeKind.kind, Participation.dismissed_at.is_not(None))
)


def quality_items(campaign_id, kinds):
    """Per kind of quality-control item (of ``kinds``): how many were
    answered and paired (valid, and discarded with a dismissed volunteer)
    and, over the valid ones, the mean score of the item and of its original."""
    entries = {kind: {"kind": kind, "valid": 0, "discarded": 0, "mean": None, "original_mean": None} for kind in kinds}
    for kind, discarded, count, total, original_total in db.session.execute(
            _KINDS.where(Participation.campaign_id == campaign_id)):
        entry = entries[kind]
        if discarded:
            entry["discarded"] = int(count)
        elif count:
            entry.update(valid=int(count), mean=int(total) / int(count), original_mean=int(original_total) / int(count))
    return list(entries.values())
