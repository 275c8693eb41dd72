"""Small helpers shared by the blueprints' views."""
from functools import wraps

from flask import abort, current_app, g, url_for
from flask_login import current_user
from sqlalchemy import bindparam, select
from sqlalchemy.orm import lazyload

from .extensions import db
from .models import Campaign, Participation
from .services import organisers


# Built once with bound parameters (SQLAlchemy compiles them once). The
# systems and the user are loaded only where they are used.
_CAMPAIGN_BY_SLUG = select(Campaign).where(Campaign.slug == bindparam("slug")).options(lazyload(Campaign.systems))
_PARTICIPATION = (
    select(Participation)
    .where(Participation.user_id == bindparam("user_id"), Participation.campaign_id == bindparam("campaign_id"))
    .options(lazyload(Participation.user))
)


def campaign_row(slug):
    """The campaign with this slug, whatever its status, or None."""
    return db.session.scalar(_CAMPAIGN_BY_SLUG, {"slug": slug})


def find_campaign(slug):
    """The campaign a visitor may see (drafts only to organisers), or None."""
    campaign = campaign_row(slug)
    g.bozka_campaign = campaign  # the interface language falls back to its default
    return campaign if campaign is not None and may_see(campaign, current_user) else None


def may_see(campaign, user):
    """Drafts only to those who manage them; every other campaign to anyone."""
    return campaign.status != "draft" or organisers.may_manage(user, campaign)


def campaign_or_404(slug):
    campaign = find_campaign(slug)
    if campaign is None:
        abort(404)
    return campaign


def participation_of(user, campaign):
    if not user.is_authenticated:
        return None
    return db.session.scalar(_PARTICIPATION, {"user_id": user.id, "campaign_id": campaign.id})


def rng():
    return current_app.extensions["bozka_rng"]


def role_required(*roles):
    """The view is for these roles (403 for others); an admin has every staff role."""
    def decorator(view):
        @wraps(view)
        def wrapped(*args, **kwargs):
            if not current_user.is_authenticated:
                return current_app.login_manager.unauthorized()
            if current_user.role not in roles and current_user.role != "admin":
                abort(403)
            return view(*args, **kwargs)

        return wrapped

    return decorator


def url_if_exists(endpoint, **values):
    """The URL of a page this site may or may not have (a template global), or None."""
    if endpoint not in current_app.view_functions:
        return None
    return url_for(endpoint, **values)
