"""The live game over Socket.IO: ranking, progress, personal data."""
import re
import time
from datetime import datetime, timedelta

from sqlalchemy import func, select

from app import realtime
from app.extensions import db, socketio
from app.models import Control, Participation, User
from app.services import leaderboard
from helpers import confirm, csrf_token, register


def _login_client(app, make=True, n=1):
    client = app.test_client()
    register(client, username=f"vol{n}", email=f"vol{n}@example.org")
    confirm(f"vol{n}")  # only confirmed volunteers are ranked
    return client


def _socket(app, client, slug="test"):
    sio = socketio.test_client(app, flask_test_client=client)
    assert sio.is_connected()
    assert sio.emit("join", {"campaign": slug}, callback=True) == {"ok": True}
    return sio


def _events(sio, name):
    """The payloads of one event among everything received so far (kept)."""
    sio.log = getattr(sio, "log", []) + sio.get_received()
    return [e["args"][0] for e in sio.log if e["name"] == name]


def judge_items(client, n=1, slug="test"):
    """Judge n items through the JSON endpoint, passing every control."""
    csrf = csrf_token(client, f"/c/{slug}/welcome")
    item = client.get(f"/c/{slug}/api/item").get_json()["item"]
    better = set(db.session.scalars(select(Control.better)))
    data = None
    for _ in range(n):
        choice = "right" if item["right"] in better else "left"
        data = client.post(f"/c/{slug}/api/judgment", json={"token": item["token"], "choice": choice},
                           headers={"X-CSRFToken": csrf}).get_json()
        item = data["item"]
    return data


def test_the_volunteers_figure_follows_joins_and_dismissals(app, make_campaign):
    """The public count is kept on the campaign's row (issue 30): each join
    adds one, a dismissal takes one away, and it equals a count of the rows."""
    from app.models import Campaign
    from app.models import utcnow
    from app.services import review

    campaign = make_campaign()
    clients = [_login_client(app, n=n) for n in (1, 2, 3)]
    assert leaderboard.build_top(campaign.id).volunteers == 3
    judge_items(clients[0], 1)
    review.dismiss(campaign, db.session.scalar(select(Participation).limit(1)), "spam", utcnow())
    db.session.commit()
    counted = db.session.scalar(select(func.count()).select_from(Participation).where(
        Participation.dismissed_at.is_(None)))
    assert counted == 2 == db.session.scalar(select(Campaign.volunteers)) == leaderboard.build_top(campaign.id).volunteers


def test_unauthenticated_connections_are_refused(app, make_campaign):
    make_campaign()
    sio = socketio.test_client(app, flask_test_client=app.test_client())
    assert not sio.is_connected()


def test_join_only_own_campaign_and_valid_payloads(app, make_campaign):
    make_campaign()
    client = _login_client(app)
    sio = socketio.test_client(app, flask_test_client=client)
    assert sio.emit("join", {"campaign": "other"}, callback=True)["ok"] is False
    assert sio.emit("join", "test", callback=True)["ok"] is False
    assert sio.emit("join", {"campaign": "x" * 500}, callback=True)["ok"] is False
    assert sio.emit("join", {"campaign": "test"}, callback=True)["ok"] is True
    # Joining sends the current state at once (catch-up after a reconnect).
    assert _events(sio, "ranking") and _events(sio, "me")


def test_update_arrives_after_another_volunteers_judgment(app, make_campaign):
    make_campaign(sentences=20)
    alice, bob = _login_client(app, n=1), _login_client(app, n=2)
    bob_socket = _socket(app, bob)
    bob_socket.log = []
    bob_socket.get_received()
    judge_items(alice, 3)
    assert realtime.flush() == 1
    ranking = _events(bob_socket, "ranking")[-1]
    assert ranking["top"][0] == {"r": 1, "n": "vol1", "c": 3}
    assert ranking["collected"] == 1  # items 1 and 2 were controls
    assert ranking["volunteers"] == 2 and ranking["last"] == {"n": "vol2"}
    # Bob has not judged: no personal update for him (nothing changed for him).
    assert _events(bob_socket, "me") == []


