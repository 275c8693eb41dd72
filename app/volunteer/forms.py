from flask_babel import lazy_gettext as _l
from wtforms import HiddenField, IntegerField, RadioField, StringField
from wtforms.validators import DataRequired, InputRequired, Optional

from ..choices import REPORT_REASONS
from wtforms.widgets import HiddenInput

from ..forms import Bounded, Form, at_most


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
