"""Is a server using the database? Every server process holds a shared
advisory lock (``flock``) on ``server.lock`` in the instance folder, from the
first request it serves until it exits; ``flask restore`` takes the lock
exclusively, without waiting, and refuses when it cannot.

The kernel drops a process's locks when it exits, even on SIGKILL, so a
crashed server leaves no stale lock. Command-line commands never serve a
request, so they never take it; tests turn it off (``BOZKA_SERVER_LOCK``).
"""
import contextlib
import fcntl
import os
import threading

from . import private

NAME = "server.lock"


class ServerRunning(RuntimeError):
    """A server holds the lock: ``pids`` are its processes, when Linux says."""

    def __init__(self, path, pids):
        super().__init__(path)
        self.path, self.pids = path, pids


def path_of(instance_path):
    return os.path.join(instance_path, NAME)


def _open(instance_path):
    # os.open: 0600 whatever the umask, and not inherited by child processes.
    return os.fdopen(os.open(path_of(instance_path), os.O_RDWR | os.O_CREAT, private.FILE), "r+")


def hold_shared(instance_path):
    """The open lock file, locked shared (it waits while a restore runs)."""
    handle = _open(instance_path)
    fcntl.flock(handle, fcntl.LOCK_SH)
    return handle


@contextlib.contextmanager
def exclusive(instance_path):
    """Held while no server runs; raises ServerRunning if one does."""
    with _open(instance_path) as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            path = path_of(instance_path)
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

    def __init__(self, wsgi_app, instance_path):
        self.wsgi_app, self.instance_path = wsgi_app, instance_path
        self.handle = None
        self._guard = threading.Lock()

    def __call__(self, environ, start_response):
        if self.handle is None:
            with self._guard:
                if self.handle is None:
                    self.handle = hold_shared(self.instance_path)
        return self.wsgi_app(environ, start_response)

    def release(self):
        if self.handle is not None:
            self.handle.close()
            self.handle = None


def init_app(app):
    """Wrap the whole WSGI app, Socket.IO's requests included, when BOZKA_SERVER_LOCK is on."""
    if app.config.get("BOZKA_SERVER_LOCK", True):
        app.wsgi_app = HoldWhileServing(app.wsgi_app, app.instance_path)
