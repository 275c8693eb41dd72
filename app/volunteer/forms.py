from flask_babel import lazy_gettext as _l
from flask_wtf import FlaskForm
from wtforms import HiddenField, RadioField
from wtforms.validators import DataRequired, Length


class JudgmentForm(FlaskForm):
    token = HiddenField(validators=[DataRequired(), Length(max=32)])
    choice = RadioField(
        _l("Which translation is better?"),
        choices=[
            ("left", _l("The first translation")),
            ("right", _l("The second translation")),
            ("equal", _l("Both are of equal quality (only if truly necessary)")),
        ],
        validators=[DataRequired(_l("Please choose one of the three answers."))],
    )
