"""The dashboard's totals, kept so that its first load reads a few rows per
campaign, never every judgment, sentence or slot (issue 30): per system pair
(``PairTotal``), per completeness bin of sentences (``SentenceBin``) and per
minute of answers (``AnswerMinute``).

Targets and identical slots are written at import. Collected judgments move
with the commit that moves the slots' counters: the counters' before-commit
hook calls ``write`` after the sentences' and slots' statements and after the
campaign's row (which a ticket kept for the commit may lock first); it
reads the moved slots back and changes the pair and bin rows in sorted
order, so that two transactions lock them in the same order on PostgreSQL.
"""
from datetime import datetime, timedelta

from sqlalchemy import Integer, bindparam, delete, event, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from ..extensions import db
from ..models import AnswerMinute, Item, PairTotal, Sentence, SentenceBin, Slot

EPOCH = datetime(2000, 1, 1)  # naive UTC, as every stored time
NOTHING_TO_JUDGE, COMPLETE = -1, 10
BINS = range(NOTHING_TO_JUDGE, COMPLETE + 1)
_MOVES = "bozka_total_moves"
_VOTES = "bozka_total_votes"
_MINUTES = "bozka_answer_minutes"
_CHUNK = 500  # slot ids per read: well under SQLite's bound parameters


def bin_of(collected, capacity):
    """A sentence's completeness bin: 0-9 for 0-9%, 10-19%, ...; COMPLETE
    once collected reaches capacity; NOTHING_TO_JUDGE without capacity."""
    if capacity == 0:
        return NOTHING_TO_JUDGE
    return COMPLETE if collected >= capacity else collected * 10 // capacity


