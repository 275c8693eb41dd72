from flask import Blueprint

bp = Blueprint("organiser", __name__, url_prefix="/organiser")

from . import admin, views  # noqa: E402,F401
