"""Files only their owner reads: the instance folder (0700), the SQLite
database, its backups and the secret key (0600)."""
import os
import stat

from sqlalchemy.engine import make_url

FOLDER, FILE = 0o700, 0o600


def folder(path):
    """Make the folder 0700, or take group and others' rights from it."""
    os.makedirs(path, mode=FOLDER, exist_ok=True)
    tighten(path, FOLDER)
    return path


def new_file(path):
    """Create an empty file, 0600 whatever the umask; FileExistsError if it is there."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE))
    return path


def sqlite_files(url):
    """The database file of a SQLite URL made private (``database_file``)."""
    url = make_url(url)
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:" \
            and not url.database.startswith("file:"):
        database_file(url.database)


def database_file(path):
    """A SQLite database file made 0600, created so before SQLite creates it
    (SQLite gives its -wal and -shm files the database file's mode)."""
    try:
        new_file(path)
    except FileExistsError:
        for name in (path, path + "-wal", path + "-shm"):
            if os.path.exists(name):
                tighten(name, FILE)


def tighten(path, mode):
    """Clear the rights beyond ``mode`` of a file this process owns (another
    user's file is left as it is: chmod would fail)."""
    info = os.stat(path)
    current = stat.S_IMODE(info.st_mode)
    if info.st_uid == os.geteuid() and current & ~mode:
        os.chmod(path, current & mode)
