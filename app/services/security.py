"""Security rules as plain functions: passwords, audit log, hashed addresses."""
import getpass
import hashlib
import hmac
import os
import secrets
from functools import lru_cache

from werkzeug.security import check_password_hash, generate_password_hash

from ..extensions import db
from ..models import AuditLog, utcnow

MIN_PASSWORD = 8
_COMMON = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "common-passwords.txt")


@lru_cache(maxsize=1)
def common_passwords():
    with open(_COMMON, encoding="utf-8") as handle:
        return frozenset(line.strip() for line in handle if line.strip() and not line.startswith("#"))


def password_problem(password, username=None, email=None):
    """Why a password is refused, or None."""
    if len(password) < MIN_PASSWORD:
        return "short"
    lowered = password.lower()
    if lowered in common_passwords() or len(set(password)) < 3:
        return "common"
    if username and lowered == username.lower() or email and lowered == email.lower():
        return "personal"
    return None


@lru_cache(maxsize=1)
def _stand_in_hash():
    return generate_password_hash(secrets.token_hex(16), method="scrypt")


def authenticate(user, password):
    """True when ``password`` is the user's. With no user, a stand-in hash is
    checked all the same, so an unknown email takes as long as a wrong
    password and the answer tells nothing about which emails exist."""
    if user is None:
        check_password_hash(_stand_in_hash(), password)
        return False
    return user.check_password(password)


def user_from_session_id(value, get_user):
    """The user a session names, or None when the password has changed or
    the account logged out since."""
    user_id, _sep, digest = str(value).partition(":")
    if not user_id.isdigit() or not digest:
        return None
    user = get_user(int(user_id))
    if user is None or not hmac.compare_digest(user.get_id(), f"{user_id}:{digest}"):
        return None
    return user


def visible_text_problem(text):
    """Why a text people will read (an announcement) is refused, or None:
    control characters, or nothing visible at all."""
    import unicodedata

    if any(unicodedata.category(c) == "Cc" and c not in "\t\n\r" for c in text):
        return "control"
    if not any(unicodedata.category(c)[0] not in "CZ" for c in text):
        return "empty"
    return None


def address_hash(secret_key, address):
    """A keyed hash of a client address: comparable, never exported or shown."""
    if not address:
        return None
    return hmac.new(secret_key.encode(), address.encode(), hashlib.sha256).hexdigest()[:20]


def audit(user, action, target="", **details):
    """Record an organiser's or researcher's action (who, what, when)."""
    db.session.add(
        AuditLog(user_id=user.id if user else None, username=user.username if user else None,
                 action=action, target=str(target)[:200], details=details or None, at=utcnow())
    )


COMMAND_LINE = "command_line"  # the detail that names a command's system user (the audit page shows it)


def audit_command(action, target="", **details):
    """Record a change made by a command in the terminal (``flask raffle
    draw``...): no account made it, so the entry names the command line and
    the system user who ran it."""
    audit(None, action, target, **{COMMAND_LINE: system_user()}, **details)


def system_user():
    """The operating system's user running this process ("?" when it has no name)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name and no passwd entry (some containers)
        return "?"
