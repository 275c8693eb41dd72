"""The background sender of the outbox (services/outbox.py), one per server
process: started by the first request the process serves (so not by CLI
commands, and after gunicorn has forked the worker), as the live ranking's
ticker is. Under gevent it is a greenlet and smtplib's sockets yield;
otherwise a thread. Several processes may run one each: a mail is claimed
before it is sent, so it goes out once. The same first request starts the
process's live ticker (app/realtime.py)."""
import logging
import os
import threading

from . import realtime
from .extensions import socketio
from .services import outbox

log = logging.getLogger("bozka.mail")

_lock = threading.Lock()
_sender = {"pid": None, "generation": 0}


def init_app(app):
    if not app.config.get("BOZKA_MAIL_SENDER", True):
        return

    @app.before_request
    def start_background_tasks():
        if _sender["pid"] != os.getpid():
            ensure_sender(app)
            # The live ticker too, even where no one judges: it closes the sockets
            # of sessions a new password ended in another process (socket_accounts).
            realtime.ensure_ticker(app)


def ensure_sender(app):
    with _lock:
        if _sender["pid"] == os.getpid():
            return
        _sender["pid"] = os.getpid()
        generation = _sender["generation"]
    socketio.start_background_task(_run, app, generation)


def stop():
    """Stop this process's sender after its current pass (tests)."""
    with _lock:
        _sender["generation"] += 1
        _sender["pid"] = None


def _run(app, generation):
    interval = float(app.config["MAIL_POLL_SECONDS"])
    while _sender["generation"] == generation:
        try:
            with app.app_context():  # its teardown removes the session
                outbox.send_due(app.config)
        except Exception:  # never let the sender die (the database away, a bug in one mail)
            log.exception("the mail sender's pass failed")
        socketio.sleep(interval)