def test_personal_data_goes_only_to_the_volunteers_own_room(app, make_campaign):
    make_campaign(sentences=30)
    alice, bob = _login_client(app, n=1), _login_client(app, n=2)
    alice_socket, bob_socket = _socket(app, alice), _socket(app, bob)
    alice_socket.get_received(), bob_socket.get_received()
    judge_items(alice, 10)
    realtime.flush()
    mine = _events(alice_socket, "me")[-1]
    assert mine["rank"] == 1 and mine["count"] == 10 and mine["tickets"] == [1]
    assert all(me.get("count") != 10 for me in _events(bob_socket, "me"))


def test_personal_updates_read_every_volunteers_data_in_two_queries(app, make_campaign, monkeypatch):
    from sqlalchemy import event

    make_campaign(sentences=60)
    clients = [_login_client(app, n=n) for n in range(1, 6)]
    sockets = [_socket(app, client) for client in clients]
    for n, client in enumerate(clients):
        judge_items(client, [10, 3, 12, 1, 20][n])
    for sio in sockets:
        sio.get_received()
    campaign_id = db.session.scalar(select(Participation.campaign_id))
    ranking = leaderboard.build(campaign_id)  # the full pass's
    statements = []
    engine = db.engine
    count = lambda *args: statements.append(args[2])  # noqa: E731
    event.listen(engine, "before_cursor_execute", count)
    try:
        realtime.personal_updates(campaign_id, ranking)
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert len(statements) == 2  # the counts, the tickets: not two per volunteer
    for sio, answered, tickets in zip(sockets, [10, 3, 12, 1, 20], [[1], [], [2], [], [3, 4]]):
        mine = _events(sio, "me")[-1]
        assert (mine["count"], mine["tickets"]) == (answered, tickets)
        assert mine["rank"] == ranking.rank_of(mine_id(ranking, answered))
    # Many volunteers: a bounded number of parameters per query, same payloads.
    ids = sorted(db.session.scalars(select(Participation.id)))
    whole = realtime._personal_payloads(ranking, ids)
    monkeypatch.setattr(realtime, "IN_CHUNK", 2)
    assert realtime._personal_payloads(ranking, ids) == whole


def mine_id(ranking, answered):
    """The participation id ranked with this count (counts are distinct here)."""
    return next(entry.participation_id for entry in ranking.entries if entry.count == answered)


def _ranked(app, counts, hidden=()):
    """Participants with the given counts; earlier index reached its count earlier."""
    from app.services import accounts
    from app.models import Campaign

    campaign = db.session.scalar(select(Campaign))
    start = datetime(2026, 1, 1)
    people = []
    for n, count in enumerate(counts):
        user = accounts.create_user(f"p{n}@example.org", f"p{n}", "password-123", hide_from_ranking=n in hidden)
        user.email_confirmed_at = start  # only confirmed volunteers are ranked
        p = accounts.join_campaign(user, campaign, "B1-B2", "C1-C2")
        p.items_answered = p.items_counted = count
        p.reached_count_at = start + timedelta(minutes=n)
        people.append(p)
    db.session.commit()
    return campaign, people


def test_ordering_and_tie_break_earlier_ranks_higher(app, make_campaign):
    make_campaign()
    campaign, people = _ranked(app, [5, 9, 5, 0, 12, 9])
    people[5].reached_count_at = datetime(2025, 12, 31)  # reached 9 before p1
    db.session.commit()
    ranking = leaderboard.build(campaign.id)
    assert [(row["n"], row["c"]) for row in ranking.top()] == [
        ("p4", 12), ("p5", 9), ("p1", 9), ("p0", 5), ("p2", 5)
    ]
    assert ranking.rank_of(people[3].id) is None  # no judgment yet: not ranked


def test_own_position_with_two_above_and_two_below(app, make_campaign):
    make_campaign()
    campaign, people = _ranked(app, [30 - n for n in range(25)], hidden=(6,))
    ranking = leaderboard.build(campaign.id)
    me = people[7]
    around = ranking.around(me.id)
    assert [row["r"] for row in around] == [6, 7, 8, 9, 10]
    assert [row.get("me", False) for row in around] == [False, False, True, False, False]
    assert around[1]["n"] is None  # p6 hides their name
    assert len(ranking.top()) == 20
    # The hidden volunteer sees their own name in their own row.
    assert [r for r in ranking.around(people[6].id) if r.get("me")][0]["n"] == "p6"
    assert ranking.around(people[0].id)[0]["r"] == 1 and len(ranking.around(people[0].id)) == 3


