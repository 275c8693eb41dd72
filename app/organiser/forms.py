from flask_babel import lazy_gettext as _l
from wtforms import DateTimeLocalField, EmailField, IntegerField, PasswordField, SelectField, StringField, TextAreaField
from wtforms.widgets import HiddenInput
from wtforms.validators import DataRequired, Email, InputRequired, Optional, Regexp, ValidationError

from ..auth.forms import StrongPassword, username_field
from ..choices import CAMPAIGN_STATUSES, STAFF_ROLES
from ..forms import Bounded, Form, at_most


class StatusForm(Form):
    status = SelectField(_l("Status"), choices=CAMPAIGN_STATUSES)
    starts_at = DateTimeLocalField(_l("Starts at (UTC, optional)"), format="%Y-%m-%dT%H:%M", validators=[Optional()])
    ends_at = DateTimeLocalField(_l("Ends at (UTC; needed before the raffle commitment and opening)"), format="%Y-%m-%dT%H:%M", validators=[Optional()])


class VisibleText:
    """Printable text with something to read (no control characters)."""

    def __call__(self, form, field):
        from ..services.security import visible_text_problem

        if visible_text_problem(field.data or ""):
            raise ValidationError(_l("Write some text, without control characters."))


class AnnouncementForm(Form):
    text = TextAreaField(
        _l("Announcement to every connected volunteer"),
        validators=[DataRequired(), at_most(500), VisibleText()],
        description=_l("Volunteers who open the judging page later see it too, for 7 days, until they dismiss it "
                       "or you send a new one."),
    )


class CommitForm(Form):
    seed_sha256 = StringField(
        _l("SHA-256 of your secret seed (leave empty to let Bozka make a seed)"),
        validators=[Optional(), Regexp(r"^[0-9a-fA-F]{64}$", message=_l("64 hexadecimal characters."))],
    )
    beacon = StringField(
        _l("The public draw or beacon whose value the draw will use"),
        validators=[DataRequired(), at_most(200), VisibleText()],
        description=_l("Something nobody knows before it is published, named so anyone can look it up: for "
                       "example “drand quicknet, round 1234567 (its randomness)” or “the five numbers of the "
                       "national lottery draw of 5 December”."),
    )
    # Seconds too (the input's step is 1): a beacon's round can come soon after the end.
    beacon_at = DateTimeLocalField(
        _l("When its value is published (UTC, after the campaign's end)"),
        format=["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M"], validators=[InputRequired()], render_kw={"step": "1"},
    )


class DrawForm(Form):
    seed = StringField(_l("The secret seed"), validators=[DataRequired(), at_most(200)])
    beacon = StringField(_l("The beacon's value, exactly as it was published"),
                         validators=[DataRequired(), at_most(200), VisibleText()])
    prizes = IntegerField(_l("Number of prizes"), default=1, validators=[InputRequired(), Bounded(min=1, max=1000)])


class NotifyForm(Form):
    prize = IntegerField(_l("Prize"), widget=HiddenInput(), validators=[InputRequired(), Bounded(min=1, max=1000)])
    note = TextAreaField(_l("A message to add (optional: how to claim the prize)"),
                         validators=[Optional(), at_most(1000), VisibleText()])


class AccountForm(Form):
    role = SelectField(_l("Role"), choices=STAFF_ROLES)
    username = username_field(_l("Username"))
    email = EmailField(_l("Email"), validators=[DataRequired(), Email(check_deliverability=False), at_most(254)])
    password = PasswordField(_l("Password"), validators=[DataRequired(), at_most(200), StrongPassword()])


class OrganiserForm(Form):
    username = StringField(_l("Username of the organiser"), validators=[DataRequired(), at_most(40)])


class DismissForm(Form):
    reason = StringField(
        _l("Reason for the dismissal (kept with the discarded judgments)"),
        validators=[DataRequired(), at_most(200), VisibleText()],
    )
