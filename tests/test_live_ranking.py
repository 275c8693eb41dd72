"""The live ranking's incremental pass (issue 30): after a change, only the
connected volunteers whose place it can move are read again, and a
personal message goes exactly to those whose rank, neighbours or own data
changed, the same as the whole ranking (``leaderboard.build``) would say."""
import random
from datetime import datetime, timedelta

import pytest
from sqlalchemy import select

from app import realtime
from app.extensions import db, socketio
from app.models import Campaign, Participation, User
from app.services import accounts, leaderboard

START = datetime(2026, 1, 1)


def _volunteers(counts):
    campaign = db.session.scalar(select(Campaign))
    people = []
    for n, count in enumerate(counts):
        user = accounts.create_user(f"p{n}@example.org", f"p{n}", "password-123")
        user.email_confirmed_at = START
        p = accounts.join_campaign(user, campaign, "B1-B2", "C1-C2")
        p.items_answered = p.items_counted = count
        p.reached_count_at = START + timedelta(minutes=n) if count else None
        people.append(p)
    db.session.commit()
    return campaign.id, [p.id for p in people]


@pytest.fixture
def sent(monkeypatch):
    """The personal messages emitted: [(participation room, payload)]."""
    messages = []
    original = socketio.emit

    def recording(event, payload=None, to=None, **kwargs):
        if event == "me":
            messages.append((to, payload))
        return original(event, payload, to=to, **kwargs)

    monkeypatch.setattr(socketio, "emit", recording)
    return messages


def _connect(campaign_id, pids):
    for pid in pids:
        user_id = db.session.get(Participation, pid).user_id
        realtime.joined(campaign_id, pid, user_id, f"sid-{pid}")


def _expected(campaign_id, pids):
    """What the whole ranking says each volunteer's rank and neighbours are."""
    ranking = leaderboard.build(campaign_id)
    return {pid: (ranking.rank_of(pid), ranking.around(pid)) for pid in pids}


def _room(pid):
    return realtime.user_room(db.session.get(Participation, pid).user_id)


def test_a_judgment_reaches_only_the_volunteers_it_moves(app, make_campaign, sent, monkeypatch):
    make_campaign()
    campaign_id, pids = _volunteers([40 - 2 * n for n in range(15)])  # 40, 38, ..., 12
    _connect(campaign_id, pids)
    realtime.flush()  # the first pass reads the whole ranking
    before = _expected(campaign_id, pids)
    sent.clear()
    built = []
    monkeypatch.setattr(leaderboard, "build", lambda cid: built.append(cid))
    # p10 (count 20) passes p9 (22) and p8 (24): 20 -> 25.
    mover = db.session.get(Participation, pids[10])
    mover.items_counted, mover.reached_count_at = 25, START + timedelta(days=1)
    db.session.commit()
    realtime.touch(campaign_id, pids[10])
    realtime.flush()
    monkeypatch.undo()
    after = _expected(campaign_id, pids)
    changed = {_room(pid) for pid in pids if before[pid] != after[pid]}
    assert {room for room, _payload in sent} == changed
    assert changed == {_room(pids[n]) for n in range(6, 13)}  # two places around 24..20, and those it passed
    assert built == []  # the incremental pass never reads the whole ranking
    for room, payload in sent:
        pid = next(p for p in pids if _room(p) == room)
        assert (payload["rank"], payload["around"]) == after[pid]


def test_a_change_nobody_sees_sends_nothing(app, make_campaign, sent):
    make_campaign()
    campaign_id, pids = _volunteers([30, 20, 10, 5, 0])
    _connect(campaign_id, pids[:4])
    realtime.flush()
    sent.clear()
    realtime.touch(campaign_id, pids[4])  # a volunteer with nothing counted: their answer did not count
    realtime.flush()
    assert sent == []


def test_every_step_of_a_random_sequence_matches_the_whole_ranking(app, make_campaign, sent):
    """Judgments, holds, releases, dismissals, confirmations and hidden names
    in a random order: after each tick every connected volunteer holds what
    the whole ranking says, and only those whose payload changed were sent one."""
    make_campaign()
    rng = random.Random(30)
    counts = [rng.choice([0, 1, 1, 2, 3, 5, 8]) for _ in range(40)]
    campaign_id, pids = _volunteers(counts)
    connected = rng.sample(pids, 30)
    _connect(campaign_id, connected)
    realtime.flush()
    clock = START + timedelta(days=1)
    for step in range(120):
        last = {pid: realtime._last_personal.get((campaign_id, pid)) for pid in connected}
        sent.clear()
        for _ in range(rng.choice([1, 1, 2, 3])):
            p = db.session.get(Participation, rng.choice(pids))
            kind = rng.choices(["judge", "hold", "release", "dismiss", "confirm", "hide"], [30, 3, 3, 1, 2, 2])[0]
            clock += timedelta(seconds=1)
            if kind == "judge" and p.dismissed_at is None:
                p.items_answered += 1
                p.items_counted += rng.choice([0, 1, 1, 1])
                p.reached_count_at = clock
            elif kind == "hold":
                p.held_at = clock
            elif kind == "release":
                p.held_at = None
            elif kind == "dismiss":
                p.dismissed_at = clock
            elif kind == "confirm":
                user = db.session.get(User, p.user_id)
                user.email_confirmed_at = None if user.email_confirmed_at else clock
            else:
                user = db.session.get(User, p.user_id)
                user.hide_from_ranking = not user.hide_from_ranking
            db.session.commit()
            realtime.touch(campaign_id, p.id if kind in ("judge", "hold", "release", "dismiss") else None)
        realtime.flush()
        expected = _expected(campaign_id, connected)
        for pid in connected:
            payload = realtime._last_personal[(campaign_id, pid)]
            dismissed = db.session.get(Participation, pid).dismissed_at is not None
            assert (payload["rank"], payload["around"]) == (expected[pid] if not dismissed else (None, [])), (step, pid)
        changed = {_room(pid) for pid in connected if realtime._last_personal[(campaign_id, pid)] != last[pid]}
        assert sorted(room for room, _payload in sent) == sorted(changed), step