def test_dismissal_removes_a_volunteer_at_once(app, make_campaign):
    make_campaign(sentences=20)
    alice, bob = _login_client(app, n=1), _login_client(app, n=2)
    bob_socket = _socket(app, bob)
    judge_items(alice, 3)
    realtime.flush()
    assert _events(bob_socket, "ranking")[-1]["top"][0]["n"] == "vol1"
    # Alice fails every control from now on: dismissed at item 10.
    csrf = csrf_token(alice, "/c/test/welcome")
    item = alice.get("/c/test/api/item").get_json()["item"]
    better = set(db.session.scalars(select(Control.better)))
    status = None
    while item:
        wrong = "left" if item["right"] in better else ("right" if item["left"] in better else "left")
        data = alice.post("/c/test/api/judgment", json={"token": item["token"], "choice": wrong},
                          headers={"X-CSRFToken": csrf}).get_json()
        item, status = data["item"], data["status"]
    assert status == "dismissed"
    realtime.flush()
    ranking = _events(bob_socket, "ranking")[-1]
    assert ranking["top"] == [] and ranking["volunteers"] == 1 and ranking["collected"] == 0


def test_a_hold_removes_a_volunteer_at_once(app, make_campaign):
    # Always the first translation: the side sign holds after 5 tests (a loose alpha for a short test).
    make_campaign(sentences=20, hold_min_tests=5, hold_alpha=0.1)
    alice, bob = _login_client(app, n=1), _login_client(app, n=2)
    alice_socket, bob_socket = _socket(app, alice), _socket(app, bob)
    judge_items(alice, 3)
    realtime.flush()
    assert _events(bob_socket, "ranking")[-1]["top"][0]["n"] == "vol1"
    data = judge_items(alice, 7)  # judge_items answers "left" on every test item
    assert data["held"] and data["status"] == "accepted"
    realtime.flush()
    ranking = _events(bob_socket, "ranking")[-1]
    assert ranking["top"] == [] and ranking["last"]["n"] == "vol2"  # Bob, who joined later, but not ranked
    assert _events(alice_socket, "me")[-1]["held"] is True and _events(alice_socket, "me")[-1]["rank"] is None


def test_burst_of_100_judgments_yields_a_bounded_number_of_broadcasts(app, make_campaign):
    make_campaign(sentences=150, systems=("A", "B"), controls=40)
    app.config.update(BOZKA_REALTIME_TICKER=True, BOZKA_BROADCAST_INTERVAL=0.25)
    judges = [_login_client(app, n=n) for n in range(1, 5)]
    watcher = _login_client(app, n=9)
    watcher_socket = _socket(app, watcher)
    watcher_socket.get_received()
    realtime.stats.update(ranking_broadcasts=0)
    started = time.monotonic()
    for client in judges:
        judge_items(client, 25)
    elapsed = time.monotonic() - started
    time.sleep(0.6)  # let the last tick go out
    broadcasts = realtime.stats["ranking_broadcasts"]
    received = _events(watcher_socket, "ranking")
    assert 1 <= broadcasts <= elapsed / 0.25 + 3, (broadcasts, elapsed)
    assert len(received) == broadcasts < 100
    assert received[-1]["collected"] == sum(1 for _ in range(100)) - 4 * 7  # controls at 1,2,5,...,25
    realtime.reset()


