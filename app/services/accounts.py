"""Accounts: creation and signed email tokens (mail goes through services/outbox.py)."""
import hashlib
from types import SimpleNamespace

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from sqlalchemy import func, select
from werkzeug.security import generate_password_hash

from ..extensions import db
from ..models import Campaign, Participation, User, utcnow
from . import names
from .counters import count_for_campaign


def _fingerprint(user):
    """Changes when the password or confirmation changes: single-use tokens."""
    state = f"{user.password_hash}|{user.email_confirmed_at}|{user.email}"
    return hashlib.sha256(state.encode()).hexdigest()[:16]


def make_token(secret_key, purpose, user):
    serializer = URLSafeTimedSerializer(secret_key, salt=f"bozka-{purpose}")
    return serializer.dumps({"u": user.id, "f": _fingerprint(user)})


def read_token(secret_key, purpose, token, max_age):
    """The user a token was made for, or None if invalid, expired or used."""
    serializer = URLSafeTimedSerializer(secret_key, salt=f"bozka-{purpose}")
    try:
        data = serializer.loads(token, max_age=max_age)
    except (BadSignature, SignatureExpired):
        return None
    if not isinstance(data, dict):
        return None
    user = db.session.get(User, data.get("u"))
    if user is None or data.get("f") != _fingerprint(user):
        return None
    return user


def signed_user(secret_key, purpose, token):
    """The user a token we signed names, used or expired alike, or None:
    only the holder of a real link learns anything from it."""
    try:
        data = URLSafeTimedSerializer(secret_key, salt=f"bozka-{purpose}").loads(token)
    except BadSignature:
        return None
    return db.session.get(User, data.get("u")) if isinstance(data, dict) else None


def username_problem(username):
    """Why a new account cannot have this username (compared in NFKC):
    "invisible" (a character that shows nothing: a Hangul filler, a
    zero-width or format character, a space), "taken" (the same name in any
    case), "lookalike" (an existing name has its TR39 skeleton, one indexed
    look-up) or "mixed_scripts"; None if it can."""
    name = names.normalise(username)
    if names.has_invisible(name):
        return "invisible"
    if db.session.scalar(select(User.id).where(func.lower(User.username) == name.lower())):
        return "taken"
    if db.session.scalar(select(User.id).where(User.username_skeleton == names.skeleton(name)).limit(1)):
        return "lookalike"
    if names.mixes_scripts(name):
        return "mixed_scripts"
    return None


def account_for(email):
    """The account registered with this address, else the one whose address
    reaches the same mailbox (``names.email_key``), else None."""
    email = email.strip().lower()
    return (db.session.scalar(select(User).where(User.email == email))
            or db.session.scalar(select(User).where(User.email_key == names.email_key(email))))


def create_user(email, username, password, role="volunteer", **profile):
    user = User(email=email.strip().lower(), username=names.normalise(username), role=role, **profile)
    user.set_password(password)
    db.session.add(user)
    db.session.flush()
    return user


def join_campaign(user, campaign, source_level, target_level, now=None):
    participation = Participation(
        campaign_id=campaign.id,
        user_id=user.id,
        source_level=source_level,
        target_level=target_level,
        consent_at=now or utcnow(),
    )
    db.session.add(participation)
    db.session.flush()
    count_for_campaign(campaign.id, volunteers=1)
    return participation


def register_volunteer(email, username, password, campaign, source_level, target_level, **profile):
    """(the new account, None), or (None, the existing account) when the email
    or another address of the same mailbox (``user+tag@``, Gmail's dots) is
    taken: then nothing is created, but the password is hashed all the same,
    so that both answers take as long."""
    existing = account_for(email)
    if existing is not None:
        generate_password_hash(password, method="scrypt")  # as User.set_password does
        return None, existing
    user = create_user(email, username, password, **profile)
    join_campaign(user, campaign, source_level, target_level)
    return user, None


def campaign_ids(user_id):
    """The campaigns the account takes part in."""
    return db.session.scalars(select(Participation.campaign_id).where(Participation.user_id == user_id)).all()


def stand_in(email):
    """Something to make a token for when no account has ``email``: the reset
    request then does the same work for unknown addresses as for known ones."""
    return SimpleNamespace(id=0, email=email, password_hash="", email_confirmed_at=None)


STAFF_ROLES = ("organiser", "researcher", "admin")


def landing(user_id, role):
    """Where a person goes after logging in or confirming their email when
    nothing else was asked: ("organiser", None) for staff (their campaigns),
    ("campaign", slug) for a volunteer in exactly one campaign that is not a
    draft, else ("home", None)."""
    if role in STAFF_ROLES:
        return "organiser", None
    slugs = db.session.scalars(
        select(Campaign.slug)
        .join(Participation, Participation.campaign_id == Campaign.id)
        .where(Participation.user_id == user_id, Campaign.status != "draft")
        .limit(2)
    ).all()
    return ("campaign", slugs[0]) if len(slugs) == 1 else ("home", None)
