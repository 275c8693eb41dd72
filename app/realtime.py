"""Every Socket.IO emit lives here.

Judgments only mark their campaign as changed (``touch``): a ticker sends
at most one ranking broadcast per campaign per interval (and one when a
period of the public progress begins, ``counters.public_collected``), with a compact
payload to the campaign's room, and personal data (rank, neighbours,
tickets) only to each volunteer's own room, and only when it changed. A
judgment's request never waits for a broadcast.
"""
import logging
import threading

from flask import current_app
from sqlalchemy import bindparam, select

from . import socket_accounts
from .extensions import db, socketio
from .models import Participation
from .services import counters, leaderboard
from .services.rewards import ticket_numbers_of

log = logging.getLogger("bozka.realtime")

_interest = set()  # campaigns this process touched: it makes sure they are broadcast
_connected = {}  # campaign id -> {participation id: (user id, socket count)}, this process
_last_personal = {}  # (campaign id, participation id) -> last payload sent
_personal_seen = {}  # campaign id -> change version of the last personal pass
_personal_due = set()  # (campaign id, participation id) whose own data changed (this process)
_period_seen = {}  # campaign id -> the period of the public figures last broadcast (this process)
_state_lock = threading.Lock()
_ticker = {"started": False, "generation": 0}
stats = {"ranking_broadcasts": 0, "personal_emits": 0}


FAN_OUT_CHUNK = 100
FAN_OUT_MAX_WAIT = 0.02  # seconds a chunk waits for an idle loop at most


class _ChunkedFanOut:
    """A broadcast to a room hands its packet to every client's writer; with
    1,000 clients that queues 1,000 writers at once on the event loop, and a
    judgment's request that arrives meanwhile waits behind all of them (at
    1,000 clients the judgments' p95 went from 9 to 76 ms). Give way after
    every FAN_OUT_CHUNK clients, so requests go first. The participants are
    copied before the loop, so joins and leaves meanwhile are safe."""

    def get_participants(self, namespace, room):
        for number, participant in enumerate(super().get_participants(namespace, room), 1):
            yield participant
            if number % FAN_OUT_CHUNK == 0:
                _give_way(self.server)


def _give_way(server):
    """Under gevent, wait until the event loop has nothing else to do, so the
    requests that arrived meanwhile run first (a sleep(0) or a short timed
    sleep lets the queued writers run but hardly the requests: measured), yet
    never longer than FAN_OUT_MAX_WAIT, so a busy server cannot starve the
    broadcast. With threads, a plain yield."""
    if server.async_mode != "gevent":
        server.sleep(0)
        return
    import gevent

    with gevent.Timeout(FAN_OUT_MAX_WAIT, False):
        gevent.idle()


def client_manager(message_queue):
    """python-socketio's client manager for this process: in memory, or on
    Redis for several processes (as Flask-SocketIO would make it), with the
    chunked fan-out."""
    import socketio as python_socketio

    if not message_queue:
        return type("ChunkedManager", (_ChunkedFanOut, python_socketio.Manager), {})()
    if not message_queue.startswith(("redis://", "rediss://")):
        raise ValueError("SOCKETIO_MESSAGE_QUEUE must be a redis:// URL")
    manager = type("ChunkedRedisManager", (_ChunkedFanOut, python_socketio.RedisManager), {})
    return manager(message_queue, channel="flask-socketio", write_only=False)


class MemoryChanges:
    """Change versions for one process (no message queue configured)."""

    def __init__(self):
        self.versions, self.done = {}, {}

    def bump(self, campaign_id):
        self.versions[campaign_id] = self.versions.get(campaign_id, 0) + 1

    def versions_of(self, campaign_ids):
        return {cid: self.versions.get(cid, 0) for cid in campaign_ids}

    def claim(self, campaign_id, version, interval):
        if version <= self.done.get(campaign_id, 0):
            return False
        self.done[campaign_id] = version
        return True


class RedisChanges:
    """Change versions shared by every server process through Redis, so that
    each campaign is broadcast once per change whatever the number of
    processes: a process broadcasts only if it takes the campaign's lock
    (held for one interval) and the version is newer than the last one
    broadcast, both checked and recorded in one atomic step."""

    # KEYS: lock, done. ARGV: version, lock milliseconds.
    CLAIM = """
    if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[2]) then return 0 end
    if tonumber(ARGV[1]) <= tonumber(redis.call('GET', KEYS[2]) or '0') then return 0 end
    redis.call('SET', KEYS[2], ARGV[1])
    return 1
    """

    def __init__(self, url):
        import redis

        self.redis = redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)
        self._claim = self.redis.register_script(self.CLAIM)

    def bump(self, campaign_id):
        self.redis.incr(f"bozka:changes:{campaign_id}")

    def versions_of(self, campaign_ids):
        ids = list(campaign_ids)
        values = self.redis.mget([f"bozka:changes:{cid}" for cid in ids]) if ids else []
        return {cid: int(value or 0) for cid, value in zip(ids, values)}

    def claim(self, campaign_id, version, interval):
        keys = [f"bozka:broadcast-lock:{campaign_id}", f"bozka:broadcast-done:{campaign_id}"]
        return bool(self._claim(keys=keys, args=[version, max(1, int(interval * 1000))]))


