"""The application factory."""
import logging
import os
import random
from functools import partial

from flask import Flask, g
from flask_babel import lazy_gettext as _l
from sqlalchemy import event
from sqlalchemy.engine import Engine

from . import config as config_module, formats, private, protocols
from .choices import (AGE_GROUPS, AUDIT_ACTIONS, CAMPAIGN_STAGES, DISMISSAL_REASONS, EXPORTS, HOLD_REASONS,
                      LANGUAGE_LEVELS, QUALITY_KINDS, REPORT_REASONS, ROLES, STUDIES_FIELDS, STUDIES_LEVELS, label)
from .database import waits_while_busy
from .extensions import babel, csrf, db, limiter, login_manager, migrate, socketio
from .languages import available_locales, language_name, select_locale, text_direction

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@event.listens_for(Engine, "connect")
def _sqlite_pragmas(dbapi_connection, _record):
    if type(dbapi_connection).__module__.startswith("sqlite3"):
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()


def _async_mode():
    """gevent under gunicorn's gevent workers (monkey-patched), else threads."""
    try:
        from gevent import monkey

        if monkey.is_module_patched("socket"):
            return "gevent"
    except ImportError:
        pass
    return "threading"


def _sqlite_busy_seconds(config):
    """How long SQLite itself waits for another connection's write lock.

    The wait is in C: under gevent it would freeze every request of the
    worker, so it is short there and the judging steps wait between
    attempts instead (services/evaluation.retrying). A thread or a command
    blocks only itself.
    """
    if _async_mode() == "gevent":
        return config["BOZKA_SQLITE_BUSY_MS"] / 1000
    return config["BOZKA_BUSY_WAIT"]


class YieldBeforeRequest:
    """WSGI middleware for gevent workers: before serving a request, let the
    hub first serve the requests that were already waiting, and send each
    answer as soon as it is ready.

    Without a yield, a keep-alive connection whose next request has already
    arrived is read and served again at once, so with many volunteers a
    few are answered in milliseconds while others wait a second (measured:
    p50 3 ms, p95 880 ms at 32 volunteers). ``gevent.sleep(0)`` puts the
    request behind everything the event loop has already woken, and it runs
    at the start of the loop's next pass, with the others that arrived in
    the same poll: every volunteer waits about one round. (Yielding after
    the request instead, until the loop is idle, held each answer until
    the whole round was served: p95 96-101 ms against 87-88 ms this way,
    same throughput; docs/benchmarks.md, "What made a difference".)
    """

    def __init__(self, wsgi_app):
        self.wsgi_app = wsgi_app

    def __call__(self, environ, start_response):
        import gevent

        gevent.sleep(0)
        return self.wsgi_app(environ, start_response)


