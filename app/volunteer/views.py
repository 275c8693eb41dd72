from flask import Response, abort, flash, jsonify, redirect, render_template, request, send_file, url_for
from flask_babel import get_locale, gettext as _, lazy_gettext as _l
from flask_login import current_user, login_required
from sqlalchemy import select

from ..auth.forms import JoinForm, PostForm, label_levels
from ..choices import by_live_rule
from ..languages import language_name
from ..limits import small_body
from ..extensions import db
from ..models import Campaign, utcnow
from .. import protocols, realtime
from ..services import accounts, announcements, assignment, evaluation, leaderboard, practice, raffle, reports
from ..services import raffle_rules
from ..services.raffle_rules import iso
from ..services.summary import participation_summary
from ..web import campaign_or_404, participation_of, rng
from .blueprint import bp
from .forms import DismissAnnouncementForm, ReportForm
from .texts import tickets_summary


@bp.route("/")
def home():
    campaigns = db.session.scalars(
        select(Campaign).where(Campaign.status != "draft").order_by(Campaign.created_at)
    ).all()
    if len(campaigns) == 1:
        return redirect(url_for("volunteer.campaign", slug=campaigns[0].slug))
    return render_template("volunteer/home.html", campaigns=campaigns)


@bp.route("/c/<slug>/")
def campaign(slug):
    campaign = campaign_or_404(slug)
    participation = participation_of(current_user, campaign)
    if participation is not None:
        return redirect(url_for("volunteer.welcome", slug=slug))
    return render_template("volunteer/campaign.html", campaign=campaign)


@bp.route("/c/<slug>/join", methods=["GET", "POST"])
@login_required
def join(slug):
    campaign = campaign_or_404(slug)
    if participation_of(current_user, campaign) is not None:
        return redirect(url_for("volunteer.welcome", slug=slug))
    form = label_levels(JoinForm(), campaign, language_name, str(get_locale()))
    if form.validate_on_submit():
        accounts.join_campaign(current_user, campaign, form.source_level.data, form.target_level.data)
        db.session.commit()
        realtime.touch(campaign.id)
        return redirect(url_for("volunteer.instructions", slug=slug))
    return render_template("volunteer/join.html", form=form, campaign=campaign)


@bp.route("/c/<slug>/welcome")
@login_required
def welcome(slug):
    campaign = campaign_or_404(slug)
    participation = participation_of(current_user, campaign)
    if participation is None:
        return redirect(url_for("volunteer.join", slug=slug))
    return render_template(
        "volunteer/welcome.html",
        campaign=campaign,
        summary=participation_summary(participation),
        mine=raffle.standing(campaign, participation, current_user),
        post_form=PostForm(),
        practice_items=practice.count(campaign.id),
        decided=protocols.decided(campaign),
        goal_reached=protocols.goal_reached(campaign),
    )


@bp.route("/c/<slug>/instructions")
def instructions(slug):
    campaign = campaign_or_404(slug)
    return render_template(
        "volunteer/instructions.html",
        campaign=campaign,
        participation=participation_of(current_user, campaign),
        practice_items=practice.count(campaign.id),
    )


@bp.route("/c/<slug>/practice", methods=["GET", "POST"])
@login_required
def practice_page(slug):
    """One practice item (``?n=``), or the feedback on an answer to it, as
    the campaign's protocol shows them; nothing is stored."""
    campaign = campaign_or_404(slug)
    if participation_of(current_user, campaign) is None:
        return redirect(url_for("volunteer.join", slug=slug))
    kind = protocols.practice(campaign.protocol)
    if kind is None:
        return redirect(url_for("volunteer.instructions", slug=slug))
    form = kind.form()
    answer = None
    if form.validate_on_submit():
        number, (state, answer) = form.number.data, kind.answered(form)
    else:
        if request.method == "POST":
            for field in form:  # the CSRF token's own error page covers its errors
                for error in field.errors if field.name != "csrf_token" else ():
                    flash(error, "error")
        number = form.number.data if form.number.data and not form.number.errors else request.args.get("n", 1, type=int)
        state = kind.begin(rng())
    shown = kind.show(campaign, number, state, get_locale())
    if shown is None:
        if not practice.count(campaign.id):
            return redirect(url_for("volunteer.instructions", slug=slug))
        return render_template("volunteer/practice_done.html", campaign=campaign)
    result = kind.result(shown, answer) if answer is not None else None
    return render_template(kind.TEMPLATE, campaign=campaign, shown=shown, form=kind.form_for(shown), result=result)


