"""Organisers' announcements: sent live to connected volunteers
(``realtime.announce``) and kept, so a volunteer who opens the judging page
later sees the latest one until they dismiss it, a newer one replaces it, or
it expires."""
from datetime import timedelta

from sqlalchemy import select

from ..extensions import db
from ..models import Announcement

LIFETIME = timedelta(days=7)


def publish(campaign_id, text, user_id, now, lifetime=LIFETIME):
    """Keep a new announcement (it replaces the previous ones); the caller commits."""
    announcement = Announcement(campaign_id=campaign_id, text=text, created_by=user_id, created_at=now,
                                expires_at=now + lifetime)
    db.session.add(announcement)
    db.session.flush()  # its id goes out with the live message
    return announcement


def latest(campaign_id, now):
    """The campaign's newest announcement that has not expired, or None."""
    return db.session.scalar(
        select(Announcement)
        .where(Announcement.campaign_id == campaign_id, Announcement.expires_at > now)
        .order_by(Announcement.id.desc())
        .limit(1)
    )


def shown(announcement, seen_id):
    """Whether a volunteer who dismissed announcement ``seen_id`` (None:
    none) is shown ``announcement``: only newer ones are."""
    return announcement is not None and (seen_id is None or announcement.id > seen_id)


def for_volunteer(campaign_id, seen_id, now):
    """The announcement to show a volunteer, or None."""
    announcement = latest(campaign_id, now)
    return announcement if shown(announcement, seen_id) else None


def dismiss(participation, announcement_id):
    """The volunteer has read the announcement (and every older one); an id
    that is not one of the campaign's announcements changes nothing. The
    caller commits."""
    announcement = db.session.get(Announcement, announcement_id)
    if announcement is None or announcement.campaign_id != participation.campaign_id:
        return False
    if shown(announcement, participation.announcement_seen_id):
        participation.announcement_seen_id = announcement.id
    return True
