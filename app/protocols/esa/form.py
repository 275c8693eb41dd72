"""The form of an ESA answer: the score and the spans (JSON, from static/js/esa.js);
and of a practice answer."""
import json

from flask_babel import lazy_gettext as _l
from wtforms import HiddenField, IntegerField, StringField
from wtforms.validators import DataRequired, InputRequired, ValidationError
from wtforms.widgets import HiddenInput

from ...forms import Bounded, Form, at_most
from ...services.practice import LAST
from . import spans


def _spans(form, field):
    try:
        value = json.loads(field.data or "")
    except ValueError:
        value = None
    if spans.parse(value) is None:
        raise ValidationError(_l("The marked errors could not be read; please mark them again."))


class EsaForm(Form):
    token = HiddenField(validators=[DataRequired(), at_most(32)])
    score = IntegerField(
        validators=[
            InputRequired(_l("Please move the slider to give a score.")),
            Bounded(min=0, max=100, message=_l("A score is a whole number from 0 to 100.")),
        ]
    )
    # Its input is item_esa.html's own (kept by static/js/esa.js): a HiddenField
    # would be drawn a second time by hidden_tag().
    spans = StringField(default="[]", validators=[at_most(spans.MAX_TEXT), _spans])


class PracticeForm(Form):
    """A practice answer: the item's number, the score and the spans. The
    score is asked as on a real item, though the feedback is on the spans."""

    number = IntegerField(widget=HiddenInput(), validators=[InputRequired(), Bounded(min=1, max=LAST)])
    score = EsaForm.score
    spans = StringField(default="[]", validators=[at_most(spans.MAX_TEXT), _spans])
