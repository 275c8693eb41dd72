"""Request body limits: MAX_CONTENT_LENGTH for the whole site, a tighter
BOZKA_MAX_JSON_BODY for the views marked ``small_body`` (the JSON APIs)."""
from flask import abort, request


def small_body(view):
    """Mark a view whose requests carry at most BOZKA_MAX_JSON_BODY bytes."""
    view.max_body_setting = "BOZKA_MAX_JSON_BODY"
    return view


def init_app(app):
    """Refuse a body larger than its view's limit with 413 before anything
    reads it: registered before every other hook (CSRF reads forms)."""

    @app.before_request
    def refuse_large_body():
        setting = getattr(app.view_functions.get(request.endpoint), "max_body_setting", None)
        if setting:
            # Flask 3.1: the limit of this request only; Werkzeug enforces it
            # on a body without Content-Length (chunked) as it is read.
            request.max_content_length = app.config[setting]
        limit = request.max_content_length
        if limit is not None and (request.content_length or 0) > limit:
            abort(413)