def minute_of(moment):
    """Minutes since 2000-01-01 UTC: whole numbers, so the database can group them into bars."""
    return int((moment - EPOCH).total_seconds() // 60)


def moved(slot_id, collected_delta, preferred=None):
    """A slot's collected judgments moved in this transaction
    (``counters.change_holds``), with the votes for ``preferred`` (a pairwise
    answer's system): when the sentence's winner for the pair changes, the
    pair's wins move with the commit."""
    moves = db.session.info.setdefault(_MOVES, {})
    moves[slot_id] = moves.get(slot_id, 0) + collected_delta
    if preferred is not None:
        votes = db.session.info.setdefault(_VOTES, {})
        votes[(slot_id, preferred)] = votes.get((slot_id, preferred), 0) + collected_delta


def answered(campaign_id, moment):
    """One more answer in the campaign's minute of ``moment``, with the commit."""
    minutes = db.session.info.setdefault(_MINUTES, {})
    key = (campaign_id, minute_of(moment))
    minutes[key] = minutes.get(key, 0) + 1


_MOVED = (
    select(Slot.id, Slot.system_a_id, Slot.system_b_id, Slot.collected, Slot.target, Slot.votes_a, Slot.votes_b,
           Sentence.id, Sentence.campaign_id, Sentence.collected, Sentence.capacity)
    .join(Sentence, Sentence.id == Slot.sentence_id)
    .where(Slot.id.in_(bindparam("slot_ids", expanding=True)))
)
_MOVE_PAIR = (
    update(PairTotal.__table__)
    .where(PairTotal.campaign_id == bindparam("c"), PairTotal.system_a_id == bindparam("a"),
           PairTotal.system_b_id.is_not_distinct_from(bindparam("b", type_=Integer)))
    .values(collected=PairTotal.collected + bindparam("d_collected", type_=Integer),
            over_collected=PairTotal.over_collected + bindparam("d_over", type_=Integer),
            wins_a=PairTotal.wins_a + bindparam("d_wins_a", type_=Integer),
            wins_b=PairTotal.wins_b + bindparam("d_wins_b", type_=Integer))
)


def winner(votes_a, votes_b):
    """The sentence's winner for a pair: 1 (system a), -1 (system b) or 0 (no answer, or as many each)."""
    return (votes_a > votes_b) - (votes_b > votes_a)


_MOVE_BIN = (
    update(SentenceBin.__table__)
    .where(SentenceBin.campaign_id == bindparam("c"), SentenceBin.bin == bindparam("b"))
    .values(sentences=SentenceBin.sentences + bindparam("n", type_=Integer))
)


def _count_minute(dialect):
    statement = dialect.insert(AnswerMinute.__table__).values(
        campaign_id=bindparam("c"), minute=bindparam("m"), answers=bindparam("n"))
    return statement.on_conflict_do_update(
        index_elements=["campaign_id", "minute"], set_={"answers": AnswerMinute.answers + statement.excluded.answers})


_COUNT_MINUTE = {"sqlite": _count_minute(sqlite), "postgresql": _count_minute(postgresql)}


def _over(collected, target):
    return max(collected - target, 0)


def write(session):
    """Move the pair, bin and minute rows for the session's moves: from the
    slots' and sentences' counters as they now are (already moved)."""
    moves = {slot: delta for slot, delta in (session.info.pop(_MOVES, None) or {}).items() if delta}
    votes = {}
    for (slot, system), delta in (session.info.pop(_VOTES, None) or {}).items():
        votes.setdefault(slot, []).append((system, delta))
    minutes = session.info.pop(_MINUTES, None) or {}
    if not (moves or minutes):
        return
    connection = session.connection()
    pairs, bins, sentences = {}, {}, {}
    ids = sorted(moves)
    for start in range(0, len(ids), _CHUNK):
        for (slot, a, b, collected, target, votes_a, votes_b, sentence, campaign, sentence_collected,
             capacity) in connection.execute(_MOVED, {"slot_ids": ids[start:start + _CHUNK]}):
            delta = moves[slot]
            won = _wins_moved(a, votes_a, votes_b, votes.get(slot, ()))
            before = pairs.get((campaign, a, b), (0, 0, 0, 0))
            pairs[(campaign, a, b)] = (before[0] + delta,
                                       before[1] + _over(collected, target) - _over(collected - delta, target),
                                       before[2] + won[0], before[3] + won[1])
            entry = sentences.setdefault(sentence, [campaign, sentence_collected, capacity, 0])
            entry[3] += delta
    for campaign, collected, capacity, delta in sentences.values():
        old, new = bin_of(collected - delta, capacity), bin_of(collected, capacity)
        if old != new:
            bins[(campaign, old)] = bins.get((campaign, old), 0) - 1
            bins[(campaign, new)] = bins.get((campaign, new), 0) + 1
    pair_rows = [{"c": c, "a": a, "b": b, "d_collected": n, "d_over": over, "d_wins_a": wa, "d_wins_b": wb}
                 for (c, a, b), (n, over, wa, wb) in sorted(pairs.items(),
                                                           key=lambda p: (p[0][0], p[0][1], p[0][2] or 0))
                 if (n, over, wa, wb) != (0, 0, 0, 0)]
    bin_rows = [{"c": c, "b": b, "n": n} for (c, b), n in sorted(bins.items()) if n]
    minute_rows = [{"c": c, "m": m, "n": n} for (c, m), n in sorted(minutes.items())]
    if pair_rows:
        connection.execute(_MOVE_PAIR, pair_rows)
    if bin_rows:
        connection.execute(_MOVE_BIN, bin_rows)
    if minute_rows:
        connection.execute(_COUNT_MINUTE[connection.dialect.name], minute_rows)


def _wins_moved(system_a, votes_a, votes_b, moved):
    """The change of a pair's wins (system a's, system b's) from a slot whose
    votes are now ``votes_a``, ``votes_b`` after ``moved`` ((system, delta) pairs)."""
    d_a = sum(delta for system, delta in moved if system == system_a)
    d_b = sum(delta for system, delta in moved if system != system_a)
    if not (d_a or d_b):
        return 0, 0
    old, new = winner(votes_a - d_a, votes_b - d_b), winner(votes_a, votes_b)
    return (new == 1) - (old == 1), (new == -1) - (old == -1)


@event.listens_for(Session, "after_soft_rollback")
def _forget_moves(session, _previous_transaction):
    session.info.pop(_MOVES, None)
    session.info.pop(_VOTES, None)
    session.info.pop(_MINUTES, None)


def _add(model, key, values):
    """Add ``values`` to the row of ``key``, or write it."""
    where = [getattr(model, k) == v if v is not None else getattr(model, k).is_(None) for k, v in key.items()]
    done = db.session.execute(
        update(model.__table__).where(*where).values({k: getattr(model, k) + v for k, v in values.items()})
    ).rowcount
    if not done:
        db.session.execute(insert(model.__table__).values(key | values))


def add_imported(campaign_id, slots, capacities):
    """The totals of newly imported slots (with ``system_a_id``,
    ``system_b_id``, ``target``, ``identical``) and sentences (their
    capacities, nothing collected yet). Every bin gets its row."""
    pairs = {}
    for slot in slots:
        target, identical = pairs.get((slot.system_a_id, slot.system_b_id), (0, 0))
        pairs[(slot.system_a_id, slot.system_b_id)] = (target + slot.target, identical + bool(slot.identical))
    for (a, b), (target, identical) in sorted(pairs.items(), key=lambda p: (p[0][0], p[0][1] or 0)):
        _add(PairTotal, {"campaign_id": campaign_id, "system_a_id": a, "system_b_id": b},
             {"target": target, "identical": identical})
    added = {}
    for capacity in capacities:
        added[bin_of(0, capacity)] = added.get(bin_of(0, capacity), 0) + 1
    for number in BINS:
        _add(SentenceBin, {"campaign_id": campaign_id, "bin": number}, {"sentences": added.get(number, 0)})


def remove(campaign_id):
    """Delete a campaign's totals (before its systems and row)."""
    for model in (PairTotal, SentenceBin, AnswerMinute):
        db.session.execute(delete(model).where(model.campaign_id == campaign_id))


def recount(campaign_id):
    """Write a campaign's totals afresh from its rows (a repair, and for
    benchmarks that build states by inserting rows): reads every slot,
    sentence and answer of the campaign."""
    remove(campaign_id)
    slots = db.session.execute(
        select(Slot.system_a_id, Slot.system_b_id, Slot.target, Slot.identical, Slot.collected,
               Slot.votes_a, Slot.votes_b)
        .join(Sentence, Sentence.id == Slot.sentence_id).where(Sentence.campaign_id == campaign_id)).all()
    pairs = {}
    for a, b, target, identical, collected, votes_a, votes_b in slots:
        row = pairs.setdefault((a, b), {"target": 0, "identical": 0, "collected": 0, "over_collected": 0,
                                        "wins_a": 0, "wins_b": 0})
        row["target"] += target
        row["identical"] += bool(identical)
        row["collected"] += collected
        row["over_collected"] += _over(collected, target)
        row["wins_a"] += winner(votes_a, votes_b) == 1
        row["wins_b"] += winner(votes_a, votes_b) == -1
    bins = dict.fromkeys(BINS, 0)
    for collected, capacity in db.session.execute(
            select(Sentence.collected, Sentence.capacity).where(Sentence.campaign_id == campaign_id)):
        bins[bin_of(collected, capacity)] += 1
    minutes = {}
    for (moment,) in db.session.execute(
            select(Item.answered_at).where(Item.campaign_id == campaign_id, Item.answered_at.is_not(None))):
        minutes[minute_of(moment)] = minutes.get(minute_of(moment), 0) + 1
    rows = [(PairTotal, [{"campaign_id": campaign_id, "system_a_id": a, "system_b_id": b} | row
                         for (a, b), row in pairs.items()]),
            (SentenceBin, [{"campaign_id": campaign_id, "bin": k, "sentences": n} for k, n in bins.items()]),
            (AnswerMinute, [{"campaign_id": campaign_id, "minute": m, "answers": n} for m, n in minutes.items()])]
    for model, values in rows:
        if values:
            db.session.execute(insert(model.__table__), values)


def pair_rows(campaign_id):
    """(system a, system b, collected, target, over-collected, identical) per pair."""
    return db.session.execute(
        select(PairTotal.system_a_id, PairTotal.system_b_id, PairTotal.collected, PairTotal.target,
               PairTotal.over_collected, PairTotal.identical).where(PairTotal.campaign_id == campaign_id)).all()


def system_completion(campaign_id):
    """{system a: (collected, target)}: DA's per system."""
    return {system: (int(collected), int(target)) for system, collected, target in db.session.execute(
        select(PairTotal.system_a_id, func.sum(PairTotal.collected), func.sum(PairTotal.target))
        .where(PairTotal.campaign_id == campaign_id).group_by(PairTotal.system_a_id))}


def bin_counts(campaign_id):
    """{bin: sentences}."""
    return dict(db.session.execute(
        select(SentenceBin.bin, SentenceBin.sentences).where(SentenceBin.campaign_id == campaign_id)).all())


def minute_span(campaign_id):
    """(first, last) minute with an answer, as datetimes, or (None, None):
    two look-ups in the key's index."""
    where = AnswerMinute.campaign_id == campaign_id
    first, last = db.session.execute(select(
        select(func.min(AnswerMinute.minute)).where(where).scalar_subquery(),
        select(func.max(AnswerMinute.minute)).where(where).scalar_subquery())).one()
    if first is None:
        return None, None
    return EPOCH + timedelta(minutes=first), EPOCH + timedelta(minutes=last)


def answers_per_bar(campaign_id, start, width):
    """{bar: answers}: the answers of each ``width`` minutes from ``start``,
    summed by the database (one row per bar)."""
    bar = (AnswerMinute.minute - minute_of(start)) // width
    return dict(db.session.execute(
        select(bar, func.sum(AnswerMinute.answers)).where(AnswerMinute.campaign_id == campaign_id).group_by(bar)).all())
