"""The judging API's usual request, answered without Flask's request pipeline.

``POST /c/<slug>/api/judgment`` is the site's hot path: every judgment is
one such request, whose response carries the next item. Flask's pipeline
(request context, session, Flask-Login, CSRF hook, Babel, limiter, error
handlers, after-request hooks) costs more than the judgment itself, so this
WSGI middleware answers the usual case directly: a logged-in volunteer
whose signed session cookie and CSRF token check out, with a well-formed
answer. It checks the same things, the same way, with the same secrets:

- the session cookie with Flask's own signing serializer and lifetime;
- Flask-Login's session protection (``_id`` against the same identifier);
- the user named by the session, tied to their password digest
  (``security.user_from_session_id``, through the app's own user loader);
- Flask-WTF's CSRF token from the same headers, with the same serializer,
  salt and time limit, and its referrer check over HTTPS;
- the campaign as the view finds it (a draft only for organisers).

Anything else (no or bad cookie, a remember-me log-in, a failed check, a
malformed body, a user who has not joined, a database error before
anything was stored) is handed to the Flask app untouched (the body is put
back), which answers it exactly as before: this path only ever says yes
where Flask would, and never says no itself. The judgment itself is the
same service call as the view's (``evaluation.answer``), so the rules live
in one place.
"""
import hashlib
import hmac
import io
import json
import time
from functools import lru_cache
from types import SimpleNamespace

from babel import Locale
from flask import g
from flask_wtf.csrf import same_origin
from itsdangerous import BadData, URLSafeTimedSerializer
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from werkzeug.datastructures import LanguageAccept
from werkzeug.http import parse_accept_header, parse_cookie
from werkzeug.sansio.utils import get_host

from ..errors import SECURITY_HEADERS
from ..extensions import db
from ..models import utcnow
from ..services import evaluation
from ..web import campaign_row, may_see, rng
from ..services.importer import SLUG_RE
from .texts import tickets_summary

PREFIX, SUFFIX = "/c/", "/api/judgment"
MAX_BODY = 4096


class JudgmentEndpoint:
    """WSGI middleware around the Flask app's ``wsgi_app`` (see the module)."""

    def __init__(self, app, wsgi_app):
        self.app = app
        self.wsgi_app = wsgi_app
        self._checks = None

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if (
            environ.get("REQUEST_METHOD") == "POST" and path.startswith(PREFIX) and path.endswith(SUFFIX)
            and not environ.get("QUERY_STRING")  # the page never sends one; Flask checks it (a NUL)
        ):
            slug = path[len(PREFIX):-len(SUFFIX)]
            if SLUG_RE.fullmatch(slug):
                answered = self._judgment(environ, slug)
                if answered is not None:
                    status, headers, body = answered
                    start_response(status, headers)
                    return [body]
        return self.wsgi_app(environ, start_response)

    # -- checks, then the step ------------------------------------------------

    def _judgment(self, environ, slug):
        """(status, headers, body), or None to let the Flask app answer."""
        body = _read_body(environ)
        if body is None:
            return None
        checks = self._checks or self._settings()
        answer = _answer_of(body)
        if answer is None:
            return None
        cookies = parse_cookie(environ)
        session = checks.session(environ, cookies)
        if session is None or not checks.csrf_ok(environ, session):
            return None
        app = self.app
        with app.app_context():
            try:
                user = app.login_manager._user_callback(session["_user_id"])
                if user is None:
                    return None
                campaign = _campaign(slug, user)
                if campaign is None:
                    return None
                g._login_user = user
                g._flask_babel = SimpleNamespace(babel_locale=_locale(checks.locale(environ, cookies, user, campaign)))
                step = judge(campaign, evaluation.Volunteer(user.id), *answer,
                             present=lambda done: summary_payload(campaign, done))
            except (OperationalError, PoolTimeout):
                # Nothing was stored (a step is one transaction, retried
                # already), or no connection came in time: the Flask app
                # runs it again or answers 503.
                db.session.rollback()
                return None
            if step is None:
                return None  # not joined: Flask answers 403
            payload = app.json.dumps(step.presented).encode()
        return "200 OK", [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(payload))),
            ("Vary", "Cookie"),
            *SECURITY_HEADERS,
        ], payload

    def _settings(self):
        self._checks = Checks(self.app)
        return self._checks


def judge(campaign, who, token, choice, present=None):
    """Answer and serve the next item (``evaluation.answer``), then tell the
    live updates; the view and the endpoint alike. ``who`` may be an
    ``evaluation.Volunteer``: None if they have not joined."""
    from .. import realtime

    campaign_id = campaign.id  # read now: the step's commit expires the campaign
    step = evaluation.answer(campaign, who, token, choice, utcnow(), rng(), present=present)
    if step is not None and step.status in ("accepted", "dismissed"):
        realtime.touch(campaign_id, step.participation_id)  # the broadcast happens later, coalesced
    return step


def summary_payload(campaign, step):
    """The JSON answer of a step, with the volunteer's count and tickets as text."""
    payload = evaluation.step_payload(step)
    payload["mine"] = str(tickets_summary(step.answered, step.tickets, campaign.raffle_every))
    return payload


def _read_body(environ):
    """The request body when it is JSON of a sensible size, put back for the
    Flask app in case it answers after all; else None."""
    if environ.get("CONTENT_TYPE", "").split(";")[0].strip().lower() != "application/json":
        return None
    try:
        length = int(environ.get("CONTENT_LENGTH") or "")
    except ValueError:
        return None
    if not 0 < length <= MAX_BODY:
        return None
    body = environ["wsgi.input"].read(length)
    environ["wsgi.input"] = io.BytesIO(body)
    return body


