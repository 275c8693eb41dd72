"""The form of a pairwise judgment: the served item's token and the answer;
and the form of a practice answer."""
from wtforms import HiddenField, IntegerField
from wtforms.validators import AnyOf, DataRequired, InputRequired
from wtforms.widgets import HiddenInput

from ...forms import Bounded, Form, answer_field, at_most
from ...services.practice import LAST


class JudgmentForm(Form):
    token = HiddenField(validators=[DataRequired(), at_most(32)])
    choice = answer_field()


class PracticeForm(Form):
    """A practice answer. The item's number and the side its better
    translation was shown on come back with the answer: practice counts for
    nothing, so a volunteer who edits them only misleads themselves."""

    number = IntegerField(widget=HiddenInput(), validators=[InputRequired(), Bounded(min=1, max=LAST)])
    better = HiddenField(validators=[AnyOf(("left", "right"))])
    choice = answer_field()
