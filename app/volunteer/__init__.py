from flask import Blueprint

bp = Blueprint("volunteer", __name__)

from . import views  # noqa: E402,F401
