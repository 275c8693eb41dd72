"""Settings, read from environment variables with safe defaults."""
import os
import secrets

from . import private


def _bool(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _instance_secret(instance_path):
    """A development secret kept in the instance folder, so sessions survive restarts."""
    path = os.path.join(instance_path, "secret_key")
    try:
        with open(path) as handle:
            private.tighten(path, private.FILE)
            return handle.read().strip()
    except FileNotFoundError:
        secret = secrets.token_hex(32)
        try:
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, private.FILE), "w") as handle:
                handle.write(secret)
        except FileExistsError:  # another process wrote it first
            return _instance_secret(instance_path)
        return secret


def connection_bounds():
    """(connections one address may hold open, seconds a request's head may
    take) for the gunicorn worker (app/worker.py; docs/security.md, "One
    hostile client"). 1,000 of the worker's 4,000 connections: a school or
    a carrier's NAT puts many volunteers behind one address, each with a
    WebSocket and a few kept-alive requests. Behind a proxy (BOZKA_PROXIES)
    every connection comes from the proxy, so no bound by default: nginx's
    limit_conn bounds addresses there."""
    proxied = int(os.environ.get("BOZKA_PROXIES", "0")) > 0
    limit = int(os.environ.get("BOZKA_CONNECTIONS_PER_ADDRESS", "0" if proxied else "1000"))
    return limit, float(os.environ.get("BOZKA_HEAD_TIMEOUT", "10")) or None