@bp.route("/c/<slug>/evaluate", methods=["GET", "POST"])
@login_required
def evaluate(slug):
    campaign = campaign_or_404(slug)
    participation = participation_of(current_user, campaign)
    if participation is None:
        return redirect(url_for("volunteer.join", slug=slug))
    protocol = protocols.of(campaign)
    form = protocol.form()
    if request.method == "POST" and form.validate_on_submit():
        step = judge(campaign, participation.id, form.token.data, protocol.form_answer(form))
        if step.status == "stale":
            flash(_("That answer was already recorded or is out of date; here is your current sentence."), "info")
        elif step.status == "closed":
            flash(_("The campaign closed before your answer arrived: it was not recorded."), "info")
        elif not step.counted:
            flash(_("That answer came faster than the sentences can be read: it is kept, but it does not count "
                    "toward the ranking or the raffle."), "info")
    else:
        for name, errors in form.errors.items() if request.method == "POST" else ():
            for error in errors if name not in ("token", "csrf_token") else ():
                flash(error, "error")
        step = evaluation.show(campaign, participation.id, utcnow(), rng())
    if step.status == "dismissed":
        return render_template("volunteer/dismissed.html", campaign=campaign, step=step,
                               by_rule=by_live_rule(step.dismissal_reason))
    if step.item is None:
        more_later = step.status == "finished" and assignment.more_may_come(campaign.id, participation.id)
        return render_template("volunteer/done.html", campaign=campaign, step=step, more_later=more_later,
                               goal_reached=step.status == "finished" and protocols.goal_reached(campaign))
    ranking = leaderboard.get(campaign.id)
    return render_template(
        "volunteer/evaluate.html",
        campaign=campaign,
        step=step,
        form=form.__class__(formdata=None, token=step.item.token),
        question=protocol.question(campaign),
        item_template=protocol.TEMPLATE,
        texts=protocol.payload(campaign, step.texts),
        board=ranking.public_payload(),
        me=ranking.personal_payload(participation.id, step.answered, step.held, step.tickets),
        report_form=ReportForm(formdata=None, item=step.item.token),
        announcement=announcements.for_volunteer(campaign.id, participation.announcement_seen_id, utcnow()),
        announcement_form=PostForm(),
    )


@bp.route("/c/<slug>/announcement/dismiss", methods=["POST"])
@login_required
def dismiss_announcement(slug):
    campaign = campaign_or_404(slug)
    participation = participation_of(current_user, campaign)
    form = DismissAnnouncementForm()
    if participation is not None and form.validate_on_submit():
        if announcements.dismiss(participation, form.announcement.data):
            db.session.commit()
    return redirect(url_for("volunteer.evaluate", slug=slug))


@bp.route("/c/<slug>/report", methods=["POST"])
@login_required
def report(slug):
    """Report the current item as broken: it is skipped, and the next one shown."""
    campaign = campaign_or_404(slug)
    form = ReportForm()
    if not form.validate_on_submit():
        for name, errors in form.errors.items():
            for error in errors if name not in ("item", "csrf_token") else ():
                flash(error, "error")
        return redirect(url_for("volunteer.evaluate", slug=slug))
    outcome = reports.report(campaign, current_user.id, form.item.data, form.reason.data, form.text.data, utcnow())
    if outcome is None:
        db.session.rollback()
        return redirect(url_for("volunteer.join", slug=slug))
    db.session.commit()
    flash(REPORT_MESSAGES[outcome.status], "error" if outcome.status == "refused" else "info")
    return redirect(url_for("volunteer.evaluate", slug=slug))


REPORT_MESSAGES = {
    "reported": _l("Thank you: the problem is reported to the organisers. Here is another sentence."),
    "stale": _l("That item is no longer yours to report; here is your current sentence."),
    "refused": _l("You have reported as many items as you may for now: please judge this one as best you can. "
                  "You may report another after a few more sentences."),
}


