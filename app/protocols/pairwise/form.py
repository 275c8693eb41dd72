"""The form of a pairwise judgment: the served item's token and the answer."""
from wtforms import HiddenField
from wtforms.validators import DataRequired

from ...forms import Form, answer_field, at_most


class JudgmentForm(Form):
    token = HiddenField(validators=[DataRequired(), at_most(32)])
    choice = answer_field()
