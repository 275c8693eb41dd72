from flask import current_app, flash, redirect, render_template, request, session, url_for
from flask_babel import force_locale, get_locale, gettext as _
from flask_login import current_user, login_required, login_user, logout_user

from .. import realtime
from ..extensions import db, limiter
from ..limits import remote_network
from ..models import User, utcnow
from ..services import accounts, outbox, rewards
from ..services.security import address_hash, authenticate
from ..services.summary import contribution_summary
from ..web import campaign_or_404
from .blueprint import bp
from ..languages import LANGUAGE_COOKIE, expressed_locale, language_name, mail_locale
from .forms import (USERNAME_PROBLEMS, LoginForm, PostForm, RegisterForm, ResetForm, ResetRequestForm,
                    label_levels)


def _landing_url(user):
    """The person's own page when no ``next`` was asked: an organiser's
    campaigns, a volunteer's one campaign (its judging page), else home."""
    where, slug = accounts.landing(user.id, user.role)
    if where == "organiser":
        return url_for("organiser.index")
    if where == "campaign":
        return url_for("volunteer.evaluate", slug=slug)
    return url_for("volunteer.home")


def _safe_next(default):
    """Flask-Login's ``next`` (the page that asked for a log-in), if it is
    a path on this site; else ``default``."""
    target = request.values.get("next", "")
    # A path on this site only: browsers read "//host", "/\\host" and
    # control characters as other sites.
    if target.startswith("/") and not target.startswith("//") and "\\" not in target \
            and target.isprintable():
        return target
    return default


def _in_language_of(user):
    """Every mail to a person is written in the language their account keeps
    (else the page's): ``with _in_language_of(user):`` around its texts
    (``user`` None: no account, the page's)."""
    saved = user.locale if user is not None else None
    return force_locale(mail_locale(current_app.config["LANGUAGES"], saved, str(get_locale())))


def _send_confirmation(user):
    """Queue the confirmation mail (the caller commits)."""
    token = accounts.make_token(current_app.config["SECRET_KEY"], "confirm", user)
    link = url_for("auth.confirm", token=token, _external=True)
    with _in_language_of(user):
        outbox.enqueue(
            user.email,
            _("Confirm your email for Bozka"),
            _("Hello %(name)s,\n\nPlease confirm your email by opening this link:\n%(link)s\n",
              name=user.username, link=link),
        )


def _send_taken_notice(user):
    """Queue, in the owner's language, the notice that someone tried to
    register with their email (the caller commits)."""
    with _in_language_of(user):
        outbox.enqueue(
            user.email,
            _("Someone tried to register on Bozka with your email"),
            _("Hello %(name)s,\n\nSomeone tried to create a new Bozka account with this email address. "
              "You already have an account, so no new one was made.\n\nIf it was you, log in:\n%(login)s\n"
              "or, if you forgot your password, choose a new one:\n%(reset)s\n\n"
              "If it was not you, you can ignore this email.\n",
              name=user.username, login=url_for("auth.login", _external=True),
              reset=url_for("auth.reset_request", _external=True)),
        )


def _send_reset(user, email):
    """Queue the reset mail for ``user``; for an unknown email (None) queue
    nothing but make the token and texts all the same (the same work)."""
    token = accounts.make_token(current_app.config["SECRET_KEY"], "reset", user or accounts.stand_in(email))
    with _in_language_of(user):
        subject = _("Reset your Bozka password")
        body = _("Open this link to choose a new password:\n%(link)s\n",
                 link=url_for("auth.reset", token=token, _external=True))
    if user is not None:
        outbox.enqueue(user.email, subject, body)


def _log_in(user, remember=False):
    """Log in on a fresh session (no fixation): the old one is dropped."""
    keep = {key: session[key] for key in ("_flashes",) if key in session}
    session.clear()
    session.update(keep)
    login_user(user, remember=remember)


LOGIN_LIMIT = "10 per minute;50 per hour"

def register_limit():
    return current_app.config["BOZKA_REGISTER_LIMIT"]


def register_network_limit():
    return current_app.config["BOZKA_REGISTER_NETWORK_LIMIT"]


EMAIL_LIMIT = "5 per minute;20 per hour"


@bp.route("/login", methods=["GET", "POST"])
@limiter.limit(LOGIN_LIMIT, methods=["POST"])
def login():
    form = LoginForm()
    if form.validate_on_submit():
        user = accounts.account_for(form.email.data)
        if authenticate(user, form.password.data):
            _log_in(user, remember=form.remember.data)
            # The account's language (choose_locale) is this device's from now on, after log-out too.
            return _remember_language(redirect(_safe_next(_landing_url(user))), user.locale)
        flash(_("Wrong email or password."), "error")
    return render_template("auth/login.html", form=form)


@bp.route("/logout", methods=["POST"])
@login_required
def logout():
    if not PostForm().validate_on_submit():
        return redirect(url_for("volunteer.home"))
    user = db.session.get(User, current_user.id)
    summary = contribution_summary(user.id, get_locale())
    user_id, name = user.id, user.username
    # Every copy of the session cookie, on this device and any other, ends here.
    user.end_sessions()
    db.session.commit()
    realtime.disconnect_user(user_id)
    logout_user()
    return render_template("auth/logout.html", summary=summary, name=name)


