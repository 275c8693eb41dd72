"""Every Socket.IO emit lives here.

Judgments only mark their campaign as changed (``touch``): a ticker sends
at most one ranking broadcast per campaign per interval (and one when a
period of the public progress begins, ``counters.public_collected``), with a compact
payload to the campaign's room, and personal data (rank, neighbours,
tickets) only to each volunteer's own room, and only when it changed. A
judgment's request never waits for a broadcast.

The personal pass follows what changed: the change store lists the
volunteers touched since the last pass (in every process, through Redis),
and only connected volunteers whose place those changes can move (``_due``)
are read again. A change of the whole campaign (no volunteer given), a
process's first pass and one pass every FULL_PASS_SECONDS read the whole
ranking instead.
"""
import bisect
import logging
import threading
import time

from flask import current_app
from sqlalchemy import bindparam, select

from . import protocols, socket_accounts
from .extensions import db, socketio
from .models import Participation
from .services import counters, leaderboard
from .services.rewards import latest_tickets_of

log = logging.getLogger("bozka.realtime")

_interest = set()  # campaigns this process touched: it makes sure they are broadcast
_connected = {}  # campaign id -> {participation id: (user id, socket count)}, this process
_last_personal = {}  # (campaign id, participation id) -> last payload sent
_personal_seen = {}  # campaign id -> change version of the last personal pass
_known = {}  # campaign id -> {participation id: order key} of the ranked, as of the last pass
_order = {}  # campaign id -> sorted [(order key, participation id)] of the connected ranked, as last sent
_key_sent = {}  # (campaign id, participation id) -> the order key of the payload last sent
_full_at = {}  # campaign id -> time.monotonic() of the last full pass
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


EVERYONE = "*"  # a change of the whole campaign: every volunteer's place may move


class MemoryChanges:
    """Change versions for one process (no message queue configured), with
    the volunteers changed since the last pass (this process is the only reader)."""

    def __init__(self):
        self.versions, self.done, self.changed = {}, {}, {}

    def bump(self, campaign_id, member=None):
        self.versions[campaign_id] = self.versions.get(campaign_id, 0) + 1
        if member is not None:
            self.changed.setdefault(campaign_id, {})[member] = self.versions[campaign_id]

    def versions_of(self, campaign_ids):
        return {cid: self.versions.get(cid, 0) for cid in campaign_ids}

    def changed_between(self, campaign_id, after, upto):
        """The members bumped after version ``after`` up to ``upto``."""
        changed = self.changed.get(campaign_id, {})
        members = {member for member, version in changed.items() if after < version <= upto}
        for member in [member for member, version in changed.items() if version <= upto]:
            del changed[member]
        return members

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
    broadcast, both checked and recorded in one atomic step. The volunteers
    changed are kept with the version of their latest change (a sorted set:
    at most one entry per volunteer), for each process to read its own range."""

    # KEYS: lock, done. ARGV: version, lock milliseconds.
    CLAIM = """
    if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[2]) then return 0 end
    if tonumber(ARGV[1]) <= tonumber(redis.call('GET', KEYS[2]) or '0') then return 0 end
    redis.call('SET', KEYS[2], ARGV[1])
    return 1
    """
    # KEYS: version, changed. ARGV: member ('' for none).
    BUMP = """
    local version = redis.call('INCR', KEYS[1])
    if ARGV[1] ~= '' then redis.call('ZADD', KEYS[2], version, ARGV[1]) end
    return version
    """

    def __init__(self, url):
        import redis

        self.redis = redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)
        self._claim = self.redis.register_script(self.CLAIM)
        self._bump = self.redis.register_script(self.BUMP)

    def bump(self, campaign_id, member=None):
        self._bump(keys=[f"bozka:changes:{campaign_id}", f"bozka:changed:{campaign_id}"],
                   args=["" if member is None else member])

    def versions_of(self, campaign_ids):
        ids = list(campaign_ids)
        values = self.redis.mget([f"bozka:changes:{cid}" for cid in ids]) if ids else []
        return {cid: int(value or 0) for cid, value in zip(ids, values)}

    def changed_between(self, campaign_id, after, upto):
        members = self.redis.zrangebyscore(f"bozka:changed:{campaign_id}", f"({after}", upto)
        return {EVERYONE if member == EVERYONE.encode() else int(member) for member in members}

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
    dismissal; without it, anybody's place may have moved). Never fails:
    with Redis down, judging goes on and live updates resume with it."""
    leaderboard.invalidate(campaign_id)
    with _state_lock:
        _interest.add(campaign_id)
    try:
        _store().bump(campaign_id, EVERYONE if participation_id is None else participation_id)
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
        if _store().claim(campaign_id, version, interval):
            broadcast(campaign_id)
            made += 1
        seen = _personal_seen.get(campaign_id)
        if _connected.get(campaign_id) and seen != version:
            _personal_seen[campaign_id] = version
            changed = None if seen is None or seen > version else _store().changed_between(campaign_id, seen, version)
            personal_pass(campaign_id, changed)
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
            _store().bump(campaign_id)  # the public figures only: nobody's place moves


