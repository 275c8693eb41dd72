"""Which Socket.IO connections each account holds (docs/security.md,
"Bounded sockets"): at most BOZKA_SOCKETS_PER_ACCOUNT per process, the
oldest closed first, and every one closed at logout or a new password.

Each process keeps its own sockets in memory. With several processes
(a Redis message queue), every socket is also listed in Redis under its
account, so any process, or a command such as ``flask user password``,
can close the account's sockets everywhere: python-socketio's Redis
manager sends a disconnect for a socket of another process to that process.

A new password set where this process's sockets cannot be reached (``flask
user password`` with no message queue, or another process while Redis is
down) is found in the database: the live ticker of every process asks, once
per tick, which accounts had a new password lately (``close_ended_sessions``).
"""
import logging
import threading
from datetime import timedelta

from flask import current_app
from flask_socketio import disconnect
from sqlalchemy import select

from .extensions import db
from .models import User, utcnow

log = logging.getLogger("bozka.sockets")

LISTED_FOR = 24 * 3600  # seconds an account's list outlives its last connect (a crashed process's sockets)
# A password is stamped before its transaction commits: look back this far
# past the last look, so a commit that waited on a busy database is seen too.
LOOK_BACK = timedelta(seconds=60)

_sockets = {}  # user id -> {sid: when it connected} in this process, oldest first (a dict keeps order)
_owners = {}  # sid -> user id, this process
_lock = threading.Lock()
_redis = {"url": None, "client": None}
_looked = {"at": None}  # when close_ended_sessions last read the database


def shared_list():
    """The Redis client holding every process's sockets, or None (one process)."""
    url = current_app.config.get("SOCKETIO_MESSAGE_QUEUE")
    if not url:
        return None
    if _redis["url"] != url:
        import redis

        _redis.update(url=url, client=redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5))
    return _redis["client"]


def list_key(user_id):
    return f"bozka:sockets:{user_id}"


def connected(user_id, sid):
    """A socket of this account connected: if the account now has more than
    BOZKA_SOCKETS_PER_ACCOUNT here, its oldest ones are disconnected."""
    limit = max(1, int(current_app.config.get("BOZKA_SOCKETS_PER_ACCOUNT", 5)))
    with _lock:
        sids = _sockets.setdefault(user_id, {})
        sids[sid] = utcnow()
        _owners[sid] = user_id
        oldest = list(sids)[:max(0, len(sids) - limit)]
    shared(lambda client: client.pipeline().sadd(list_key(user_id), sid).expire(list_key(user_id), LISTED_FOR).execute())
    for old in oldest:  # outside the lock: their disconnect handler runs now
        disconnect(sid=old, namespace="/")


def disconnected(sid):
    with _lock:
        user_id = _owners.pop(sid, None)
        sids = _sockets.get(user_id, {})
        sids.pop(sid, None)
        if not sids:
            _sockets.pop(user_id, None)
    if user_id is not None:
        shared(lambda client: client.srem(list_key(user_id), sid))


def disconnect_all(user_id):
    """Close every socket of the account: this process's directly, the other
    processes' through the message queue."""
    with _lock:
        sids = set(_sockets.get(user_id, ()))
    sids |= {sid.decode() for sid in shared(lambda client: client.smembers(list_key(user_id))) or ()}
    for sid in sids:
        disconnect(sid=sid, namespace="/")
    shared(lambda client: client.delete(list_key(user_id)))


def close_ended_sessions():
    """Close this process's sockets opened before their account's password
    was last set, for the passwords set since the last look: one query on
    users' indexed password_changed_at. Returns how many were closed."""
    now = utcnow()
    since = (_looked["at"] or now) - LOOK_BACK
    changed = db.session.execute(
        select(User.id, User.password_changed_at).where(User.password_changed_at >= since)
    ).all()
    _looked["at"] = now  # only once the database answered: after an outage, its changes are read then
    with _lock:
        ended = [sid for user_id, changed_at in changed
                 for sid, opened in _sockets.get(user_id, {}).items() if opened < changed_at]
    for sid in ended:
        disconnect(sid=sid, namespace="/")
    return len(ended)


def sockets_of(user_id):
    """This process's sockets of an account, oldest first."""
    with _lock:
        return list(_sockets.get(user_id, ()))


def shared(operation):
    """``operation(client)`` on the shared list, if there is one; with Redis
    down, this process's own bookkeeping goes on alone."""
    client = shared_list()
    if client is None:
        return None
    try:
        return operation(client)
    except Exception as exc:  # noqa: BLE001 (a message queue outage)
        log.warning("socket list unavailable: %s", exc)
        return None


def forget():
    """Forget this process's sockets (tests)."""
    with _lock:
        _sockets.clear()
        _owners.clear()
        _looked["at"] = None
