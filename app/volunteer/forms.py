from flask_babel import lazy_gettext as _l
from wtforms import HiddenField, IntegerField, RadioField, StringField
from wtforms.validators import AnyOf, DataRequired, InputRequired, Optional

from ..choices import REPORT_REASONS
from ..services import practice
from wtforms.widgets import HiddenInput

from ..forms import Bounded, Form, at_most

ANSWERS = [
    ("left", _l("The first translation")),
    ("right", _l("The second translation")),
    ("equal", _l("Both are of equal quality (only if truly necessary)")),
]


def _choice():
    return RadioField(
        _l("Which translation is better?"),
        choices=ANSWERS,
        validators=[DataRequired(_l("Please choose one of the three answers."))],
    )


class JudgmentForm(Form):
    token = HiddenField(validators=[DataRequired(), at_most(32)])
    choice = _choice()


class ScoreForm(Form):
    """A Direct Assessment score; without JavaScript the slider is a number box."""

    token = HiddenField(validators=[DataRequired(), at_most(32)])
    score = IntegerField(
        validators=[
            InputRequired(_l("Please move the slider to give a score.")),
            Bounded(min=0, max=100, message=_l("A score is a whole number from 0 to 100.")),
        ]
    )


class PracticeForm(Form):
    """A practice answer. The item's number and the side its better
    translation was shown on come back with the answer: practice counts for
    nothing, so a volunteer who edits them only misleads themselves."""

    number = IntegerField(widget=HiddenInput(), validators=[InputRequired(), Bounded(min=1, max=practice.LAST)])
    better = HiddenField(validators=[AnyOf(("left", "right"))])
    choice = _choice()


class ReportForm(Form):
    """"Report a problem with this item": the reason, and a few words if the
    volunteer wishes (services/reports.py)."""

    # The item's token, named apart from the judging form's "token" on the same page.
    item = HiddenField(validators=[DataRequired(), at_most(32)])
    reason = RadioField(
        _l("What is wrong with this item?"),
        choices=REPORT_REASONS,
        validators=[DataRequired(_l("Please choose what is wrong with the item."))],
    )
    text = StringField(_l("Details (optional)"), validators=[Optional(), at_most(200)])


class DismissAnnouncementForm(Form):
    """The announcement a volunteer has read (its id, from the page)."""

    announcement = IntegerField(widget=HiddenInput(), validators=[InputRequired(), Bounded(min=1, max=10**9)])