@bp.route("/c/<slug>/register", methods=["GET", "POST"])
@limiter.limit(register_limit, methods=["POST"])
@limiter.limit(register_network_limit, key_func=remote_network, methods=["POST"])
def register(slug):
    campaign = campaign_or_404(slug)
    if current_user.is_authenticated:
        return redirect(url_for("volunteer.join", slug=slug))
    form = label_levels(RegisterForm(), campaign, language_name, str(get_locale()))
    if form.validate_on_submit() and form.website.data:
        # The honeypot was filled in: a bot. Say nothing useful, keep nothing.
        current_app.logger.info("registration refused: honeypot")
        flash(_("Your registration could not be completed. Please try again."), "error")
    elif form.validate_on_submit():
        if problem := accounts.username_problem(form.username.data):
            form.username.errors.append(USERNAME_PROBLEMS[problem])
        else:
            # A taken email gets the same answer as a new one (the page says
            # nothing about which emails have accounts); its owner gets a notice.
            user, existing = accounts.register_volunteer(
                form.email.data,
                form.username.data,
                form.password.data,
                campaign,
                form.source_level.data,
                form.target_level.data,
                real_name=form.real_name.data or None,
                age_group=form.age_group.data,
                studies_level=form.studies_level.data,
                studies_field=form.studies_field.data,
                signup_address=address_hash(current_app.config["SECRET_KEY"], request.remote_addr),
                # The language they asked for (the switcher, else the browser): their pages on any device,
                # and every mail to them.
                locale=expressed_locale(current_app.config["LANGUAGES"], request.cookies.get(LANGUAGE_COOKIE),
                                        request.accept_languages),
            )
            if user is None:
                _send_taken_notice(existing)
            else:
                _send_confirmation(user)
            db.session.commit()
            if user is not None:
                realtime.touch(campaign.id)
                _log_in(user)
            flash(_("Welcome! We sent you an email to confirm your address."), "info")
            return redirect(url_for("volunteer.instructions", slug=slug))
    return render_template("auth/register.html", form=form, campaign=campaign)


@bp.route("/confirm/<token>")
@limiter.limit("20 per minute")
def confirm(token):
    user = accounts.read_token(
        current_app.config["SECRET_KEY"], "confirm", token, current_app.config["EMAIL_TOKEN_MAX_AGE"]
    )
    confirmed = accounts.signed_user(current_app.config["SECRET_KEY"], "confirm", token) if user is None else None
    if confirmed is not None and confirmed.is_confirmed:
        # The link was used already: nothing to do but go on (a forged token never gets here).
        flash(_("Your email is already confirmed."), "info")
        return _remember_language(redirect(_landing_url(confirmed)), confirmed.locale)
    if user is None:
        flash(_("This confirmation link is invalid, already used or expired."), "error")
    else:
        user.email_confirmed_at = utcnow()
        campaign_ids = accounts.campaign_ids(user.id)
        for campaign_id in campaign_ids:
            rewards.list_changed(campaign_id)  # their tickets join the raffle's list
        db.session.commit()
        for campaign_id in campaign_ids:
            realtime.touch(campaign_id)  # confirmed volunteers are ranked
        flash(_("Thank you: your email is confirmed."), "info")
        # Logged out (the link opened in another browser), the judging page
        # asks for a log-in and comes back, in the account's language.
        return _remember_language(redirect(_landing_url(user)), user.locale)
    return redirect(url_for("volunteer.home"))


@bp.route("/confirm", methods=["POST"])
@login_required
@limiter.limit(EMAIL_LIMIT)
def resend_confirmation():
    if PostForm().validate_on_submit() and not current_user.is_confirmed:
        _send_confirmation(current_user)
        db.session.commit()
        flash(_("We sent you a new confirmation email."), "info")
    return redirect(_safe_next(url_for("volunteer.home")))


@bp.route("/reset", methods=["GET", "POST"])
@limiter.limit(EMAIL_LIMIT, methods=["POST"])
def reset_request():
    form = ResetRequestForm()
    if form.validate_on_submit():
        email = form.email.data.strip().lower()
        _send_reset(accounts.account_for(email), email)
        db.session.commit()
        # The same answer whether or not the email is registered.
        flash(_("If this email is registered, we sent a link to reset the password."), "info")
        return redirect(url_for("auth.login"))
    return render_template("auth/reset_request.html", form=form)


@bp.route("/reset/<token>", methods=["GET", "POST"])
@limiter.limit("20 per minute")
def reset(token):
    user = accounts.read_token(current_app.config["SECRET_KEY"], "reset", token, 3600)
    if user is None:
        flash(_("This link is invalid, already used or expired."), "error")
        return redirect(url_for("auth.reset_request"))
    form = ResetForm()
    if form.validate_on_submit():
        user.set_password(form.password.data)
        db.session.commit()
        realtime.disconnect_user(user.id)
        flash(_("Your password was changed. You can log in now."), "info")
        return redirect(url_for("auth.login"))
    return render_template("auth/reset.html", form=form)



@bp.route("/language", methods=["POST"])
def set_language():
    """The language switcher: remembered in the profile and, for visitors, a cookie."""
    code = request.form.get("lang", "")
    target = redirect(_safe_next(url_for("volunteer.home")))
    if PostForm().validate_on_submit() and code in current_app.config["LANGUAGES"]:
        if current_user.is_authenticated:
            current_user.locale = code
            db.session.commit()
        _remember_language(target, code)
    return target


def _remember_language(response, code):
    """The device keeps the language (a cookie a year long), when there is one."""
    if code in current_app.config["LANGUAGES"]:
        response.set_cookie(LANGUAGE_COOKIE, code, max_age=365 * 24 * 3600, samesite="Lax", httponly=True,
                            secure=current_app.config["SESSION_COOKIE_SECURE"])
    return response
