"""Admins give and take a campaign's organisers (services/organisers.py)."""
from flask import flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_login import current_user
from sqlalchemy import select

from ..auth.forms import PostForm
from ..extensions import db
from ..models import User
from ..services import organisers
from ..services.security import audit
from ..web import role_required
from .blueprint import bp
from .forms import OrganiserForm
from .views import campaign_or_404


@bp.route("/c/<slug>/organisers")
@role_required("admin")
def campaign_organisers(slug):
    campaign = campaign_or_404(slug)
    others = db.session.scalars(select(User.username).where(User.role == "organiser").order_by(User.username)).all()
    return render_template("organiser/organisers.html", campaign=campaign, people=organisers.organisers_of(campaign),
                           organiser_names=others, form=OrganiserForm(), post_form=PostForm())


@bp.route("/c/<slug>/organisers/add", methods=["POST"])
@role_required("admin")
def add_organiser(slug):
    campaign = campaign_or_404(slug)
    form = OrganiserForm()
    if form.validate_on_submit():
        user = db.session.scalar(select(User).where(User.username == form.username.data.strip()))
        if user is None or user.role != "organiser":
            flash(_("No organiser account has this username (an admin manages every campaign already)."), "error")
        elif organisers.give(campaign, user):
            audit(current_user, "campaign.organiser_add", campaign.slug, username=user.username)
            db.session.commit()
            flash(_("%(name)s now manages this campaign.", name=user.username), "info")
        else:
            flash(_("%(name)s manages this campaign already.", name=user.username), "info")
    else:
        flash(_("Give the username of an organiser."), "error")
    return redirect(url_for("organiser.campaign_organisers", slug=slug))


@bp.route("/c/<slug>/organisers/<int:user_id>/remove", methods=["POST"])
@role_required("admin")
def remove_organiser(slug, user_id):
    campaign = campaign_or_404(slug)
    user = db.session.get(User, user_id)
    if PostForm().validate_on_submit() and user is not None and organisers.take(campaign, user):
        audit(current_user, "campaign.organiser_remove", campaign.slug, username=user.username)
        db.session.commit()
        flash(_("%(name)s no longer manages this campaign.", name=user.username), "info")
    else:
        db.session.rollback()
        flash(_("This organiser does not manage this campaign."), "error")
    return redirect(url_for("organiser.campaign_organisers", slug=slug))
