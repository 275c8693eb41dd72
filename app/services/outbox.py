"""Email through an outbox: a request only adds a row (in its own
transaction); a background sender (app/mail_sender.py) delivers it with
retries. So no request waits for, or fails with, the mail server, and what
a request answers never depends on whether a mail was sent.

Delivery is the standard library's smtplib with email.message: one SMTP
conversation per mail is all Bozka needs, so no mail package is added.
"""
import logging
import smtplib
from datetime import timedelta
from email.message import EmailMessage

from sqlalchemy import func, select, update

from ..database import while_busy
from ..extensions import db
from ..models import OutboxMail, utcnow

log = logging.getLogger("bozka.mail")

BATCH = 20  # mails one pass of a sender looks at
STALE_CLAIM = timedelta(minutes=15)  # a sender that died while sending: try again


def enqueue(recipient, subject, body, reply_to=None):
    """Add a mail to the session (the caller commits it with its own work);
    ``reply_to``: where the recipient's answer goes, if not to the sender."""
    mail = OutboxMail(recipient=recipient, subject=str(subject), body=str(body), reply_to=reply_to or None)
    db.session.add(mail)
    return mail


def retry_delay(config, attempts):
    """Seconds before the next try after ``attempts`` tries: doubling, at most an hour."""
    return min(float(config["MAIL_RETRY_SECONDS"]) * 2 ** (attempts - 1), 3600.0)


def is_permanent(exc):
    """A 5xx answer (unknown recipient, refused sender, bad login): trying again will not help."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        return True
    return isinstance(exc, smtplib.SMTPResponseException) and exc.smtp_code >= 500


def deliver(config, recipient, subject, body, reply_to=None):
    """Send one mail through SMTP when configured; otherwise write it to the log."""
    if not config.get("MAIL_SERVER"):
        answer = f"Reply-To: {reply_to}\n" if reply_to else ""
        log.warning("Email (no SMTP configured) to %s: %s\n%s%s", recipient, subject, answer, body)
        return
    message = message_of(config["MAIL_SENDER"], recipient, subject, body, reply_to)
    with smtplib.SMTP(config["MAIL_SERVER"], config["MAIL_PORT"], timeout=config["MAIL_TIMEOUT"]) as smtp:
        if config.get("MAIL_USE_TLS"):
            smtp.starttls()
        if config.get("MAIL_USERNAME"):
            smtp.login(config["MAIL_USERNAME"], config["MAIL_PASSWORD"])
        smtp.send_message(message)


def message_of(sender, recipient, subject, body, reply_to=None):
    """The email as sent: From, To, Subject, and Reply-To when given."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = recipient
    if reply_to:
        message["Reply-To"] = reply_to
    message["Subject"] = subject
    message.set_content(body)
    return message


def claim(mail_id, now):
    """Take a queued mail for this sender: True for exactly one of several
    senders (processes or threads) trying at once."""
    taken = db.session.execute(
        update(OutboxMail)
        .where(OutboxMail.id == mail_id, OutboxMail.status == "queued")
        .values(status="sending", claimed_at=now, attempts=OutboxMail.attempts + 1)
    ).rowcount == 1
    db.session.commit()
    return taken


def send_due(config, now=None):
    """Send the queued mails whose time has come; returns how many were sent.
    The database is written only in short transactions, never during SMTP,
    and only when there is something to write: a write that finds SQLite
    busy (a judgment holding the lock) waits as a request's would
    (``while_busy``) rather than failing the pass."""
    now = now or utcnow()
    stale = db.session.scalars(
        select(OutboxMail.id)
        .where(OutboxMail.status == "sending", OutboxMail.claimed_at < now - STALE_CLAIM)
        .limit(BATCH)
    ).all()
    db.session.commit()  # the reads' transaction: none is kept open through the pass
    if stale:
        while_busy(lambda: release(stale, now - STALE_CLAIM))
    due = db.session.scalars(
        select(OutboxMail.id)
        .where(OutboxMail.status == "queued", OutboxMail.next_attempt_at <= now)
        .order_by(OutboxMail.id)
        .limit(BATCH)
    ).all()
    db.session.commit()
    sent = 0
    for mail_id in due:
        if not while_busy(lambda: claim(mail_id, now)):
            continue  # another sender has it
        mail = db.session.get(OutboxMail, mail_id)
        try:
            deliver(config, mail.recipient, mail.subject, mail.body, mail.reply_to)
        except (smtplib.SMTPException, OSError) as exc:
            while_busy(lambda: (record_failure(config, mail, exc, utcnow()), db.session.commit()))
        else:
            while_busy(lambda: mark_sent(mail))
            sent += 1
    return sent


def release(mail_ids, claimed_before):
    """Queue again the mails a sender claimed and never finished (still so:
    another sender may have released and claimed one meanwhile)."""
    db.session.execute(
        update(OutboxMail)
        .where(OutboxMail.id.in_(mail_ids), OutboxMail.status == "sending",
               OutboxMail.claimed_at < claimed_before)
        .values(status="queued")
    )
    db.session.commit()


def mark_sent(mail):
    mail.status, mail.sent_at = "sent", utcnow()
    db.session.commit()


def record_failure(config, mail, exc, now):
    """Keep the error; queue the mail again later, or give up after the last try."""
    mail.last_error = f"{type(exc).__name__}: {exc}"[:1000]
    mail.last_error_at = now
    if is_permanent(exc) or mail.attempts >= int(config["MAIL_MAX_ATTEMPTS"]):
        mail.status = "failed"
        log.error("Email %d to %s failed for good after %d tries: %s", mail.id, mail.recipient, mail.attempts,
                  mail.last_error)
    else:
        mail.status = "queued"
        mail.next_attempt_at = now + timedelta(seconds=retry_delay(config, mail.attempts))
        log.warning("Email %d to %s not sent (try %d), trying again at %s: %s", mail.id, mail.recipient,
                    mail.attempts, mail.next_attempt_at.isoformat(timespec="seconds"), mail.last_error)


def problems(latest=5):
    """What organisers see: {"failed": count given up, "retrying": count
    waiting for another try after an error, "latest": the latest errors,
    newest first (OutboxMail rows)}."""
    counts = dict(
        db.session.execute(
            select(OutboxMail.status, func.count())
            .where(OutboxMail.last_error.is_not(None), OutboxMail.status.in_(("failed", "queued", "sending")))
            .group_by(OutboxMail.status)
        ).all()
    )
    rows = db.session.scalars(
        select(OutboxMail)
        .where(OutboxMail.last_error.is_not(None), OutboxMail.status != "sent")
        .order_by(OutboxMail.last_error_at.desc())
        .limit(latest)
    ).all()
    return {"failed": counts.get("failed", 0),
            "retrying": counts.get("queued", 0) + counts.get("sending", 0), "latest": rows}
