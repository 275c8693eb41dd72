"""Is a server using this SQLite database? Every server process holds a
shared advisory lock (``flock``) on a lock file beside the database, named
from the database file's real path, from the first request it serves until
it exits; ``flask restore`` takes the same lock exclusively, without
waiting, and refuses when it cannot.

The lock belongs to the database, not to an instance folder: a restore run
with another ``BOZKA_INSTANCE``, or through a symbolic link to the same
file, finds the same lock. The kernel drops a process's locks when it
exits, even on SIGKILL, so a crashed server leaves no stale lock. Commands
never serve a request, so they never take it; tests turn it off
(``BOZKA_SERVER_LOCK``). PostgreSQL needs none: ``flask restore`` refuses it
(pg_restore is the tool there). The database file itself is not locked:
closing any descriptor of it would drop SQLite's own POSIX locks.
"""
import contextlib
import fcntl
import os
import threading

from . import private

SUFFIX = "-server.lock"  # not SQLite's own ".lock", "-wal", "-shm" or "-journal"


class ServerRunning(RuntimeError):
    """A server holds the lock: ``pids`` are its processes, when Linux says."""

    def __init__(self, path, pids):
        super().__init__(path)
        self.path, self.pids = path, pids


def path_of(database):
    """The lock file of a SQLite database file: beside its real path, so
    every name of that file (relative, absolute, through a link) gives one lock."""
    return os.path.realpath(database) + SUFFIX


def sqlite_file(url):
    """The database file of an SQLAlchemy URL, or None if it is no SQLite file."""
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:" \
            or url.database.startswith("file:"):
        return None
    return url.database


def _open(database):
    # os.open: 0600 whatever the umask, and not inherited by child processes.
    return os.fdopen(os.open(path_of(database), os.O_RDWR | os.O_CREAT, private.FILE), "r+")


def hold_shared(database):
    """The open lock file, locked shared (it waits while a restore runs)."""
    handle = _open(database)
    fcntl.flock(handle, fcntl.LOCK_SH)
    return handle


@contextlib.contextmanager
def exclusive(database):
    """Held while no server uses ``database``; raises ServerRunning if one does."""
    with _open(database) as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            path = path_of(database)
            raise ServerRunning(path, holders(path)) from None
        yield


def holders(path):
    """The processes holding a lock on ``path``, from /proc/locks (Linux;
    elsewhere an empty list)."""
    info = os.stat(path)
    ours = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    try:
        with open("/proc/locks") as handle:
            fields = [line.split() for line in handle]
    except OSError:
        return []
    return sorted({int(row[4]) for row in fields if len(row) > 5 and row[1] == "FLOCK" and row[5] == ours})


class HoldWhileServing:
    """WSGI middleware: the first request of the process takes the shared lock."""

    def __init__(self, wsgi_app, database):
        self.wsgi_app, self.database = wsgi_app, database
        self.handle = None
        self._guard = threading.Lock()

    def __call__(self, environ, start_response):
        if self.handle is None:
            with self._guard:
                if self.handle is None:
                    self.handle = hold_shared(self.database)
        return self.wsgi_app(environ, start_response)

    def release(self):
        if self.handle is not None:
            self.handle.close()
            self.handle = None


def init_app(app):
    """Wrap the whole WSGI app, Socket.IO's requests included, when
    BOZKA_SERVER_LOCK is on and the database is a SQLite file."""
    from .extensions import db

    with app.app_context():
        database = sqlite_file(db.engine.url)  # Flask-SQLAlchemy's: a relative path is made absolute
    if app.config.get("BOZKA_SERVER_LOCK", True) and database:
        app.wsgi_app = HoldWhileServing(app.wsgi_app, database)