def test_a_hidden_name_is_anonymous_to_others_but_not_to_oneself(app, make_campaign):
    make_campaign(sentences=30)
    alice, bob = _login_client(app, n=1), _login_client(app, n=2)
    judge_items(alice, 3)
    judge_items(bob, 4)
    # Alice hides her name from the evaluation page's own form: back to it.
    token = csrf_token(alice, "/c/test/evaluate")
    response = alice.post("/c/test/ranking-visibility", data={"csrf_token": token, "hide": "1", "back": "evaluate"})
    assert response.status_code == 302 and response.headers["Location"].endswith("/c/test/evaluate")
    assert db.session.scalar(select(User.hide_from_ranking).where(User.username == "vol1")) is True
    alice_socket, bob_socket = _socket(app, alice), _socket(app, bob)
    realtime.flush()
    public = _events(bob_socket, "ranking")[-1]
    assert [(row["n"], row["c"]) for row in public["top"]] == [("vol2", 4), (None, 3)]
    assert "vol1" not in str(_events(bob_socket, "ranking")) + str(_events(bob_socket, "me"))
    # Alice still sees her own position, under her own name.
    mine = _events(alice_socket, "me")[-1]
    assert mine["rank"] == 2 and {"r": 2, "n": "vol1", "c": 3, "me": True} in mine["around"]
    # The pages say the same: anonymous for Bob, her name for Alice.
    bob_page = bob.get("/c/test/evaluate").get_data(as_text=True)
    assert "vol1" not in bob_page and "anonymous" in bob_page
    alice_page = alice.get("/c/test/evaluate").get_data(as_text=True)
    around = alice_page[alice_page.index('id="around"'):]
    assert re.search(r'<li class="me[^"]*">\s*<span class="rank">2</span> <bdi class="name">vol1</bdi>', around)
    assert "Show my name in the public ranking" in alice_page
    # A newcomer who hides their name is an anonymous last comer.
    carol = app.test_client()
    register(carol, username="carol", email="carol@example.org")
    carol.post("/c/test/ranking-visibility", data={"csrf_token": csrf_token(carol, "/c/test/welcome"), "hide": "1"})
    realtime.flush()
    assert _events(bob_socket, "ranking")[-1]["last"] == {"n": None}
    # And showing the name again brings it back for everybody.
    alice.post("/c/test/ranking-visibility", data={"csrf_token": token, "hide": "0"})
    realtime.flush()
    assert _events(bob_socket, "ranking")[-1]["top"][1]["n"] == "vol1"


def test_the_top_five_are_marked_as_prize_winners(app, make_campaign):
    make_campaign()
    campaign, people = _ranked(app, [20, 19, 18, 17, 16, 15, 14])
    payload = leaderboard.get(campaign.id).public_payload()
    assert payload["prizes"] == 5 and len(payload["top"]) == 7
    client = app.test_client()
    register(client, username="viewer", email="viewer@example.org")
    page = client.get("/c/test/evaluate").get_data(as_text=True)
    top = page[page.index('id="top"'):page.index("</ol>", page.index('id="top"'))]
    assert top.count('class="prize"') == 5 and top.count("<li") == 7
    assert "The top 5 win the prizes." in page


def test_a_judgments_request_never_waits_for_a_broadcast(app, make_campaign, monkeypatch):
    """Answering only marks the campaign as changed: every emit happens
    outside the HTTP request, in the ticker (here: an explicit flush)."""
    from flask import has_request_context, request

    make_campaign(sentences=20)
    alice, bob = _login_client(app, n=1), _login_client(app, n=2)
    bob_socket = _socket(app, bob)
    bob_socket.get_received()
    emits = []
    original = socketio.emit

    def recording_emit(event, *args, **kwargs):
        emits.append((event, request.path if has_request_context() else None))
        return original(event, *args, **kwargs)

    monkeypatch.setattr(socketio, "emit", recording_emit)
    judge_items(alice, 12)  # ten answers, a ticket, controls: all through /api/judgment
    assert emits == [] and bob_socket.get_received() == []
    realtime.flush()
    assert ("ranking", None) in emits and all(path is None for _event, path in emits)


def test_a_reconnected_socket_catches_up_at_once(app, make_campaign):
    make_campaign(sentences=30)
    alice, bob = _login_client(app, n=1), _login_client(app, n=2)
    alice_socket = _socket(app, alice)
    alice_socket.disconnect()
    judge_items(alice, 10)  # while disconnected
    judge_items(bob, 2)
    realtime.flush()
    again = _socket(app, alice)
    assert _events(again, "me")[-1] == {
        "rank": 1, "count": 10, "held": False, "tickets": [1],
        "around": [{"r": 1, "n": "vol1", "c": 10, "me": True}, {"r": 2, "n": "vol2", "c": 2}],
    }
    assert _events(again, "ranking")[-1]["collected"] == 10 - 4  # controls at items 1, 2, 5, 10; Bob: two controls


