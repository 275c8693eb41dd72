"""Two server processes behind nginx, PostgreSQL and Redis: live updates
cross processes, each change is broadcast once, and 50 volunteers judging at
once through both processes store exactly what they were acknowledged."""
import random
import re
import threading
import time

from sqlalchemy import create_engine, text

from clients import Listener, Volunteer, confirm, correct_choice, register
from conftest import INTERVAL

JUDGMENT = re.compile(r'"POST /c/test/api/judgment ')


def count_of(payload, name):
    for row in payload["top"]:
        if row["n"] == name:
            return row["c"]
    return 0


def test_a_judgment_through_one_process_is_seen_live_through_the_other_once(cluster):
    a, b = cluster.urls
    judge_cookie, judge_csrf = register(cluster.url, "ane", "127.0.1.1")
    confirm(cluster.url, "ane", lambda: "".join(cluster.logs(10**6).values()), "127.0.1.1")  # ranked once confirmed
    watcher_cookie, _csrf = register(cluster.url, "bea", "127.0.2.1")
    time.sleep(3 * INTERVAL)  # let the registrations' broadcasts pass
    on_b = Listener(b, watcher_cookie).start()
    via_nginx = Listener(cluster.url, watcher_cookie).start()  # WebSocket upgrade through nginx
    try:
        assert on_b.rankings() and count_of(on_b.rankings()[-1][1], "ane") == 0
        judge = Volunteer(a, judge_cookie, judge_csrf)  # process A, directly
        judge.fetch()
        before = len(on_b.rankings())
        sent = time.monotonic()
        status, payload = judge.answer(correct_choice(judge.item, random.Random(1)))
        assert status == 200 and payload["status"] == "accepted"
        for listener in (on_b, via_nginx):
            at, ranking = listener.wait_for(lambda p: count_of(p, "ane") == 1, timeout=10)
            assert ranking is not None, f"no live ranking with ane's judgment: {listener.error}"
            assert at - sent < 10
        time.sleep(4 * INTERVAL)
        # Both processes tick; only one broadcasts the change.
        after = on_b.rankings()[before:]
        assert len(after) == 1, [p for _at, p in after]
        assert on_b.error is None and via_nginx.error is None
        judge.close()
    finally:
        on_b.close()
        via_nginx.close()


def test_requests_from_one_address_are_spread_over_both_processes(cluster):
    """deploy/nginx.conf: pages and judgments go to the least busy process
    (many volunteers behind one school's or carrier's address must not all
    land on one), while Socket.IO from that address stays on one process."""
    address = "127.0.3.1"
    cookie, csrf = register(cluster.url, "cai", address)
    confirm(cluster.url, "cai", lambda: "".join(cluster.logs(10**6).values()), address)  # ranked once confirmed
    listener = Listener(cluster.url, cookie).start()  # polling, then the WebSocket upgrade, through nginx
    volunteer = Volunteer(cluster.url, cookie, csrf, address)
    try:
        volunteer.fetch()
        before = [len(JUDGMENT.findall(text_)) for text_ in cluster.logs(10**6).values()]
        rng = random.Random(3)
        answered = 0
        while volunteer.item is not None and answered < 8:
            status, payload = volunteer.answer(correct_choice(volunteer.item, rng))
            assert status == 200 and payload["status"] in ("accepted", "finished"), payload
            answered += 1
        deadline = time.monotonic() + 10
        while True:  # a process writes its access log line after the response
            after = [len(JUDGMENT.findall(text_)) for text_ in cluster.logs(10**6).values()]
            served = [b - a for a, b in zip(before, after)]  # nobody else judges meanwhile
            if sum(served) >= answered or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert answered == 8 and sum(served) == answered and all(n > 0 for n in served), (answered, served)
        at, ranking = listener.wait_for(lambda p: count_of(p, "cai") == answered, timeout=10)
        assert ranking is not None and listener.error is None, listener.error
    finally:
        volunteer.close()
        listener.close()