def create_app(overrides=None):
    app = Flask(
        __name__,
        template_folder=os.path.join(ROOT, "templates"),
        static_folder=os.path.join(ROOT, "static"),
        instance_path=os.environ.get("BOZKA_INSTANCE", os.path.join(ROOT, "instance")),
    )
    private.folder(app.instance_path)
    app.config.update(config_module.from_env(app.instance_path))
    if overrides:
        app.config.update(overrides)
    private.sqlite_files(app.config["SQLALCHEMY_DATABASE_URI"])
    # One setting for both cookies: over HTTPS, the remember-me cookie is Secure too.
    app.config.setdefault("REMEMBER_COOKIE_SECURE", app.config["SESSION_COOKIE_SECURE"])
    app.config.setdefault("LANGUAGES", available_locales(app.config["BABEL_TRANSLATION_DIRECTORIES"]))
    if app.config["SQLALCHEMY_DATABASE_URI"].startswith("sqlite"):
        # A file opened by this process cannot drop like a server connection:
        # no ping before each checkout (a statement per request otherwise).
        # The pool keeps connections, so the PRAGMAs run once per connection.
        app.config["SQLALCHEMY_ENGINE_OPTIONS"] = {
            **app.config["SQLALCHEMY_ENGINE_OPTIONS"],
            "pool_pre_ping": False,
            "connect_args": {"timeout": _sqlite_busy_seconds(app.config)},
        }
    seed = app.config.get("BOZKA_RANDOM_SEED")
    app.extensions["bozka_rng"] = random.Random(int(seed)) if seed is not None else random.SystemRandom()
    logging.basicConfig(level=logging.INFO)

    from . import limits

    limits.init_app(app)  # first: no other hook may read a body it refuses
    from . import assets

    assets.init_app(app)  # static/ served before Flask, inside every other middleware
    db.init_app(app)
    migrate.init_app(app, db, directory=os.path.join(ROOT, "migrations"))
    csrf.init_app(app)
    limiter.init_app(app)
    if int(os.environ.get("BOZKA_PROXIES", "0")):
        # Behind nginx: take the client's address from X-Forwarded-For.
        from werkzeug.middleware.proxy_fix import ProxyFix

        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=int(os.environ["BOZKA_PROXIES"]), x_proto=1)
    babel.init_app(app, locale_selector=select_locale)
    login_manager.init_app(app)
    login_manager.login_view = "auth.login"
    login_manager.login_message_category = "info"
    login_manager.login_message = _l("Please log in to see this page.")
    login_manager.localize_callback = str  # translated when flashed, in the request's language

    # Handlers first: SocketIO keeps them for every server init_app creates.
    from . import sockets  # noqa: F401

    async_mode = app.config.get("SOCKETIO_ASYNC_MODE") or _async_mode()
    from .realtime import client_manager

    socketio.init_app(
        app,
        message_queue=app.config["SOCKETIO_MESSAGE_QUEUE"],
        client_manager=client_manager(app.config["SOCKETIO_MESSAGE_QUEUE"]),
        async_mode=async_mode,
        max_http_buffer_size=16 * 1024,
    )
    if async_mode == "gevent":
        app.wsgi_app = YieldBeforeRequest(app.wsgi_app)
    from . import serverlock

    serverlock.init_app(app)  # outermost: a process that serves holds it (flask restore asks)
    from . import wal

    wal.init_app(app, db, socketio)  # SQLite: log checkpoints in the background
    from . import mail_sender

    mail_sender.init_app(app)  # the outbox's sender, started by the first request
    from .models import User
    from .services import security

    @login_manager.user_loader
    def load_user(user_id):
        if g.get("database_unavailable"):
            return None  # the 503 page is made as for a visitor (errors.database_unavailable)
        return security.user_from_session_id(user_id, lambda uid: db.session.get(User, uid))

    from .auth import bp as auth_bp
    from .organiser import bp as organiser_bp
    from .volunteer import bp as volunteer_bp

    app.register_blueprint(volunteer_bp)
    app.register_blueprint(auth_bp)
    app.register_blueprint(organiser_bp)
    # A write that finds SQLite busy waits cooperatively, then a 503 (database.while_busy).
    for endpoint, view in list(app.view_functions.items()):
        app.view_functions[endpoint] = waits_while_busy(view)

    from . import cli

    cli.register(app)

    from . import errors

    errors.register(app)

    app.jinja_env.filters["dir_of"] = text_direction
    app.jinja_env.filters["utc"] = formats.utc
    app.jinja_env.filters["percent"] = formats.percent
    app.jinja_env.globals["language_name"] = language_name
    from flask_babel import get_locale

    from .services.campaign_texts import campaign_text

    # A campaign's name, description or instructions in the page's language
    # if the campaign gives it, else the default: .text, .lang, .dir.
    app.jinja_env.globals["campaign_text"] = lambda campaign, field: campaign_text(campaign, field, get_locale())
    from .volunteer.texts import tickets_summary

    app.jinja_env.globals["tickets_summary"] = tickets_summary
    app.jinja_env.globals["stage_label"] = partial(label, CAMPAIGN_STAGES)
    app.jinja_env.globals["role_label"] = partial(label, ROLES)
    app.jinja_env.globals["export_label"] = partial(label, EXPORTS)
    app.jinja_env.globals["hold_label"] = partial(label, HOLD_REASONS)
    app.jinja_env.globals["dismissal_label"] = partial(label, DISMISSAL_REASONS)
    app.jinja_env.globals["quality_kind_label"] = partial(label, QUALITY_KINDS)
    app.jinja_env.globals["report_label"] = partial(label, REPORT_REASONS)
    app.jinja_env.globals["audit_label"] = partial(label, AUDIT_ACTIONS)
    from .models import utcnow
    from .services.schedule import phase_of

    # Where the campaign stands now: the volunteer pages say when it opens or that it ended.
    # The template of a protocol's texts (task, instructions, rule, dismissal).
    app.jinja_env.globals["protocol_texts"] = lambda campaign: protocols.of(campaign).TEXTS
    app.jinja_env.globals["campaign_phase"] = lambda campaign: phase_of(campaign, utcnow())
    from .web import url_if_exists

    app.jinja_env.globals["url_if_exists"] = url_if_exists
    app.jinja_env.globals["profile_label"] = {
        "age_group": partial(label, AGE_GROUPS), "studies_level": partial(label, STUDIES_LEVELS),
        "studies_field": partial(label, STUDIES_FIELDS), "level": partial(label, LANGUAGE_LEVELS),
    }
    app.jinja_env.globals["interface_languages"] = [
        (code, language_name(code, code, capitalised=True)) for code in app.config["LANGUAGES"]
    ]

    @app.context_processor
    def interface_language():
        from flask_babel import get_locale

        locale = str(get_locale() or "en")
        return {"ui_lang": locale.replace("_", "-"), "ui_dir": text_direction(locale)}

    return app
