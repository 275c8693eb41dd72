from flask import Blueprint

bp = Blueprint("organiser", __name__, url_prefix="/organiser")
