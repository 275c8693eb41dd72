import os

from flask import (Response, abort, current_app, flash, redirect, render_template, request, send_from_directory,
                   url_for)
from flask_babel import gettext as _
from flask_login import current_user
from sqlalchemy import func, select

from .. import protocols, realtime
from ..choices import CAMPAIGN_STATUSES, ROLES, label
from ..extensions import db
from ..models import Participation, User, utcnow
from ..models import AuditLog
from ..auth.forms import USERNAME_PROBLEMS, PostForm
from ..services import (accounts, announcements, dashboard, export, lifecycle, organisers, outbox, prizes, raffle,
                        reports, review, suspicious)
from ..services.security import audit
from ..web import find_campaign, role_required
from .blueprint import bp
from .forms import AccountForm, AnnouncementForm, CommitForm, DismissForm, DrawForm, NotifyForm, StatusForm

STAFF = ("organiser", "researcher")


def campaign_or_404(slug):
    """The campaign at ``slug`` if the user may open its staff pages
    (services/organisers.may_open): another organiser's campaign is 404,
    as one that does not exist. Every view of a campaign loads it here."""
    campaign = find_campaign(slug)
    if not organisers.may_open(current_user, campaign):
        abort(404)
    return campaign


@bp.context_processor
def _access():
    # Templates show names and forms only where the user manages the campaign.
    return {"manages": lambda campaign: organisers.may_manage(current_user, campaign)}


@bp.route("/")
@role_required(*STAFF)
def index():
    volunteers = dict(
        db.session.execute(
            select(Participation.campaign_id, func.count()).group_by(Participation.campaign_id)
        ).all()
    )
    campaigns = db.session.scalars(organisers.campaigns_for(current_user)).all()
    mail = outbox.problems() if current_user.role in ("organiser", "admin") else None
    return render_template("organiser/index.html", campaigns=campaigns, volunteers=volunteers, mail=mail,
                           stages=lifecycle.stages(campaigns, utcnow()))


@bp.route("/c/<slug>/")
@role_required(*STAFF)
def campaign(slug):
    campaign = campaign_or_404(slug)
    forms = {}
    manages = organisers.may_manage(current_user, campaign)
    now = utcnow()
    life = lifecycle.of(campaign, now)
    if manages:
        forms = {
            "status": StatusForm(obj=campaign),
            "announce": AnnouncementForm(),
            "commit": CommitForm(),
            "draw": DrawForm(),
        }
        forms["status"].status.choices = lifecycle.statuses_offered(campaign, life.record)
    return render_template(
        "organiser/dashboard.html", campaign=campaign, data=dashboard.summary(campaign, now),
        life=life, forms=forms, exports=export.offered(campaign),
        reports=reports.campaign_reports(campaign, names=manages),
    )


@bp.route("/c/<slug>/panel")
@role_required(*STAFF)
def panel(slug):
    """The dashboard's figures alone: fetched again on every live update."""
    campaign = campaign_or_404(slug)
    return render_template("organiser/_panel.html", campaign=campaign, data=dashboard.summary(campaign, utcnow()))


@bp.route("/c/<slug>/status", methods=["POST"])
@role_required("organiser")
def set_status(slug):
    campaign = campaign_or_404(slug)
    form = StatusForm()
    if form.validate_on_submit():
        try:
            lifecycle.set_schedule(campaign, form.status.data, form.starts_at.data, form.ends_at.data, utcnow())
        except lifecycle.Refused as exc:
            db.session.rollback()
            flash(str(exc), "error")
        else:
            audit(current_user, "campaign.status", campaign.slug, status=campaign.status,
                  starts_at=str(campaign.starts_at or ""), ends_at=str(campaign.ends_at or ""))
            db.session.commit()
            realtime.touch(campaign.id)
            flash(_("Campaign saved: %(status)s.", status=label(CAMPAIGN_STATUSES, campaign.status)), "info")
    else:
        _flash_errors(form)
    return redirect(url_for("organiser.campaign", slug=slug))


def _flash_errors(form):
    """Why a form was refused, field by field (the dashboard redirects back)."""
    for field in form:
        for error in field.errors:
            flash(_("%(field)s: %(error)s", field=field.label.text, error=error), "error")


@bp.route("/c/<slug>/announce", methods=["POST"])
@role_required("organiser")
def announce(slug):
    campaign = campaign_or_404(slug)
    form = AnnouncementForm()
    if form.validate_on_submit():
        text = form.text.data.strip()
        announcement = announcements.publish(campaign.id, text, current_user.id, utcnow())
        audit(current_user, "campaign.announce", campaign.slug, text=text)
        announcement_id = announcement.id
        db.session.commit()
        realtime.announce(campaign.id, text, announcement_id)
        flash(_("Announcement sent."), "info")
    else:
        _flash_errors(form)
    return redirect(url_for("organiser.campaign", slug=slug))