_changes = {"store": None}


def _store():
    if _changes["store"] is None:
        url = current_app.config.get("SOCKETIO_MESSAGE_QUEUE")
        _changes["store"] = RedisChanges(url) if url and url.startswith("redis") else MemoryChanges()
    return _changes["store"]


def campaign_room(campaign_id):
    return f"campaign:{campaign_id}"


def organiser_room(campaign_id):
    return f"organisers:{campaign_id}"


def user_room(user_id):
    return f"user:{user_id}"


def touch(campaign_id, participation_id=None):
    """Something in the campaign's ranking or progress changed (and, given
    ``participation_id``, that volunteer's own data: count, tickets,
    dismissal). Never fails: with Redis down, judging goes on and live
    updates resume with it."""
    leaderboard.invalidate(campaign_id)
    with _state_lock:
        _interest.add(campaign_id)
        if participation_id is not None:
            _personal_due.add((campaign_id, participation_id))
    try:
        _store().bump(campaign_id)
    except Exception as exc:  # noqa: BLE001 (a message queue outage)
        log.warning("live updates paused: %s", exc)
    ensure_ticker(current_app._get_current_object())


def ensure_ticker(app):
    with _state_lock:
        if _ticker["started"] or not app.config.get("BOZKA_REALTIME_TICKER", True):
            return
        _ticker["started"] = True
        generation = _ticker["generation"]
    socketio.start_background_task(_run_ticker, app, generation)


def _run_ticker(app, generation):
    interval = float(app.config.get("BOZKA_BROADCAST_INTERVAL", 1.0))
    while _ticker["generation"] == generation:
        socketio.sleep(interval)
        # Apart, so that Redis down does not stop the sockets of an old password closing.
        for step, failure in ((socket_accounts.close_ended_sessions, "closing ended sessions failed"),
                              (lambda: flush(interval), "broadcast failed")):
            try:
                with app.app_context():  # its teardown removes the session
                    step()
            except Exception:  # never let the ticker die (Redis or the database away)
                log.exception(failure)


def flush(interval=1.0):
    """One tick: broadcast each changed campaign (if this process wins it),
    and send personal updates to this process's own sockets. Returns the
    number of ranking broadcasts made."""
    with _state_lock:
        campaigns = set(_interest) | set(_connected)
    _new_period(campaigns)
    versions = _store().versions_of(campaigns)
    made = 0
    for campaign_id, version in versions.items():
        ranking = None
        if _store().claim(campaign_id, version, interval):
            ranking = broadcast(campaign_id)
            made += 1
        if _connected.get(campaign_id) and _personal_seen.get(campaign_id) != version:
            _personal_seen[campaign_id] = version
            personal_updates(campaign_id, ranking)
        with _state_lock:  # volunteers with no socket here: nothing to send them
            members = _connected.get(campaign_id, {})
            _personal_due.difference_update(
                [key for key in _personal_due if key[0] == campaign_id and key[1] not in members]
            )
    return made


def _new_period(campaigns):
    """A new period of the public figures (counters.public_collected) is a
    change: the progress moves on a timer, not after an answer."""
    seconds = current_app.config.get("BOZKA_PUBLIC_FIGURES_SECONDS", 60)
    if not seconds:
        return
    number, _start = counters.public_period(seconds)
    for campaign_id in campaigns:
        if _period_seen.get(campaign_id) != number:
            _period_seen[campaign_id] = number
            _store().bump(campaign_id)


def broadcast(campaign_id):
    """The public ranking and progress, to every client of the campaign."""
    leaderboard.invalidate(campaign_id)
    ranking = leaderboard.get(campaign_id)
    socketio.emit("ranking", ranking.public_payload(), to=campaign_room(campaign_id))
    stats["ranking_broadcasts"] += 1
    # Organisers' dashboards fetch their panel again on this signal.
    socketio.emit("dashboard", {"changed": True}, to=organiser_room(campaign_id))
    return ranking


def personal_updates(campaign_id, ranking=None):
    """Rank, neighbours and tickets, to this process's volunteers whose changed.
    Their counts and tickets are read in two queries, however many they are."""
    if ranking is None:
        leaderboard.invalidate(campaign_id)
        ranking = leaderboard.get(campaign_id)
    with _state_lock:
        members = dict(_connected.get(campaign_id, {}))
    due = []
    for participation_id, (user_id, _sockets) in members.items():
        previous = _previous_if_changed(ranking, campaign_id, participation_id)
        if previous is not _UNCHANGED:
            due.append((participation_id, user_id, previous))
    payloads = _personal_payloads(ranking, [participation_id for participation_id, _uid, _previous in due])
    for participation_id, user_id, previous in due:
        _emit_personal(campaign_id, participation_id, payloads[participation_id], previous, user_room(user_id))


