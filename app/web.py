"""Small helpers shared by the blueprints' views."""
from functools import wraps

from flask import abort, current_app
from flask_login import current_user
from sqlalchemy import select

from .extensions import db
from .models import Campaign, Participation


def find_campaign(slug):
    """The campaign a visitor may see (drafts only to organisers), or None."""
    campaign = db.session.scalar(select(Campaign).where(Campaign.slug == slug))
    if campaign is not None and campaign.status == "draft" and not (
        current_user.is_authenticated and current_user.role == "organiser"
    ):
        return None
    return campaign


def campaign_or_404(slug):
    campaign = find_campaign(slug)
    if campaign is None:
        abort(404)
    return campaign


def participation_of(user, campaign):
    if not user.is_authenticated:
        return None
    return db.session.scalar(
        select(Participation).where(
            Participation.user_id == user.id, Participation.campaign_id == campaign.id
        )
    )


def rng():
    return current_app.extensions["bozka_rng"]


def role_required(*roles):
    def decorator(view):
        @wraps(view)
        def wrapped(*args, **kwargs):
            if not current_user.is_authenticated:
                return current_app.login_manager.unauthorized()
            if current_user.role not in roles:
                abort(403)
            return view(*args, **kwargs)

        return wrapped

    return decorator