def test_a_dismissed_volunteer_cannot_join_and_is_told(app, make_campaign):
    make_campaign(sentences=20)
    alice = _login_client(app, n=1)
    alice_socket = _socket(app, alice)
    csrf = csrf_token(alice, "/c/test/welcome")
    item = alice.get("/c/test/api/item").get_json()["item"]
    better = set(db.session.scalars(select(Control.better)))
    status = None
    while item:  # every control wrong: dismissed at the first check (issue 28: not told before)
        wrong = "left" if item["right"] in better else "right"
        data = alice.post("/c/test/api/judgment", json={"token": item["token"], "choice": wrong},
                          headers={"X-CSRFToken": csrf}).get_json()
        item, status = data["item"], data["status"]
    assert status == "dismissed"
    realtime.flush()
    assert _events(alice_socket, "me")[-1]["dismissed"] is True
    fresh = socketio.test_client(app, flask_test_client=alice)
    assert fresh.emit("join", {"campaign": "test"}, callback=True) == {"ok": False, "error": "not a participant"}


def test_a_broadcast_gives_way_to_requests_every_hundred_clients(monkeypatch):
    """The fan-out of one broadcast yields to the event loop after every
    FAN_OUT_CHUNK clients (scripts/bench/bench_realtime.py measures why),
    and still reaches every client of the room exactly once."""
    from app import realtime

    manager = realtime.client_manager(None)
    pauses = []
    monkeypatch.setattr(realtime, "_give_way", lambda server: pauses.append(server))
    manager.server = type("Server", (), {"async_mode": "threading"})()
    sids = [f"sid{n}" for n in range(250)]
    for n, sid in enumerate(sids):
        manager.basic_enter_room(sid, "/", "campaign-1", eio_sid=f"eio{n}")
    reached = [sid for sid, _eio in manager.get_participants("/", "campaign-1")]
    assert sorted(reached) == sorted(sids)
    assert len(pauses) == 250 // realtime.FAN_OUT_CHUNK