_UNCHANGED = object()


def _previous_if_changed(ranking, campaign_id, participation_id):
    """The payload last sent to this volunteer (None if none, or if their own
    data changed since), or ``_UNCHANGED`` when there is nothing to send: the
    cheap test, their rank and neighbourhood as before and no judgment since."""
    previous = _taken_due(campaign_id, participation_id)
    if (
        previous is not None
        and previous.get("rank") == ranking.rank_of(participation_id)
        and previous.get("around") == ranking.around(participation_id)
    ):
        return _UNCHANGED
    return previous


def _taken_due(campaign_id, participation_id):
    """The payload last sent, or None when the volunteer's own data changed
    since (their count or tickets: compare the whole payload)."""
    key = (campaign_id, participation_id)
    previous = _last_personal.get(key)
    with _state_lock:
        if key in _personal_due:
            _personal_due.discard(key)
            previous = None
    return previous


IN_CHUNK = 500
_COUNTS_OF = select(
    Participation.id, Participation.items_counted, Participation.dismissed_at, Participation.held_at
).where(
    Participation.id.in_(bindparam("participation_ids", expanding=True))
)


def _personal_payloads(ranking, participation_ids):
    """Each volunteer's personal payload (rank, count, neighbours, tickets),
    their counts and tickets read in two queries per ``IN_CHUNK`` volunteers."""
    counts, tickets = {}, {}
    for start in range(0, len(participation_ids), IN_CHUNK):  # a bounded number of parameters per query
        chunk = participation_ids[start:start + IN_CHUNK]
        rows = db.session.execute(_COUNTS_OF, {"participation_ids": chunk})
        live = {participation_id: (counted, held_at is not None)
                for participation_id, counted, dismissed_at, held_at in rows if dismissed_at is None}
        counts.update(live)
        tickets.update(ticket_numbers_of(list(live)))
    return {
        participation_id: ranking.personal_payload(participation_id, *counts[participation_id], tickets[participation_id])
        if participation_id in counts
        else {"rank": None, "count": 0, "around": [], "tickets": [], "dismissed": True}
        for participation_id in participation_ids
    }


def _emit_personal(campaign_id, participation_id, payload, previous, to):
    """Send the payload unless it is the one last sent (``previous``; None
    sends it whatever it is)."""
    if payload == previous:
        return
    _last_personal[(campaign_id, participation_id)] = payload
    socketio.emit("me", payload, to=to)
    stats["personal_emits"] += 1


def announce(campaign_id, text, announcement_id=None):
    """An organiser's announcement, to every connected volunteer at once
    (with its id, for the volunteer to dismiss it: services/announcements.py)."""
    socketio.emit("announcement", {"text": text, "id": announcement_id}, to=campaign_room(campaign_id))


def joined(campaign_id, participation_id, user_id, sid):
    """A volunteer's socket joined: send them the current state at once."""
    with _state_lock:
        members = _connected.setdefault(campaign_id, {})
        _uid, sockets = members.get(participation_id, (user_id, 0))
        members[participation_id] = (user_id, sockets + 1)
    ranking = leaderboard.get(campaign_id)
    socketio.emit("ranking", ranking.public_payload(), to=sid)
    _taken_due(campaign_id, participation_id)  # this payload covers a change waiting to be sent
    payload = _personal_payloads(ranking, [participation_id])[participation_id]
    _emit_personal(campaign_id, participation_id, payload, None, sid)  # the new socket always gets one


def left(campaign_id, participation_id):
    with _state_lock:
        members = _connected.get(campaign_id, {})
        if participation_id in members:
            user_id, sockets = members[participation_id]
            if sockets <= 1:
                del members[participation_id]
                _last_personal.pop((campaign_id, participation_id), None)
            else:
                members[participation_id] = (user_id, sockets - 1)


def disconnect_user(user_id):
    """Close every socket of this account (logout, new password), in every
    process (socket_accounts), after a "bye" that the site's own pages obey."""
    socketio.emit("bye", {}, to=user_room(user_id))
    socket_accounts.disconnect_all(user_id)


def reset():
    """Forget all state and stop the ticker (tests)."""
    with _state_lock:
        _ticker["generation"] += 1
        _ticker["started"] = False
        _changes["store"] = None
        _interest.clear()
        _personal_seen.clear()
        _personal_due.clear()
        _period_seen.clear()
        _connected.clear()
        _last_personal.clear()
        stats.update(ranking_broadcasts=0, personal_emits=0)
    socket_accounts.forget()
    leaderboard.invalidate()