def _answer_of(body):
    """(token, choice) of a well-formed answer, or None (the view's check)."""
    try:
        return evaluation.well_formed_answer(json.loads(body))
    except ValueError:
        return None


def _campaign(slug, user):
    """The campaign as ``web.find_campaign`` finds it for this user."""
    campaign = campaign_row(slug)
    return campaign if campaign is not None and may_see(campaign, user) else None


class Checks:
    """The session, log-in and CSRF checks of the Flask app, with its settings."""

    def __init__(self, app):
        config = app.config
        self.app = app
        self.session_cookie = config["SESSION_COOKIE_NAME"]
        self.serializer = app.session_interface.get_signing_serializer(app)
        self.max_age = int(app.permanent_session_lifetime.total_seconds())
        self.protection = config.get("SESSION_PROTECTION", app.login_manager.session_protection)
        self.csrf_on = config.get("WTF_CSRF_ENABLED", True) and config.get("WTF_CSRF_CHECK_DEFAULT", True)
        self.csrf_field = config.get("WTF_CSRF_FIELD_NAME", "csrf_token")
        self.csrf_headers = tuple(
            "HTTP_" + name.upper().replace("-", "_") for name in config.get("WTF_CSRF_HEADERS", ["X-CSRFToken", "X-CSRF-Token"])
        )
        self.csrf_serializer = URLSafeTimedSerializer(
            config.get("WTF_CSRF_SECRET_KEY") or app.secret_key, salt="wtf-csrf-token"
        )
        self.csrf_time_limit = config.get("WTF_CSRF_TIME_LIMIT", 3600)
        self.csrf_ssl_strict = config.get("WTF_CSRF_SSL_STRICT", True)
        self.languages = config["LANGUAGES"]
        self.verified = Verified()

    def session(self, environ, cookies):
        """The signed session of a logged-in user that Flask-Login would
        accept as it is (without changing it), else None."""
        cookie = cookies.get(self.session_cookie)
        if not cookie or self.serializer is None:
            return None
        session = self.verified.loads(self.serializer, cookie, self.max_age)
        if session is None:
            return None
        if not isinstance(session, dict) or session.get("_user_id") is None:
            return None  # anonymous, or a remember-me cookie to use: Flask's work
        if self.protection in ("basic", "strong") and session.get("_id") != session_identifier(environ):
            # Flask-Login marks such a session not fresh (basic) or logs out
            # (strong): only a session already marked is taken as it is.
            if not (
                (self.protection == "basic" or session.get("_permanent")) and session.get("_fresh") is False
            ):
                return None
        return session

    def csrf_ok(self, environ, session):
        """Flask-WTF's check of a JSON request (the token in a header)."""
        if not self.csrf_on:
            return True
        token = next((environ[name] for name in self.csrf_headers if environ.get(name)), None)
        expected = session.get(self.csrf_field)
        if not token or not isinstance(expected, str):
            return False
        signed = self.verified.loads(self.csrf_serializer, token, self.csrf_time_limit)
        if not isinstance(signed, str) or not hmac.compare_digest(expected, signed):
            return False
        if environ.get("wsgi.url_scheme") == "https" and self.csrf_ssl_strict:
            referrer = environ.get("HTTP_REFERER")
            host = get_host(
                environ["wsgi.url_scheme"], environ.get("HTTP_HOST"),
                (environ.get("SERVER_NAME"), int(environ.get("SERVER_PORT") or 443)),
            )
            if not referrer or not same_origin(referrer, f"https://{host}/"):
                return False
        return True

    def locale(self, environ, cookies, user, campaign):
        """The page language, by the app's rule (``factory.choose_locale``)."""
        from ..factory import LANGUAGE_COOKIE, choose_locale

        return choose_locale(
            self.languages,
            user.locale,
            cookies.get(LANGUAGE_COOKIE),
            _accepted_languages(environ.get("HTTP_ACCEPT_LANGUAGE")),
            lambda: campaign.interface_language,
        )


class Verified:
    """Signed strings already checked, by the exact string: a volunteer's
    session cookie and CSRF token are the same on every judgment, and
    checking a signature twice gives the same answer (the secret key does
    not change while the process runs). Each is kept until its age limit."""

    SIZE = 8192

    def __init__(self):
        self._known = {}

    def loads(self, serializer, signed, max_age):
        """What ``serializer.loads(signed, max_age=max_age)`` gives, or None."""
        now = time.time()
        known = self._known.get((serializer, signed))
        if known is not None and now <= known[1]:
            return known[0]
        try:
            value, stamp = serializer.loads(signed, max_age=max_age, return_timestamp=True)
        except BadData:
            return None
        if len(self._known) >= self.SIZE:
            self._known.clear()
        until = float("inf") if max_age is None else stamp.timestamp() + max_age
        self._known[(serializer, signed)] = (value, until)
        return value


@lru_cache(maxsize=256)
def _accepted_languages(header):
    """The browser's languages: the same few headers again and again (the
    parsed value is immutable, so one is shared)."""
    return parse_accept_header(header, LanguageAccept)


@lru_cache(maxsize=64)
def _locale(code):
    return Locale.parse(code)


def session_identifier(environ):
    """Flask-Login's session identifier (``flask_login.utils._create_identifier``)
    for this request: a digest of the client's address and user agent."""
    address = environ.get("HTTP_X_FORWARDED_FOR", environ.get("REMOTE_ADDR"))
    if address is not None:
        address = address.encode("utf-8").split(b",")[0].strip()
    user_agent = environ.get("HTTP_USER_AGENT")
    if user_agent is not None:
        user_agent = user_agent.encode("utf-8")
    return hashlib.sha512(f"{address}|{user_agent}".encode("utf8")).hexdigest()