def from_env(instance_path):
    """Build the configuration mapping for one application instance."""
    default_db = "sqlite:///" + os.path.join(instance_path, "bozka.sqlite3")
    environment = os.environ.get("BOZKA_ENV", "development")
    secret = os.environ.get("SECRET_KEY")
    if not secret and environment != "development":
        raise RuntimeError(
            f"SECRET_KEY must be set when BOZKA_ENV={environment!r} (only development makes its own)"
        )
    database = os.environ.get("DATABASE_URL", default_db)
    engine = {"pool_pre_ping": True}
    if not database.startswith("sqlite"):
        # One gevent worker runs many requests at once, and each judging
        # step holds a connection for a few round trips. A small pool is
        # faster: the steps beyond it wait in this process, holding nothing,
        # instead of interleaving their round trips on the database, where
        # each one's row locks then last longer (docs/benchmarks.md: 4 to
        # 10 connections per process made twice the judgments per second
        # of 20 plus 20 overflow on PostgreSQL). A request waits for a
        # connection up to DB_POOL_TIMEOUT seconds, then gets a clean 503.
        engine.update(
            pool_size=int(os.environ.get("DB_POOL_SIZE", "8")),
            max_overflow=int(os.environ.get("DB_MAX_OVERFLOW", "0")),
            pool_timeout=int(os.environ.get("DB_POOL_TIMEOUT", "30")),
        )
    return {
        "BOZKA_ENV": environment,
        "SECRET_KEY": secret or _instance_secret(instance_path),
        "SQLALCHEMY_DATABASE_URI": database,
        "SQLALCHEMY_ENGINE_OPTIONS": engine,
        "RATELIMIT_STORAGE_URI": os.environ.get("RATELIMIT_STORAGE_URI")
        or os.environ.get("SOCKETIO_MESSAGE_QUEUE")
        or "memory://",
        "RATELIMIT_ENABLED": _bool("RATELIMIT_ENABLED", True),
        # Redis away: count limits in this process's memory until it is back
        # (logging in must not fail because the message queue did).
        "RATELIMIT_IN_MEMORY_FALLBACK_ENABLED": True,
        "SOCKETIO_MESSAGE_QUEUE": os.environ.get("SOCKETIO_MESSAGE_QUEUE") or None,
        # Registrations (Flask-Limiter's syntax) per client address, and per
        # network (IPv4 /24, IPv6 /64: app/limits.py) so that a few addresses
        # of one network share a limit. An event behind one NAT may raise them.
        "BOZKA_REGISTER_LIMIT": os.environ.get("BOZKA_REGISTER_LIMIT", "5 per minute;40 per hour;100 per day"),
        "BOZKA_REGISTER_NETWORK_LIMIT": os.environ.get("BOZKA_REGISTER_NETWORK_LIMIT",
                                                       "10 per minute;60 per hour;150 per day"),
        # Socket.IO connections one account keeps open in a server process;
        # a new one beyond closes its oldest (docs/security.md, "Bounded sockets").
        "BOZKA_SOCKETS_PER_ACCOUNT": int(os.environ.get("BOZKA_SOCKETS_PER_ACCOUNT", "5")),
        # Live ranking: at most one broadcast per campaign per this many seconds.
        "BOZKA_BROADCAST_INTERVAL": float(os.environ.get("BOZKA_BROADCAST_INTERVAL", "1.0")),
        # The public progress ("judgments collected") as it stood at the start of
        # each period of this many seconds, so that no answer's kind shows in it
        # (services/counters.public_collected); 0: as it is now.
        "BOZKA_PUBLIC_FIGURES_SECONDS": int(os.environ.get("BOZKA_PUBLIC_FIGURES_SECONDS", "60")),
        # SQLite: seconds between write-ahead-log checkpoints, made in the
        # background (app/wal.py); 0 leaves them to SQLite, in the commits.
        "BOZKA_CHECKPOINT_INTERVAL": float(os.environ.get("BOZKA_CHECKPOINT_INTERVAL", "1.0")),
        # SQLite's write lock (docs/deployment.md, "A busy database"): under
        # gevent, milliseconds SQLite itself waits for it (a wait in C that
        # freezes the worker, so short); then a write waits cooperatively,
        # retrying, up to BOZKA_BUSY_WAIT seconds in all before a 503.
        # Threads and commands wait in C, up to BOZKA_BUSY_WAIT.
        "BOZKA_SQLITE_BUSY_MS": int(os.environ.get("BOZKA_SQLITE_BUSY_MS", "20")),
        "BOZKA_BUSY_WAIT": float(os.environ.get("BOZKA_BUSY_WAIT", "10")),
        # Sentences `flask campaign import` writes per transaction.
        "BOZKA_IMPORT_BATCH": int(os.environ.get("BOZKA_IMPORT_BATCH", "500")),
        "MAIL_SERVER": os.environ.get("MAIL_SERVER") or None,
        "MAIL_PORT": int(os.environ.get("MAIL_PORT", "587")),
        "MAIL_USERNAME": os.environ.get("MAIL_USERNAME") or None,
        "MAIL_PASSWORD": os.environ.get("MAIL_PASSWORD") or None,
        "MAIL_USE_TLS": _bool("MAIL_USE_TLS", True),
        "MAIL_SENDER": os.environ.get("MAIL_SENDER", "bozka@localhost"),
        # The outbox (services/outbox.py): a background sender looks for due
        # mails every MAIL_POLL_SECONDS; a failed try is repeated after
        # MAIL_RETRY_SECONDS, doubling each time (at most an hour), up to
        # MAIL_MAX_ATTEMPTS tries in all (by default about 15 minutes).
        "MAIL_TIMEOUT": float(os.environ.get("MAIL_TIMEOUT", "20")),
        "MAIL_POLL_SECONDS": float(os.environ.get("MAIL_POLL_SECONDS", "2")),
        "MAIL_RETRY_SECONDS": float(os.environ.get("MAIL_RETRY_SECONDS", "30")),
        "MAIL_MAX_ATTEMPTS": int(os.environ.get("MAIL_MAX_ATTEMPTS", "6")),
        "EMAIL_TOKEN_MAX_AGE": int(os.environ.get("EMAIL_TOKEN_MAX_AGE", str(3 * 24 * 3600))),
        "BABEL_DEFAULT_LOCALE": os.environ.get("BABEL_DEFAULT_LOCALE", "en"),
        "BABEL_TRANSLATION_DIRECTORIES": os.path.join(
            os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "translations"
        ),
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "SESSION_COOKIE_SECURE": _bool("SESSION_COOKIE_SECURE", False),
        "REMEMBER_COOKIE_HTTPONLY": True,
        "REMEMBER_COOKIE_SAMESITE": "Lax",
        "WTF_CSRF_TIME_LIMIT": None,
        "BOZKA_RANDOM_SEED": os.environ.get("BOZKA_RANDOM_SEED"),
        # Request bodies (docs/security.md, "Bounded requests"): at most this
        # many bytes anywhere, refused with 413 before any of it is read; the
        # JSON APIs (a judgment is about 100 bytes) take far less.
        "MAX_CONTENT_LENGTH": int(os.environ.get("MAX_CONTENT_LENGTH", str(1024 * 1024))),
        # A serving process holds a shared lock in the instance folder, so that
        # flask restore knows a server is running (app/serverlock.py).
        "BOZKA_SERVER_LOCK": _bool("BOZKA_SERVER_LOCK", True),
        "BOZKA_MAX_JSON_BODY": int(os.environ.get("BOZKA_MAX_JSON_BODY", str(4 * 1024))),
    }
