from flask import Blueprint

bp = Blueprint("organiser", __name__, url_prefix="/organiser")

from . import views  # noqa: E402,F401