def test_fifty_volunteers_through_both_processes_store_exactly_what_was_acknowledged(cluster):
    count, per_volunteer = 50, 15
    volunteers = []
    for number in range(count):
        address = f"127.0.{10 + number}.1"  # their own addresses, as real volunteers have
        cookie, csrf = register(cluster.url, f"v{number:02d}", address)
        volunteers.append((f"v{number:02d}", Volunteer(cluster.url, cookie, csrf, address)))
    listener = Listener(cluster.url, cookie).start()
    acknowledged, errors, statuses = {}, [], {}
    start = threading.Barrier(count)

    def work(name, volunteer, seed):
        rng = random.Random(seed)
        done = 0
        try:
            answered = volunteer.fetch()["answered"]
            start.wait(timeout=60)
            while volunteer.item is not None and done < per_volunteer:
                status, payload = volunteer.answer(correct_choice(volunteer.item, rng))
                if status != 200:
                    errors.append(f"{name}: HTTP {status}")
                    answered = volunteer.fetch()["answered"]
                    continue
                statuses[payload["status"]] = statuses.get(payload["status"], 0) + 1
                # Acknowledged: the response counts this answer (the last
                # one may come with "finished": recorded, nothing left).
                if payload["answered"] == answered + 1:
                    done += 1
                elif payload["answered"] != answered:
                    errors.append(f"{name}: count went from {answered} to {payload['answered']}")
                answered = payload["answered"]
                if payload["status"] != "accepted":
                    break
        except Exception as exc:  # noqa: BLE001 (reported below)
            errors.append(f"{name}: {exc!r}")
        finally:
            acknowledged[name] = done
            volunteer.close()

    threads = [
        threading.Thread(target=work, args=(name, volunteer, n)) for n, (name, volunteer) in enumerate(volunteers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []
    assert statuses.get("dismissed", 0) == 0, statuses

    # Both processes served judgments (nginx spread the volunteers).
    served = [len(JUDGMENT.findall(text_)) for text_ in cluster.logs(10**6).values()]
    assert len(served) == 2 and all(n > 0 for n in served), served

    engine = create_engine(cluster.database_url)
    try:
        with engine.connect() as db:
            stored = dict(db.execute(text(
                "SELECT u.username, p.items_answered FROM participations p JOIN users u ON u.id = p.user_id"
            )).all())
            answered = db.scalar(text("SELECT count(*) FROM items WHERE answered_at IS NOT NULL"))
            mine = {name: stored[name] for name in acknowledged}
            assert mine == acknowledged
            # The first test's two volunteers judged one item between them.
            assert answered == sum(acknowledged.values()) + sum(
                stored[name] for name in stored if name not in acknowledged
            )
            assert db.scalar(text(
                "SELECT count(*) FROM items i JOIN participations p ON p.id = i.participation_id "
                "WHERE i.answered_at IS NOT NULL AND i.position > p.items_answered"
            )) == 0
            # No sentence served twice to one volunteer, no position twice.
            assert db.execute(text(
                "SELECT participation_id, sentence_id FROM items WHERE sentence_id IS NOT NULL "
                "GROUP BY participation_id, sentence_id HAVING count(*) > 1"
            )).all() == []
            assert db.execute(text(
                "SELECT participation_id, position FROM items GROUP BY participation_id, position "
                "HAVING count(*) > 1"
            )).all() == []
            # Every counter agrees with the items; nothing over target (no
            # reservation expired: the timeout is 600 s).
            slots = db.execute(text(
                "SELECT s.id, s.target, s.collected, s.pending, "
                " (SELECT count(*) FROM items i WHERE i.slot_id = s.id AND i.answered_at IS NOT NULL "
                "   AND i.discarded_at IS NULL), "
                " (SELECT count(*) FROM items i WHERE i.slot_id = s.id AND i.holding) "
                "FROM slots s"
            )).all()
            for slot_id, target, collected, pending, judged, holding in slots:
                assert collected == judged, slot_id
                assert pending == judged + holding, slot_id
                assert pending <= target, slot_id
            sentences = db.execute(text(
                "SELECT se.id, se.collected, se.pending, se.capacity, se.is_open, "
                " (SELECT coalesce(sum(collected), 0) FROM slots WHERE sentence_id = se.id), "
                " (SELECT coalesce(sum(pending), 0) FROM slots WHERE sentence_id = se.id) "
                "FROM sentences se"
            )).all()
            for sentence_id, collected, pending, capacity, is_open, slot_collected, slot_pending in sentences:
                assert (collected, pending) == (slot_collected, slot_pending), sentence_id
                assert is_open == (pending < capacity), sentence_id
            campaign = db.execute(text(
                "SELECT collected_judgments, over_collected, target_judgments FROM campaigns"
            )).one()
            valid = db.scalar(text(
                "SELECT count(*) FROM items WHERE slot_id IS NOT NULL AND answered_at IS NOT NULL "
                "AND discarded_at IS NULL"
            ))
            assert campaign.collected_judgments == valid and campaign.over_collected == 0
            # The campaign is small for 50 volunteers: it filled up.
            assert statuses.get("finished", 0) > 0 and valid + sum(
                holding for *_rest, holding in slots
            ) == campaign.target_judgments
            # One ticket per 10 items answered, numbers unique.
            tickets = dict(db.execute(text(
                "SELECT u.username, count(t.id) FROM participations p JOIN users u ON u.id = p.user_id "
                "LEFT JOIN tickets t ON t.participation_id = p.id GROUP BY u.username"
            )).all())
            assert all(tickets[name] == acknowledged[name] // 10 for name in acknowledged)
            numbers = db.execute(text("SELECT number FROM tickets")).scalars().all()
            assert len(numbers) == len(set(numbers))
    finally:
        engine.dispose()
    # The live ranking converges on what is stored.
    _at, ranking = listener.wait_for(lambda p: p["collected"] == valid, timeout=10)
    listener.close()
    assert ranking is not None, listener.rankings()[-1:]