def test_what_a_volunteer_sees_after_an_answer_does_not_tell_a_control_from_a_test(app, make_campaign, monkeypatch):
    """Issue 28: the public progress counts test judgments only, so shown as
    it moves it ticked after a test and not after a control. It is the count
    at the start of the period (BOZKA_PUBLIC_FIGURES_SECONDS): after either
    kind of answer the volunteer receives the same change, in the JSON reply
    and in every Socket.IO event; the next period shows every judgment."""
    from app.models import Item, utcnow
    from app.services import counters

    app.config["BOZKA_PUBLIC_FIGURES_SECONDS"] = 60
    make_campaign(sentences=20)
    alice, bob = _login_client(app, n=1), _login_client(app, n=2)
    for user in db.session.scalars(select(User)):
        user.email_confirmed_at = utcnow()  # in the ranking
    db.session.commit()
    judge_items(bob, 10)  # earlier periods: these count in the figure
    bobs = db.session.scalar(select(Participation.id).join(User).where(User.username == "vol2"))
    db.session.execute(Item.__table__.update().where(Item.participation_id == bobs)
                       .values(answered_at=Item.answered_at - timedelta(hours=1)))
    db.session.commit()
    monkeypatch.setattr(counters, "utcnow", lambda now=utcnow(): now)  # this period, from now on
    base = 10 - 4  # Bob: controls at items 1, 2, 5 and 10
    sio = _socket(app, alice)
    realtime.flush()
    ranking, me = _events(sio, "ranking")[-1], _events(sio, "me")[-1]
    assert ranking["collected"] == base

    csrf = csrf_token(alice, "/c/test/welcome")
    item = alice.get("/c/test/api/item").get_json()["item"]
    better = set(db.session.scalars(select(Control.better)))
    alices = db.session.scalar(select(Participation.id).join(User).where(User.username == "vol1"))
    kinds, reply = set(), None
    for position in range(1, 5):
        is_control = db.session.scalar(select(Item.control_id.is_not(None)).where(
            Item.participation_id == alices, Item.position == position))
        kinds.add("control" if is_control else "test")
        choice = "right" if item["right"] in better else "left"
        sio.log = []
        new = alice.post("/c/test/api/judgment", json={"token": item["token"], "choice": choice},
                         headers={"X-CSRFToken": csrf}).get_json()
        item = new.pop("item")
        realtime.flush()
        received = sio.log + sio.get_received()
        # The reply: one more answer that counts, whatever the kind.
        assert {k: new[k] for k in ("status", "answered", "counted", "held", "tickets", "new_ticket")} == {
            "status": "accepted", "answered": position, "counted": True, "held": False, "tickets": [],
            "new_ticket": None}, (position, is_control)
        if reply is not None:
            assert new["mine"] != reply["mine"]  # "you have judged N": the count, not the kind
        reply = new
        # The events: the same ones, the ranking with Alice's count one more and nothing else changed.
        assert sorted(e["name"] for e in received) == ["me", "ranking"], (position, is_control)
        new_ranking = next(e["args"][0] for e in received if e["name"] == "ranking")
        new_me = next(e["args"][0] for e in received if e["name"] == "me")
        expected = dict(ranking, top=[dict(row, c=position) if row["n"] == "vol1" else row
                                      for row in new_ranking["top"]])
        assert new_ranking == expected and new_ranking["collected"] == base, (position, is_control)
        assert {"r": 2, "n": "vol1", "c": position} in new_ranking["top"]
        assert new_me["count"] == me["count"] + 1 and new_me["tickets"] == me["tickets"] == []
        assert new_me["held"] is False and new_me["rank"] is not None
        ranking, me = new_ranking, new_me
    assert kinds == {"control", "test"}
    # The page drawn on the server shows the same figure.
    page = alice.get("/c/test/evaluate").get_data(as_text=True)
    assert re.search(rf'data-field="collected">{base}<', page)

    # The next period shows every judgment, Alice's tests included, without an answer.
    later = utcnow() + timedelta(seconds=61)
    monkeypatch.setattr(counters, "utcnow", lambda: later)
    tests = db.session.scalar(select(func.count(Item.id)).where(
        Item.participation_id == alices, Item.slot_id.is_not(None), Item.answered_at.is_not(None)))
    sio.get_received()
    realtime.flush()
    assert _events(sio, "ranking")[-1]["collected"] == base + tests


def test_the_answer_that_finishes_a_volunteers_work_is_broadcast(app, make_campaign):
    """The last answer comes back "finished" (recorded, nothing left to
    serve): it changed the ranking and the progress all the same."""
    make_campaign(sentences=3, systems=("A", "B"))
    alice, bob = _login_client(app, n=1), _login_client(app, n=2)
    bob_socket = _socket(app, bob)
    data = judge_items(alice, 1)
    while data["status"] == "accepted":
        realtime.flush()
        data = judge_items(alice, 1)
    assert data["status"] == "finished" and data["answered"] > 0
    bob_socket.get_received()
    assert realtime.flush() == 1
    ranking = _events(bob_socket, "ranking")[-1]
    assert ranking["top"][0]["c"] == data["answered"]
    assert ranking["collected"] == 3


def test_a_socket_closed_while_its_join_reads_the_database_joins_nothing(app, make_campaign, monkeypatch):
    """A page left at once: the disconnect is handled while the join event
    still reads; the join then answers "closed" instead of failing (served,
    this left a traceback in the log) and no membership outlives the socket."""
    from app import sockets

    make_campaign()
    client = _login_client(app)
    sio = socketio.test_client(app, flask_test_client=client)
    found = sockets.find_campaign

    def leaving(slug):
        campaign = found(slug)
        sio.disconnect()
        return campaign

    monkeypatch.setattr(sockets, "find_campaign", leaving)
    before = dict(sockets._memberships)  # other tests' clients never disconnect
    assert sio.emit("join", {"campaign": "test"}, callback=True) == {"ok": False, "error": "closed"}
    assert sockets._memberships == before
