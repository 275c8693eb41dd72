"""A DA volunteer's running sums (issue 30): what each answer moves equals
what the stored rows say after any sequence of answers (bad references
served first or after, answers below the reading floor, a dismissal, a hold
cleared), and the judge test read from the sums is the analysis's."""
import random
from datetime import timedelta

from hypothesis import given, strategies as st
from sqlalchemy import case, select
from sqlalchemy.orm import aliased

from app.services import score_sums
from app.extensions import db
from app.models import DaJudge, DaJudgeKind, DaJudgeSystem, Item, Participation, utcnow
from app.services import evaluation, review
from app.services import score_quality
from app.protocols.da import dashboard as da_dashboard
from app.stats.da.loader import from_da_records
from app.stats.da.quality import judge_quality
from da_simulation import honest, join, make_da_campaign, optimiser


def answer(campaign, participation_id, score_of, count, rng):
    """``count`` answers, about a third below the reading floor."""
    for _ in range(count):
        step = evaluation.show(campaign, participation_id, utcnow(), rng)
        if step.item is None:
            return step.status
        seconds = 0.01 if rng.random() < 0.3 else 60
        step = evaluation.answer(campaign, participation_id, step.item.token, score_of(step.texts, step.item.qc_kind),
                                 step.item.served_at + timedelta(seconds=seconds), rng)
        if step.status == "dismissed":
            return step.status
    return "answering"


_original = aliased(Item)
# The live rules' pairs as they were read before the sums (in the order completed).
_BAD_PAIRS = (
    select(_original.score, Item.score)
    .join(_original, _original.id == Item.original_item_id)
    .where(Item.qc_kind == score_quality.BAD_REFERENCE, Item.answered_at.is_not(None),
           _original.answered_at.is_not(None))
    .order_by(case((Item.position > _original.position, Item.position), else_=_original.position))
)


def stored(participation_id):
    judge = db.session.get(DaJudge, participation_id)
    columns = [column.name for column in DaJudge.__table__.columns]
    systems = db.session.scalars(select(DaJudgeSystem).where(DaJudgeSystem.participation_id == participation_id))
    kinds = db.session.scalars(select(DaJudgeKind).where(DaJudgeKind.participation_id == participation_id))
    return ({name: getattr(judge, name) for name in columns},
            {row.system_id: (row.scores, row.total) for row in systems},
            {row.kind: (row.items, row.total, row.original_total) for row in kinds})


def recomputed(participation):
    judge, systems, kinds = score_sums.recompute_from_database(participation)
    columns = [column.name for column in DaJudge.__table__.columns]
    return ({name: getattr(judge, name) for name in columns},
            {row.system_id: (row.scores, row.total) for row in systems},
            {row.kind: (row.items, row.total, row.original_total) for row in kinds})


def test_the_running_sums_equal_the_recomputation_from_the_rows(app, tmp_path):
    campaign = make_da_campaign(str(tmp_path / "da"), sentences=40, fast_seconds_per_word=0.2, qc_min_pairs=4)
    rng = random.Random(5)
    people = {name: join(campaign, name) for name in ("ane", "bo", "cy", "opti")}
    answer(campaign, people["ane"], honest(rng), 30, rng)
    answer(campaign, people["bo"], honest(rng), 20, rng)
    assert answer(campaign, people["opti"], optimiser, 200, rng) == "dismissed"
    # An organiser holds bo, clears the hold; cy is dismissed by an organiser midway.
    bo = db.session.get(Participation, people["bo"])
    bo.held_at, bo.held_reason = utcnow(), "fast"
    review.clear_hold(bo)
    answer(campaign, people["cy"], honest(rng), 25, rng)
    review.dismiss(campaign, db.session.get(Participation, people["cy"]), "organiser", utcnow())
    db.session.commit()
    answer(campaign, people["bo"], honest(rng), 40, rng)
    answer(campaign, people["ane"], honest(rng), 60, rng)
    db.session.commit()

    reversed_pairs = fast = 0
    for pid in people.values():
        participation = db.session.get(Participation, pid)
        assert stored(pid) == recomputed(participation)
        # The live rules' sums are those of the pairs and scores as they were read before.
        pairs = [tuple(pair) for pair in db.session.execute(_BAD_PAIRS.where(Item.participation_id == pid))]
        scores = db.session.scalars(select(Item.score).where(Item.participation_id == pid, Item.score.is_not(None))
                                    .order_by(Item.position)).all()  # the first scores are the first answered
        judge = stored(pid)[0]
        assert {name: judge[name] for name in score_quality.LIVE_SUMS} == vars(score_quality.tally(pairs, scores))
        items = db.session.scalars(select(Item).where(Item.participation_id == pid)).all()
        positions = {item.id: item.position for item in items}
        reversed_pairs += sum(item.original_item_id is not None and positions[item.original_item_id] > item.position
                              for item in items)
        fast += sum(item.too_fast for item in items)
    assert reversed_pairs and fast  # both paths were taken
    # Dismissed and held volunteers' sums are kept, and left out when read.
    assert db.session.get(DaJudge, people["cy"]).counted > 0
    assert da_dashboard.judges(campaign)[0]["judges"] == 2


@given(st.lists(st.tuples(st.integers(0, 100), st.integers(0, 100)), max_size=14))
def test_the_judge_test_from_the_sums_is_the_analysis_s(pairs):
    records = [("j", "S", str(i), kind, score) for i, (original, bad) in enumerate(pairs)
               for kind, score in (("system", original), ("bad_reference", bad))] or [("j", "S", "1", "system", 50)]
    expected = judge_quality(from_da_records(records))[0]["status"]
    differences = [bad - original for original, bad in pairs]
    assert score_quality.judge_status(len(pairs), sum(differences), sum(d * d for d in differences)) == expected