@bp.route("/c/<slug>/raffle/commit", methods=["POST"])
@role_required("organiser")
def raffle_commit(slug):
    campaign = campaign_or_404(slug)
    form = CommitForm()
    if not form.validate_on_submit():
        _flash_errors(form)
        return redirect(url_for("organiser.campaign", slug=slug))
    seed = None if form.seed_sha256.data else raffle.new_seed()
    try:
        record = raffle.commit(campaign, form.seed_sha256.data or raffle.sha256_hex(seed), current_user.id, utcnow(),
                               beacon=form.beacon.data, beacon_at=form.beacon_at.data)
        audit(current_user, "raffle.commit", campaign.slug, sha256=record.seed_sha256, beacon=record.beacon,
              beacon_at=str(record.beacon_at))
        db.session.commit()
    except raffle.RaffleError as exc:
        db.session.rollback()
        flash(str(exc), "error")
        return redirect(url_for("organiser.campaign", slug=slug))
    return render_template("organiser/seed.html", campaign=campaign, seed=seed)


@bp.route("/c/<slug>/raffle/draw", methods=["POST"])
@role_required("organiser")
def raffle_draw(slug):
    campaign = campaign_or_404(slug)
    form = DrawForm()
    if form.validate_on_submit():
        try:
            record = raffle.draw(campaign, form.seed.data.strip(), form.prizes.data, utcnow(), beacon=form.beacon.data)
            audit(current_user, "raffle.draw", campaign.slug, prizes=record.prizes, beacon=record.beacon_value,
                  winners=record.winners)
            db.session.commit()
            flash(_("The raffle was drawn."), "info")
        except raffle.RaffleError as exc:
            db.session.rollback()
            flash(str(exc), "error")
    else:
        _flash_errors(form)
    return redirect(url_for("organiser.campaign", slug=slug))


@bp.route("/c/<slug>/raffle/winners")
@role_required("organiser")
def raffle_winners(slug):
    """Who won and how to reach them: organisers only, and each look is audited."""
    campaign = campaign_or_404(slug)
    found = prizes.winners(campaign)
    audit(current_user, "raffle.winners", campaign.slug, usernames=[w["username"] for w in found])
    db.session.commit()
    return render_template("organiser/winners.html", campaign=campaign, winners=found, form=NotifyForm(),
                           life=lifecycle.of(campaign, utcnow()))


@bp.route("/c/<slug>/raffle/notify", methods=["POST"])
@role_required("organiser")
def raffle_notify(slug):
    campaign = campaign_or_404(slug)
    form = NotifyForm()
    if form.validate_on_submit():
        link = url_for("volunteer.raffle_page", slug=slug, _external=True)
        note = (form.note.data or "").strip()
        try:
            entry = prizes.notify(campaign, form.prize.data, current_app.config, link, note, utcnow(),
                                  reply_to=current_user.email)
            audit(current_user, "raffle.notify", campaign.slug, prize=entry["prize"], username=entry["username"])
            db.session.commit()
            flash(_("The email to the winner of prize %(prize)d is queued: the Campaigns page shows any email "
                    "that could not be sent.", prize=entry["prize"]), "info")
        except raffle.RaffleError as exc:
            db.session.rollback()
            flash(str(exc), "error")
    else:
        _flash_errors(form)
    return redirect(url_for("organiser.raffle_winners", slug=slug))


@bp.route("/c/<slug>/export/<kind>.<fmt>")
@role_required(*STAFF)
def export_file(slug, kind, fmt):
    campaign = campaign_or_404(slug)
    if kind not in export.KINDS or fmt not in export.FORMATS:
        abort(404)
    try:
        export.check(campaign, kind, fmt)
    except export.ExportError as exc:
        return render_template("error.html", title=_("Not found"), message=str(exc)), 404
    audit(current_user, "export", campaign.slug, kind=kind, format=fmt)
    db.session.commit()
    mimetype = {"csv": "text/csv", "jsonl": "application/x-ndjson", "tsv": "text/tab-separated-values"}[fmt]
    # The body streams after this view returns: plain values and the engine, no session.
    body = export.stream(export.source(campaign), kind, fmt, db.engine)
    return Response(body, mimetype=mimetype, headers={
        "Content-Disposition": f'attachment; filename="{campaign.slug}-{kind}.{fmt}"',
    })


# The documents a staff page links to, served as they are in docs/ (plain
# text: Markdown reads well as it is, and the site needs no renderer for it).
DOCUMENTS = ("export-format.md", "analysis.md")


@bp.route("/docs/<name>")
@role_required(*STAFF)
def document(name):
    if name not in DOCUMENTS:
        abort(404)
    folder = os.path.join(os.path.dirname(current_app.root_path), "docs")
    return send_from_directory(folder, name, mimetype="text/plain")


