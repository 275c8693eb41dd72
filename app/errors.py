"""Security headers and clean error answers."""
from flask import abort, g, jsonify, render_template, request
from flask_babel import gettext as _
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

CSP = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
])
# Seconds a client is asked to wait after a 503 (the database busy or away).
RETRY_AFTER = 5
# Every response carries these.
SECURITY_HEADERS = (
    ("Content-Security-Policy", CSP),
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "same-origin"),
    ("Permissions-Policy", "camera=(), microphone=(), geolocation=()"),
)


def _wants_json():
    return request.path.startswith("/c/") and "/api/" in request.path


def _has_nul():
    """A NUL character anywhere in the path, query or form: never legitimate,
    and PostgreSQL refuses it in text (a 500 instead of a clear answer)."""
    if "\x00" in request.path or any("\x00" in v for vs in request.args.listvalues() for v in vs):
        return True
    if request.method in ("POST", "PUT", "PATCH") and request.mimetype in (
        "application/x-www-form-urlencoded", "multipart/form-data"
    ):
        return any("\x00" in v for vs in request.form.listvalues() for v in vs)
    return False


def register(app):
    @app.before_request
    def refuse_nul():
        if _has_nul():
            abort(400)

    @app.after_request
    def security_headers(response):
        for name, value in SECURITY_HEADERS:
            response.headers.setdefault(name, value)
        return response

    @app.context_processor
    def viewer_after_database_error():
        # Registered after Flask-Login's, so this current_user wins in templates.
        if g.get("database_unavailable"):
            return {"current_user": app.login_manager.anonymous_user()}
        return {}

    def page(status, title, message):
        if _wants_json():
            return jsonify({"status": "error", "message": message}), status
        return render_template("error.html", title=title, message=message), status

    @app.errorhandler(400)
    def bad_request(error):
        reason = getattr(error, "description", "") or ""
        if "CSRF" in reason:
            return page(400, _("Form expired"), _("This form is out of date or was not sent by this site. Go back, reload the page and try again."))
        return page(400, _("Bad request"), _("The request could not be understood."))

    @app.errorhandler(403)
    def forbidden(error):
        return page(403, _("Not allowed"), _("You do not have access to this page."))

    @app.errorhandler(404)
    def not_found(error):
        return page(404, _("Not found"), _("There is no such page."))

    @app.errorhandler(413)
    def too_large(error):
        return page(413, _("Too large"), _("What was sent is larger than this site accepts. Go back and send less, or ask the organisers."))

    @app.errorhandler(429)
    def too_many(error):
        return page(429, _("Too many attempts"), _("Too many attempts from your connection. Wait a few minutes and try again."))

    # No connection to the database within DB_POOL_TIMEOUT (the pool's
    # TimeoutError) is answered as a database that is away.
    @app.errorhandler(PoolTimeout)
    @app.errorhandler(OperationalError)
    def database_unavailable(error):
        from .extensions import db

        db.session.rollback()
        # Answer without the database: the rollback expired the volunteer (if
        # loaded at all), so the page is made as for a visitor, in the language
        # of the cookie or the browser (not the campaign's, which is stored).
        g.database_unavailable = True
        app.logger.warning("database unavailable: %s", error)
        response, status = page(503, _("Busy"), _("The site is very busy right now and your last action was not saved. Please try again in a moment."))
        response = app.make_response((response, status))
        response.headers["Retry-After"] = str(RETRY_AFTER)
        return response
