"""SQLite online backup and restore (the sqlite3 backup API)."""
import os
import sqlite3
from datetime import datetime, timezone

from .. import private


class BackupError(ValueError):
    pass


def default_path(instance_path):
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    folder = private.folder(os.path.join(instance_path, "backups"))
    return os.path.join(folder, f"bozka-{stamp}.sqlite3")


def _copy(source_path, target_path):
    source = sqlite3.connect(source_path, timeout=30)
    target = sqlite3.connect(target_path)
    try:
        with target:
            source.backup(target, pages=1024)  # in steps: writers are not blocked for long
    finally:
        target.close()
        source.close()


def backup_sqlite(database, path):
    """A consistent copy of a live database, WAL included, readable by its owner only."""
    try:
        private.new_file(path)  # SQLite would make it readable by all
    except FileExistsError:
        raise BackupError(f"{path} exists") from None
    _copy(database, path)
    return path


def restore_sqlite(path, database):
    check = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        if check.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            raise BackupError(f"{path} is damaged")
        if not check.execute("SELECT 1 FROM sqlite_master WHERE name = 'alembic_version'").fetchone():
            raise BackupError(f"{path} is not a Bozka database")
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{path}: {exc}") from None
    finally:
        check.close()
    private.database_file(database)
    _copy(path, database)