@bp.route("/c/<slug>/ranking-visibility", methods=["POST"])
@login_required
def ranking_visibility(slug):
    campaign = campaign_or_404(slug)
    form = PostForm()
    if form.validate_on_submit():
        current_user.hide_from_ranking = request.form.get("hide") == "1"
        db.session.commit()
        realtime.touch(campaign.id)
        flash(
            _("Your name is hidden from the public ranking.")
            if current_user.hide_from_ranking
            else _("Your name is shown in the public ranking."),
            "info",
        )
    back = "volunteer.evaluate" if request.form.get("back") == "evaluate" else "volunteer.welcome"
    return redirect(url_for(back, slug=slug))


@bp.route("/c/<slug>/api/item")
@small_body
@login_required
def api_item(slug):
    campaign = campaign_or_404(slug)
    step = evaluation.show(campaign, _me(), utcnow(), rng(), present=_summary_of(campaign))
    if step is None:
        abort(403)  # not joined
    return jsonify(step.presented)


@bp.route("/c/<slug>/api/judgment", methods=["POST"])
@small_body
@login_required
def api_judgment(slug):
    campaign = campaign_or_404(slug)
    answer = evaluation.well_formed_answer(campaign, request.get_json(silent=True))
    if answer is None:
        return jsonify({"status": "error", "message": _("Invalid answer.")}), 400
    step = judge(campaign, _me(), *answer, present=_summary_of(campaign))
    if step is None:
        abort(403)  # not joined
    return jsonify(step.presented)


def judge(campaign, who, token, choice, present=None):
    """Answer and serve the next item (``evaluation.answer``), then tell the
    live updates. ``who`` may be an ``evaluation.Volunteer``: None if they
    have not joined."""
    campaign_id = campaign.id  # read now: the step's commit expires the campaign
    step = evaluation.answer(campaign, who, token, choice, utcnow(), rng(), present=present)
    # An answer that finished the campaign or the day is news too ("finished", "capped").
    if step is not None and (step.changed or step.status == "dismissed"):
        realtime.touch(campaign_id, step.participation_id)  # the broadcast happens later, coalesced
    return step


def _me():
    """The logged-in volunteer, for the step's lock to find their participation."""
    return evaluation.Volunteer(current_user.id)


def _summary_of(campaign):
    """The JSON answer of a step, made inside its transaction (before the
    commit expires what it reads)."""
    def payload(step):
        made = evaluation.step_payload(campaign, step)
        made["mine"] = str(tickets_summary(step.answered, step.tickets, campaign.raffle_every, step.held,
                                           next_ticket=True, count=step.tickets_count))
        return made

    return payload


@bp.route("/c/<slug>/raffle")
def raffle_page(slug):
    campaign = campaign_or_404(slug)
    record, now = raffle.commitment(campaign), utcnow()
    participation = participation_of(current_user, campaign)
    return render_template("volunteer/raffle.html", campaign=campaign, record=record,
                           listed=raffle.published_now(campaign, now), frozen=raffle.frozen_at(campaign, record, now),
                           draw_from=raffle.draw_from(record),
                           mine=raffle.standing(campaign, participation, current_user, now) if participation else None)


@bp.route("/c/<slug>/raffle.json")
def raffle_record(slug):
    """Everything the raffle published, for scripts/verify_raffle.py."""
    campaign = campaign_or_404(slug)
    return jsonify(raffle.public_record(campaign, utcnow()))


@bp.route("/raffle/verify_raffle.py")
def verify_script():
    """The script that checks a draw (standard library only): the very file the site draws with."""
    return send_file(raffle_rules.SCRIPT, mimetype="text/x-python", as_attachment=True,
                     download_name="verify_raffle.py")


@bp.route("/c/<slug>/raffle/tickets.csv")
def raffle_tickets(slug):
    """The published ticket list; after the draw, the list the draw used."""
    campaign = campaign_or_404(slug)
    return Response(b"ticket,volunteer\n" + raffle.published_csv(campaign), mimetype="text/csv")


@bp.route("/c/<slug>/raffle/voids.csv")
def raffle_voids(slug):
    """Every voided ticket, in the order voided (the page shows the latest)."""
    campaign = campaign_or_404(slug)
    rows = "".join(f"{number},{holder},{iso(at)}\n" for number, holder, at in raffle.voids(campaign))
    return Response("ticket,volunteer,voided_at\n" + rows, mimetype="text/csv")
