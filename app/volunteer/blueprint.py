from flask import Blueprint

bp = Blueprint("volunteer", __name__)