@bp.route("/accounts", methods=["GET", "POST"])
@role_required("admin")
def accounts_page():
    form = AccountForm()
    if form.validate_on_submit():
        email = form.email.data.strip().lower()
        if accounts.account_for(email) is not None:  # this address or another of its mailbox
            flash(_("An account with this email or username exists."), "error")
        elif problem := accounts.username_problem(form.username.data):
            form.username.errors.append(USERNAME_PROBLEMS[problem])
        else:
            user = accounts.create_user(email, form.username.data, form.password.data, role=form.role.data)
            user.email_confirmed_at = utcnow()
            audit(current_user, "account.create", user.username, role=user.role)
            db.session.commit()
            flash(_("Account created: %(name)s (%(role)s).", name=user.username, role=label(ROLES, user.role)), "info")
            return redirect(url_for("organiser.accounts_page"))
    staff = db.session.scalars(select(User).where(User.role.in_(accounts.STAFF_ROLES)).order_by(User.username)).all()
    return render_template("organiser/accounts.html", form=form, staff=staff)


@bp.route("/c/<slug>/suspicious")
@role_required("organiser")
def suspicious_report(slug):
    """Patterns worth a look; organisers decide, nothing is punished here."""
    campaign = campaign_or_404(slug)
    return render_template("organiser/suspicious.html", campaign=campaign, report=suspicious.report(campaign),
                           held=review.held_volunteers(campaign), signs=protocols.of(campaign).SIGNS)


@bp.route("/c/<slug>/volunteer/<int:participation_id>")
@role_required("organiser")
def volunteer(slug, participation_id):
    """One volunteer's profile, controls, signs, tickets and judgments."""
    campaign = campaign_or_404(slug)
    participation = review.participation_in(campaign, participation_id)
    if participation is None:
        abort(404)
    record = review.volunteer_record(campaign, participation)
    # The page shows personal data (the email): who looked is on record.
    audit(current_user, "volunteer.view", campaign.slug, participation=participation_id)
    db.session.commit()
    now = utcnow()
    return render_template("organiser/volunteer.html", campaign=campaign, record=record,
                           judgments=review.page_of(record.judgments, request.args.get("page", 1, type=int)),
                           void_refused=review.void_refused(campaign, now),
                           clear_refused=review.clear_refused(campaign, now),
                           post_form=PostForm(), dismiss_form=DismissForm())


@bp.route("/c/<slug>/volunteer/<int:participation_id>/clear-hold", methods=["POST"])
@role_required("organiser")
def clear_hold(slug, participation_id):
    return _decide(slug, participation_id, PostForm(), "volunteer.clear_hold",
                   lambda campaign, participation: review.clear_hold(participation, utcnow()),
                   _("The hold is cleared."))


@bp.route("/c/<slug>/volunteer/<int:participation_id>/dismiss", methods=["POST"])
@role_required("organiser")
def dismiss(slug, participation_id):
    form = DismissForm()
    reason = (form.reason.data or "").strip()
    return _decide(slug, participation_id, form, "volunteer.dismiss",
                   lambda campaign, participation: review.dismiss(campaign, participation, reason, utcnow()),
                   _("The volunteer is dismissed."), reason=reason)


@bp.route("/c/<slug>/volunteer/<int:participation_id>/ticket/<int:number>/void", methods=["POST"])
@role_required("organiser")
def void_ticket(slug, participation_id, number):
    return _decide(slug, participation_id, PostForm(), "ticket.void",
                   lambda campaign, participation: review.void_ticket(campaign, participation, number, utcnow()),
                   _("Ticket %(number)s is void.", number=number), ticket=number)


def _decide(slug, participation_id, form, action, decision, done, **details):
    """An organiser's decision about a volunteer: run it on the locked
    participation, record it, commit, and tell the live pages. A refused
    one changes nothing and says why."""
    campaign = campaign_or_404(slug)
    page = url_for("organiser.volunteer", slug=slug, participation_id=participation_id)
    if not form.validate_on_submit():
        _flash_errors(form)
        return redirect(page)
    participation = review.locked_volunteer(campaign, participation_id)
    if participation is None:
        db.session.rollback()
        flash(_("This volunteer does not take part in this campaign."), "error")
        return redirect(url_for("organiser.suspicious_report", slug=slug))
    try:
        decision(campaign, participation)
    except review.ReviewError as exc:
        db.session.rollback()
        flash(str(exc), "error")
        return redirect(page)
    audit(current_user, action, campaign.slug, participation=participation_id, **details)
    campaign_id = campaign.id  # read now: the commit expires the campaign
    db.session.commit()
    realtime.touch(campaign_id, participation_id)
    flash(done, "info")
    return redirect(page)


@bp.route("/audit")
@role_required("admin")
def audit_log():
    entries = db.session.scalars(select(AuditLog).order_by(AuditLog.at.desc(), AuditLog.id.desc()).limit(500)).all()
    return render_template("organiser/audit.html", entries=entries)
