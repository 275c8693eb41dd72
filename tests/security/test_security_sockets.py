"""Socket.IO: authenticated connections only, from this site's pages only,
rooms chosen and checked by the server, payloads validated and bounded,
events per connection limited."""
import pytest
from sqlalchemy import select

from app import realtime, sockets
from app.extensions import db, socketio
from app.models import Participation
from helpers import register
from security_helpers import add_campaign, login, make_staff


def _volunteer(app, username="ane"):
    client = app.test_client()
    assert register(client, username=username, email=f"{username}@example.org").status_code == 302
    return client


def _socket(app, client):
    sio = socketio.test_client(app, flask_test_client=client)
    assert sio.is_connected()
    return sio


def _sid(sio):
    return socketio.server.manager.sid_from_eio_sid(sio.eio_sid, "/")


def test_connections_without_a_session_are_refused(app, make_campaign):
    make_campaign()
    assert not socketio.test_client(app, flask_test_client=app.test_client()).is_connected()
    assert not socketio.test_client(app).is_connected()


def test_a_session_ended_by_a_new_password_cannot_connect(app, make_campaign):
    from app.models import User

    make_campaign()
    client = _volunteer(app)
    user = db.session.scalar(select(User))
    user.set_password("a brand new secret 1")
    db.session.commit()
    assert not socketio.test_client(app, flask_test_client=client).is_connected()


def test_connections_from_other_sites_are_refused(app, client):
    """Cross-site WebSocket hijacking: Engine.IO checks the Origin."""
    refused = client.get("/socket.io/?EIO=4&transport=polling", headers={"Origin": "http://evil.example"})
    assert refused.status_code == 400
    accepted = client.get("/socket.io/?EIO=4&transport=polling", headers={"Origin": "http://localhost"})
    assert accepted.status_code == 200


def test_rooms_are_the_servers_choice(app, make_campaign, tmp_path):
    make_campaign()
    add_campaign(tmp_path, name="other", slug="other")
    client = _volunteer(app)
    sio = _socket(app, client)
    # Not a participant of the other campaign, a draft, or nonsense: refused.
    assert sio.emit("join", {"campaign": "no-such"}, callback=True) == {"ok": False, "error": "not a participant"}
    assert sio.emit("join", {"campaign": "test"}, callback=True) == {"ok": True}
    # A volunteer cannot watch the organisers' room.
    assert sio.emit("watch", {"campaign": "test"}, callback=True) == {"ok": False, "error": "forbidden"}
    # The server put the socket in its campaign's room and its own user's only.
    rooms = set(socketio.server.manager.get_rooms(_sid(sio), "/"))
    campaign_id = db.session.scalar(select(Participation.campaign_id))
    user_id = db.session.scalar(select(Participation.user_id))
    assert rooms - {_sid(sio), None} == {realtime.campaign_room(campaign_id), realtime.user_room(user_id)}
    assert not any(room.startswith("organisers:") for room in rooms if room)
    assert not any(room == realtime.user_room(user_id + 1) for room in rooms if room)


def test_a_volunteer_of_one_campaign_hears_nothing_of_another(app, tmp_path):
    first = add_campaign(tmp_path, name="first")
    client = _volunteer(app)
    from app.models import Campaign

    second = add_campaign(tmp_path, name="second", slug="second")
    sio = _socket(app, client)
    assert sio.emit("join", {"campaign": "second"}, callback=True)["ok"] is False
    assert sio.emit("join", {"campaign": first.slug}, callback=True)["ok"] is True
    sio.get_received()
    realtime.announce(second.id, "for the second campaign only")
    realtime.announce(first.id, "for the first")
    texts = [e["args"][0]["text"] for e in sio.get_received() if e["name"] == "announcement"]
    assert texts == ["for the first"]
    assert db.session.get(Campaign, second.id).slug == "second"


def test_a_dismissed_volunteer_is_refused(app, make_campaign):
    make_campaign()
    client = _volunteer(app)
    participation = db.session.scalar(select(Participation))
    participation.dismissed_at = participation.consent_at
    participation.dismissed_reason = "controls"
    db.session.commit()
    sio = _socket(app, client)
    assert sio.emit("join", {"campaign": "test"}, callback=True)["ok"] is False


def test_organisers_watch_only_existing_campaigns(app, make_campaign):
    make_campaign()
    make_staff("organiser", "boss")
    client = app.test_client()
    assert login(client, "boss@example.org").status_code == 302
    sio = _socket(app, client)
    assert sio.emit("watch", {"campaign": "test"}, callback=True) == {"ok": True}
    assert sio.emit("watch", {"campaign": "nope"}, callback=True)["ok"] is False


@pytest.mark.parametrize("payload", [
    None, "test", 42, [], ["test"], {}, {"campaign": None}, {"campaign": 7}, {"campaign": ["test"]},
    {"campaign": ""}, {"campaign": "x" * 65}, {"campaign": "t" * 20000}, {"campaign": {"$ne": 1}},
    {"campaign": "test\u0000"}, {"campaign": "<script>"},
])
def test_malformed_payloads_are_refused(app, make_campaign, payload):
    make_campaign()
    sio = _socket(app, _volunteer(app))
    for event in ("join", "watch"):
        answer = sio.emit(event, payload, callback=True)
        assert answer["ok"] is False, (event, payload)
    assert sio.is_connected()  # a bad payload is answered, not a crash
    assert _sid(sio) and _sid(sio) not in sockets._memberships
    assert set(socketio.server.manager.get_rooms(_sid(sio), "/")) <= {_sid(sio), None}


def test_events_per_connection_are_limited(app, make_campaign, monkeypatch):
    make_campaign()
    clock = [1000.0]
    monkeypatch.setattr(sockets.time, "monotonic", lambda: clock[0])
    sio = _socket(app, _volunteer(app))
    answers = [sio.emit("join", {"campaign": "test"}, callback=True) for _ in range(sockets.EVENTS_PER_WINDOW)]
    assert all(answer == {"ok": True} for answer in answers)
    assert sio.emit("join", {"campaign": "test"}, callback=True) == {"ok": False, "error": "too many events"}
    # After the window, events are answered again.
    clock[0] += sockets.WINDOW + 0.1
    assert sio.emit("join", {"campaign": "test"}, callback=True) == {"ok": True}
    # A flood (three times the limit) drops the connection.
    for _ in range(3 * sockets.EVENTS_PER_WINDOW + 1):
        if not sio.is_connected():
            break
        sio.emit("join", {"campaign": "test"})
    assert not sio.is_connected()


def test_the_limit_is_per_connection(app, make_campaign, monkeypatch):
    make_campaign()
    monkeypatch.setattr(sockets.time, "monotonic", lambda: 5.0)
    first = _socket(app, _volunteer(app, "ane"))
    second = _socket(app, _volunteer(app, "bea"))
    for _ in range(sockets.EVENTS_PER_WINDOW + 1):
        first.emit("join", {"campaign": "test"}, callback=True)
    assert second.emit("join", {"campaign": "test"}, callback=True) == {"ok": True}


def test_messages_are_size_limited(app):
    """Engine.IO drops any message over 16 KB before a handler sees it."""
    assert socketio.server.eio.max_http_buffer_size == 16 * 1024
