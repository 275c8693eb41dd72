from flask import render_template
from sqlalchemy import func, select

from ..extensions import db
from ..models import Campaign, Participation
from ..web import role_required
from . import bp


@bp.route("/")
@role_required("organiser", "researcher")
def index():
    volunteers = dict(
        db.session.execute(
            select(Participation.campaign_id, func.count()).group_by(Participation.campaign_id)
        ).all()
    )
    campaigns = db.session.scalars(select(Campaign).order_by(Campaign.created_at)).all()
    return render_template("organiser/index.html", campaigns=campaigns, volunteers=volunteers)
