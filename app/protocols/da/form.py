"""The form of a Direct Assessment score."""
from flask_babel import lazy_gettext as _l
from wtforms import HiddenField, IntegerField
from wtforms.validators import DataRequired, InputRequired

from ...forms import Bounded, Form, at_most


class ScoreForm(Form):
    """A Direct Assessment score; without JavaScript the slider is a number box."""

    token = HiddenField(validators=[DataRequired(), at_most(32)])
    score = IntegerField(
        validators=[
            InputRequired(_l("Please move the slider to give a score.")),
            Bounded(min=0, max=100, message=_l("A score is a whole number from 0 to 100.")),
        ]
    )
