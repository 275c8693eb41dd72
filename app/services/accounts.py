"""Accounts: creation, signed email tokens and mail delivery."""
import hashlib
import logging
import smtplib
from email.message import EmailMessage

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from sqlalchemy import func, select

from ..extensions import db
from ..models import Participation, User, utcnow
from . import names

log = logging.getLogger("bozka.mail")


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


def username_problem(username):
    """Why a new account cannot have this username: "taken" (the same name in
    any case), "lookalike" (an existing name has its TR39 skeleton, one
    indexed look-up) or "mixed_scripts"; None if it can."""
    name = username.strip()
    if db.session.scalar(select(User.id).where(func.lower(User.username) == name.lower())):
        return "taken"
    if db.session.scalar(select(User.id).where(User.username_skeleton == names.skeleton(name)).limit(1)):
        return "lookalike"
    if names.mixes_scripts(name):
        return "mixed_scripts"
    return None


def create_user(email, username, password, role="volunteer", **profile):
    user = User(email=email.strip().lower(), username=username.strip(), role=role, **profile)
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
    return participation


def send_email(config, to, subject, body):
    """Send through SMTP when configured; otherwise write it to the log."""
    if not config.get("MAIL_SERVER"):
        log.warning("Email (no SMTP configured) to %s: %s\n%s", to, subject, body)
        return
    message = EmailMessage()
    message["From"] = config["MAIL_SENDER"]
    message["To"] = to
    message["Subject"] = subject
    message.set_content(body)
    with smtplib.SMTP(config["MAIL_SERVER"], config["MAIL_PORT"], timeout=20) as smtp:
        if config.get("MAIL_USE_TLS"):
            smtp.starttls()
        if config.get("MAIL_USERNAME"):
            smtp.login(config["MAIL_USERNAME"], config["MAIL_PASSWORD"])
        smtp.send_message(message)
