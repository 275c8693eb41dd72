"""Socket.IO handlers: thin. Validation here, emits in app.realtime."""
import time

from flask import request
from flask_login import current_user
from flask_socketio import disconnect, join_room

from . import realtime, socket_accounts
from .extensions import socketio
from .services import organisers
from .services.importer import SLUG_RE
from .web import find_campaign, participation_of

_memberships = {}  # sid -> (campaign id, participation id)
_events = {}  # sid -> recent event times (per-connection rate limit)
EVENTS_PER_WINDOW, WINDOW = 10, 10.0


def _too_many(sid):
    """At most EVENTS_PER_WINDOW events per connection every WINDOW seconds."""
    now = time.monotonic()
    recent = [t for t in _events.get(sid, ()) if now - t < WINDOW]
    recent.append(now)
    _events[sid] = recent
    if len(recent) > 3 * EVENTS_PER_WINDOW:
        disconnect()  # a flood: drop the connection
    return len(recent) > EVENTS_PER_WINDOW


def _slug_of(data):
    """The campaign slug of an event, if it is one a campaign could have
    (so no NUL or other text the database would refuse)."""
    slug = data.get("campaign") if isinstance(data, dict) else None
    return slug if isinstance(slug, str) and SLUG_RE.fullmatch(slug) else None


def _closed_meanwhile():
    """Whether the socket closed while the event read the database (a page
    left at once): then there is no room to join and nothing to record (the
    disconnect has been handled already). Nothing yields between this check
    and the joins that follow it."""
    return not socketio.server.manager.is_connected(request.sid, request.namespace)


@socketio.on("connect")
def on_connect(auth=None):
    # Only logged-in volunteers may connect, a few sockets per account.
    if not current_user.is_authenticated:
        return False
    socket_accounts.connected(current_user.id, request.sid)
    return True


@socketio.on("join")
def on_join(data):
    if _too_many(request.sid):
        return {"ok": False, "error": "too many events"}
    slug = _slug_of(data)
    if slug is None:
        return {"ok": False, "error": "invalid"}
    campaign = find_campaign(slug)
    participation = participation_of(current_user, campaign) if campaign else None
    if participation is None or participation.is_dismissed:
        return {"ok": False, "error": "not a participant"}
    if _closed_meanwhile():
        return {"ok": False, "error": "closed"}
    # The server chooses the rooms: the campaign's and the user's own.
    join_room(realtime.campaign_room(campaign.id))
    join_room(realtime.user_room(current_user.id))
    if request.sid not in _memberships:
        _memberships[request.sid] = (campaign.id, participation.id)
        realtime.joined(campaign.id, participation.id, current_user.id, request.sid)
    return {"ok": True}


@socketio.on("watch")
def on_watch(data):
    """An organiser's or researcher's dashboard: the organiser room only."""
    if _too_many(request.sid):
        return {"ok": False, "error": "too many events"}
    # The user is loaded again for every event: a new password since the
    # connect leaves none (until the ticker closes the socket, about a second).
    if not current_user.is_authenticated or current_user.role not in ("organiser", "researcher", "admin"):
        return {"ok": False, "error": "forbidden"}
    slug = _slug_of(data)
    if slug is None:
        return {"ok": False, "error": "invalid"}
    campaign = find_campaign(slug)
    # Another organiser's campaign answers as one that does not exist (as its pages do).
    if not organisers.may_open(current_user, campaign):
        return {"ok": False, "error": "not found"}
    if _closed_meanwhile():
        return {"ok": False, "error": "closed"}
    join_room(realtime.organiser_room(campaign.id))
    return {"ok": True}


@socketio.on("disconnect")
def on_disconnect(*_args):
    _events.pop(request.sid, None)
    socket_accounts.disconnected(request.sid)
    membership = _memberships.pop(request.sid, None)
    if membership:
        realtime.left(*membership)
