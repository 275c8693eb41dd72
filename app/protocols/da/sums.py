"""A DA volunteer's running sums (``DaJudge`` and its per-system and
per-kind rows), moved by each answer in its transaction: the live rules
(``da_quality``), the analysis's judge test and the dashboard panel read
them instead of every score.

What counts for research follows ``da_dashboard``'s rule: a score not
faster than the reading floor; a bad reference served before its original
once that original is scored. Held and dismissed volunteers are left out
when the sums are read, not here.
"""
from sqlalchemy import select

from ...extensions import db
from ...models import DaJudge, DaJudgeKind, DaJudgeSystem, Item
from . import quality as da_quality

RESEARCH_SUMS = ("counted", "counted_sum", "counted_squares", "tested_pairs", "diff_sum", "diff_squares")


def new_judge(participation_id, campaign_id):
    return DaJudge(participation_id=participation_id, campaign_id=campaign_id, status=da_quality.UNTESTED,
                   z_scale=0.0, z_shift=0.0, **dict.fromkeys(da_quality.LIVE_SUMS + RESEARCH_SUMS, 0))


def judge_of(participation):
    """The volunteer's ``DaJudge`` row, made (in the session) at their first answer."""
    judge = db.session.get(DaJudge, participation.id)
    if judge is None:
        judge = new_judge(participation.id, participation.campaign_id)
        db.session.add(judge)
    return judge


def record(participation, item, original, linked):
    """Move the volunteer's sums by the answer to ``item``; ``original``:
    the item it repeats or degrades (None for a test item or a bad reference
    served first); ``linked``: the bad references served before it that it
    pairs now (rows with ``qc_kind``, ``score``, ``too_fast``,
    ``left_system_id``). Returns (their ``DaJudge``, whether a bad-reference
    pair was completed)."""
    judge = judge_of(participation)

    def system_row(system_id):
        row = db.session.get(DaJudgeSystem, (judge.participation_id, system_id))
        if row is None:
            row = DaJudgeSystem(participation_id=judge.participation_id, system_id=system_id, scores=0, total=0)
            db.session.add(row)
        return row

    def kind_row(kind):
        row = db.session.get(DaJudgeKind, (judge.participation_id, kind))
        if row is None:
            row = DaJudgeKind(participation_id=judge.participation_id, kind=kind, items=0, total=0,
                              original_total=0)
            db.session.add(row)
        return row

    return judge, count_answer(judge, system_row, kind_row, item, original, linked)


def count_answer(judge, system_row, kind_row, item, original, linked):
    """The fold of one answer into the sums (``record``, and ``recompute``
    from the stored rows); ``system_row(id)`` and ``kind_row(kind)`` give
    the rows to move. Returns whether a bad-reference pair was completed."""
    da_quality.add_score(judge, item.score)
    if item.qc_kind is None:
        _count(judge, system_row, item)
        for bad in linked:
            _pair(judge, system_row, kind_row, bad, item)
        return bool(linked)
    if original is None:
        return False  # a bad reference served first: counted once its original is scored
    _pair(judge, system_row, kind_row, item, original)
    return item.qc_kind == da_quality.BAD_REFERENCE


def _count(judge, system_row, item):
    """A score that counts for research from now on (unless too fast)."""
    if item.too_fast:
        return
    judge.counted += 1
    judge.counted_sum += item.score
    judge.counted_squares += item.score * item.score
    n, total, squares = judge.counted, judge.counted_sum, judge.counted_squares
    if n > 1 and n * squares > total * total:  # a standard deviation (n - 1), as the analysis's
        judge.z_scale = 1 / da_quality.spread(n, total, squares, 1)
        judge.z_shift = total / n * judge.z_scale
    if item.qc_kind in (None, da_quality.REPEAT):  # a repeat scores its system again, as in the analysis
        row = system_row(item.left_system_id)
        row.scores += 1
        row.total += item.score


def _pair(judge, system_row, kind_row, item, original):
    """A quality-control item paired with its original now."""
    kind = kind_row(item.qc_kind)
    kind.items += 1
    kind.total += item.score
    kind.original_total += original.score
    _count(judge, system_row, item)
    if item.qc_kind != da_quality.BAD_REFERENCE:
        return
    da_quality.add_pair(judge, original.score, item.score)
    if not (item.too_fast or original.too_fast):
        difference = item.score - original.score
        judge.tested_pairs += 1
        judge.diff_sum += difference
        judge.diff_squares += difference * difference
        judge.status = da_quality.judge_status(judge.tested_pairs, judge.diff_sum, judge.diff_squares)


_ANSWERED = (select(Item.id, Item.position, Item.qc_kind, Item.score, Item.too_fast, Item.left_system_id,
                    Item.original_item_id)
             .where(Item.answered_at.is_not(None), Item.score.is_not(None)).order_by(Item.position))


def recompute(participation_id, campaign_id, rows):
    """The sums of a volunteer's answered ``rows`` (``_ANSWERED``'s columns,
    in position order), folded as their answers moved them: (``DaJudge``,
    [``DaJudgeSystem``], [``DaJudgeKind``]), not in any session."""
    judge = new_judge(participation_id, campaign_id)
    systems, kinds = {}, {}

    def system_row(system_id):
        return systems.setdefault(system_id, DaJudgeSystem(
            participation_id=participation_id, system_id=system_id, scores=0, total=0))

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
        count_answer(judge, system_row, kind_row, row, original, linked.get(row.id, []))
    return judge, list(systems.values()), list(kinds.values())


def recompute_from_database(participation):
    """``recompute`` on the volunteer's stored answers."""
    rows = db.session.execute(_ANSWERED.where(Item.participation_id == participation.id)).all()
    return recompute(participation.id, participation.campaign_id, rows)