def broadcast(campaign_id):
    """The public ranking and progress, to every client of the campaign; the
    pairs' decisions brought up to date first (coalesced like the ranking)."""
    protocols.refresh(campaign_id)
    leaderboard.invalidate(campaign_id)
    ranking = leaderboard.get(campaign_id)
    socketio.emit("ranking", ranking.public_payload(), to=campaign_room(campaign_id))
    stats["ranking_broadcasts"] += 1
    # Organisers' dashboards fetch their panel again on this signal.
    socketio.emit("dashboard", {"changed": True}, to=organiser_room(campaign_id))
    return ranking


FULL_PASS_SECONDS = 60  # bounds how long a change missed by the store (Redis away) goes unsent
FULL_PASS_ABOVE = 100  # volunteers to read again (about 1 ms each) above which the full pass is cheaper


def personal_pass(campaign_id, changed):
    """Personal updates after the changes ``changed`` (participation ids,
    EVERYONE, or None when unknown): the whole ranking when it must be, else
    only what those changes can move."""
    due_full = time.monotonic() - _full_at.get(campaign_id, float("-inf")) > FULL_PASS_SECONDS
    if changed is None or EVERYONE in changed or campaign_id not in _known or due_full:
        personal_updates(campaign_id)
    elif changed:
        _changed_updates(campaign_id, changed)


def personal_updates(campaign_id, ranking=None):
    """The full pass: rank, neighbours and tickets, to this process's
    volunteers whose changed, from the whole ranking (``leaderboard.build``).
    Their counts and tickets are read in two queries, however many they are."""
    if ranking is None:
        ranking = leaderboard.build(campaign_id)
    _known[campaign_id] = {entry.participation_id: entry.key for entry in ranking.entries}
    _full_at[campaign_id] = time.monotonic()
    with _state_lock:
        members = dict(_connected.get(campaign_id, {}))
    _send_personal(campaign_id, ranking, members)


def _changed_updates(campaign_id, changed):
    """The incremental pass: the changed volunteers' places read again
    (one query), and personal updates to the connected ones they can move."""
    known = _known[campaign_id]
    keys = leaderboard.keys_of(campaign_id, changed)
    moves = [(known.get(pid), keys.get(pid)) for pid in changed if known.get(pid) != keys.get(pid)]
    for pid in changed:
        if pid in keys:
            known[pid] = keys[pid]
        else:
            known.pop(pid, None)
    with _state_lock:
        members = dict(_connected.get(campaign_id, {}))
    due = _due(_order.get(campaign_id, []), changed, moves) | (set(changed) & set(members))
    if len(due) > FULL_PASS_ABOVE:  # a long tie passed: one read of the whole ranking is cheaper
        personal_updates(campaign_id)
        return
    members = {pid: members[pid] for pid in due if pid in members}
    _send_personal(campaign_id, leaderboard.Places(campaign_id, members), members)


