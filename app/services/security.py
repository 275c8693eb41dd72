"""Security rules as plain functions: passwords, audit log, hashed addresses."""
import hashlib
import hmac
import os
from functools import lru_cache

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
