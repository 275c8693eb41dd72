"""The application factory."""
import logging
import os
import random
from functools import lru_cache, partial

from babel import Locale, UnknownLocaleError
from flask import Flask, current_app, g, has_request_context, request
from flask_babel import lazy_gettext as _l
from flask_login import current_user
from sqlalchemy import bindparam, event, select
from sqlalchemy.engine import Engine

from . import config as config_module
from .choices import CAMPAIGN_STATUSES, EXPORTS, ROLES, label
from .extensions import babel, csrf, db, limiter, login_manager, migrate, socketio

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LANGUAGE_COOKIE = "bozka_lang"


@lru_cache(maxsize=256)
def text_direction(code):
    """'rtl' or 'ltr' for a language code, from CLDR data."""
    try:
        return Locale.parse(code.replace("-", "_")).text_direction
    except (UnknownLocaleError, ValueError, AttributeError):
        return "ltr"


@lru_cache(maxsize=1024)
def language_name(code, in_locale="en", capitalised=False):
    """The language's name in ``in_locale`` as CLDR writes it in a sentence
    (lower case in Spanish or Basque); ``capitalised`` for a name that stands
    alone, as in the language menu."""
    try:
        name = Locale.parse(code.replace("-", "_")).get_display_name(in_locale)
    except (UnknownLocaleError, ValueError, AttributeError):
        return code
    if not name:
        return code
    return name[:1].upper() + name[1:] if capitalised else name


def available_locales(translations_dir):
    """English plus every language with a catalogue in translations/."""
    found = {"en"}
    if os.path.isdir(translations_dir):
        for name in os.listdir(translations_dir):
            if os.path.isfile(os.path.join(translations_dir, name, "LC_MESSAGES", "messages.po")):
                found.add(name)
    return sorted(found)


def _campaign_locale():
    """The default interface language of the campaign in the URL, if any."""
    slug = (request.view_args or {}).get("slug")
    if not slug or g.get("database_unavailable"):
        return None
    loaded = g.get("bozka_campaign")  # set by web.find_campaign
    if loaded is not None and loaded.slug == slug:
        return loaded.interface_language
    from .models import Campaign

    return db.session.scalar(db.select(Campaign.interface_language).where(Campaign.slug == slug))


def select_locale():
    """The page language of the request (``choose_locale``)."""
    if not has_request_context():
        return None  # the default locale
    return choose_locale(
        current_app.config["LANGUAGES"],
        current_user.locale if current_user.is_authenticated else None,
        request.cookies.get(LANGUAGE_COOKIE),
        request.accept_languages,
        _campaign_locale,
    )


def choose_locale(available, user_locale, cookie, accept_languages, campaign_locale):
    """The volunteer's choice, else the language cookie's, else the
    browser's (``accept_languages``: a werkzeug ``LanguageAccept``), else
    the campaign's default (``campaign_locale()``), else English."""
    if user_locale in available:
        return user_locale
    if cookie in available:
        return cookie
    return accept_languages.best_match(available) or campaign_locale() or "en"


@event.listens_for(Engine, "connect")
def _sqlite_pragmas(dbapi_connection, _record):
    if type(dbapi_connection).__module__.startswith("sqlite3"):
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
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
    same throughput; docs/benchmarks.md, seventh round.)
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
    os.makedirs(app.instance_path, exist_ok=True)
    app.config.update(config_module.from_env(app.instance_path))
    if overrides:
        app.config.update(overrides)
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
            "connect_args": {"timeout": 30},
        }
    seed = app.config.get("BOZKA_RANDOM_SEED")
    app.extensions["bozka_rng"] = random.Random(int(seed)) if seed is not None else random.SystemRandom()
    logging.basicConfig(level=logging.INFO)

    db.init_app(app)
    migrate.init_app(app, db, directory=os.path.join(ROOT, "migrations"))
    csrf.init_app(app)
    limiter.init_app(app)
    from .volunteer.endpoint import JudgmentEndpoint

    # The judging API's usual request skips Flask's pipeline (see the module).
    app.wsgi_app = JudgmentEndpoint(app, app.wsgi_app)
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
    from . import wal

    wal.init_app(app, db, socketio)  # SQLite: log checkpoints in the background
    from .models import User, as_loaded
    from .prepared import Prepared

    @login_manager.user_loader
    def load_user(user_id):
        from .services.security import user_from_session_id

        return user_from_session_id(user_id, _user_by_id)

    # Built once: every request loads its user (read on the connection and
    # attached as a loaded object: cheaper than the ORM's query).
    _users = User.__table__
    _select_user = Prepared(select(*_users.c).where(_users.c.id == bindparam("user_id")))
    _user_columns = tuple(column.key for column in _users.c)

    def _user_by_id(uid):
        row = _select_user.run({"user_id": uid}).first()
        return as_loaded(User, dict(zip(_user_columns, row))) if row is not None else None

    from .auth import bp as auth_bp
    from .organiser import bp as organiser_bp
    from .volunteer import bp as volunteer_bp

    app.register_blueprint(volunteer_bp)
    app.register_blueprint(auth_bp)
    app.register_blueprint(organiser_bp)

    from . import cli

    cli.register(app)

    from . import errors

    errors.register(app)

    app.jinja_env.filters["dir_of"] = text_direction
    app.jinja_env.globals["language_name"] = language_name
    from .volunteer.texts import tickets_summary

    app.jinja_env.globals["tickets_summary"] = tickets_summary
    app.jinja_env.globals["status_label"] = partial(label, CAMPAIGN_STATUSES)
    app.jinja_env.globals["role_label"] = partial(label, ROLES)
    app.jinja_env.globals["export_label"] = partial(label, EXPORTS)
    app.jinja_env.globals["interface_languages"] = [
        (code, language_name(code, code, capitalised=True)) for code in app.config["LANGUAGES"]
    ]

    @app.context_processor
    def interface_language():
        from flask_babel import get_locale

        locale = str(get_locale() or "en")
        return {"ui_lang": locale.replace("_", "-"), "ui_dir": text_direction(locale)}

    return app