def _due(order, changed, moves):
    """The connected volunteers (``order``: their keys as last sent) whose
    rank or neighbours a move (old key, new key; None: not ranked) can
    change: those within two places of either key, and those whose count or
    a neighbour's the mover passed (the rank counts those with more)."""
    due = set()
    for old, new in moves:
        for key in (old, new):
            if key is not None:
                due |= _nearest(order, bisect.bisect_left(order, (key,)), bisect.bisect_right(order, (key,)), changed)
        counts = sorted(-key[0] if key else 0 for key in (old, new))
        if counts[0] != counts[1]:  # the counts in [low, high) now have one more or one fewer ahead
            start = bisect.bisect_left(order, ((-(counts[1] - 1),),))
            stop = bisect.bisect_left(order, ((-counts[0] + 1,),))
            due.update(pid for _key, pid in order[start:stop])
            due |= _nearest(order, start, stop, changed)
    return due


def _nearest(order, start, stop, changed, k=leaderboard.NEIGHBOURS):
    """Up to k volunteers before ``order[start]`` and k from ``order[stop]``,
    the changed ones apart (their places are read again anyway)."""
    found = set()
    for indices in (range(start - 1, -1, -1), range(stop, len(order))):
        taken = 0
        for i in indices:
            if taken == k:
                break
            if order[i][1] not in changed:
                found.add(order[i][1])
                taken += 1
    return found


def _send_personal(campaign_id, ranking, members):
    """Each member's payload from ``ranking``, sent when not the one last sent."""
    ids = list(members)
    payloads = _personal_payloads(ranking, ids)
    for participation_id in ids:
        _emit_personal(campaign_id, participation_id, payloads[participation_id], user_room(members[participation_id][0]))
        _place(campaign_id, participation_id, ranking.key_of(participation_id))


def _place(campaign_id, participation_id, key):
    """Keep ``_order`` as last sent: the connected volunteer's key, or none."""
    with _state_lock:
        order = _order.setdefault(campaign_id, [])
        old = _key_sent.pop((campaign_id, participation_id), None)
        if old is not None:
            index = bisect.bisect_left(order, (old, participation_id))
            if index < len(order) and order[index] == (old, participation_id):
                del order[index]
        if key is not None:
            _key_sent[(campaign_id, participation_id)] = key
            bisect.insort(order, (key, participation_id))


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
        tickets.update(latest_tickets_of(list(live)))  # the latest few: a bounded message
    return {
        participation_id: ranking.personal_payload(participation_id, *counts[participation_id], tickets[participation_id])
        if participation_id in counts
        else {"rank": None, "count": 0, "around": [], "tickets": [], "dismissed": True}
        for participation_id in participation_ids
    }


def _emit_personal(campaign_id, participation_id, payload, to, always=False):
    """Send the payload unless it is the one last sent (``always``: whatever it is)."""
    if not always and payload == _last_personal.get((campaign_id, participation_id)):
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
    socketio.emit("ranking", leaderboard.get(campaign_id).public_payload(), to=sid)
    places = leaderboard.Places(campaign_id, [participation_id])
    payload = _personal_payloads(places, [participation_id])[participation_id]
    _emit_personal(campaign_id, participation_id, payload, sid, always=True)  # the new socket always gets one
    _place(campaign_id, participation_id, places.key_of(participation_id))


def left(campaign_id, participation_id):
    with _state_lock:
        members = _connected.get(campaign_id, {})
        if participation_id in members:
            user_id, sockets = members[participation_id]
            if sockets > 1:
                members[participation_id] = (user_id, sockets - 1)
                return
            del members[participation_id]
            _last_personal.pop((campaign_id, participation_id), None)
    _place(campaign_id, participation_id, None)


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
        _known.clear()
        _order.clear()
        _key_sent.clear()
        _full_at.clear()
        _period_seen.clear()
        _connected.clear()
        _last_personal.clear()
        stats.update(ranking_broadcasts=0, personal_emits=0)
    socket_accounts.forget()
    leaderboard.invalidate()
