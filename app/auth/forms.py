import re

from flask_babel import lazy_gettext as _l
from wtforms import BooleanField, EmailField, PasswordField, SelectField, StringField
from wtforms.validators import DataRequired, Email, EqualTo, Length, Optional, Regexp, StopValidation, ValidationError

from ..choices import AGE_GROUPS, LANGUAGE_LEVELS, STUDIES_FIELDS, STUDIES_LEVELS, with_prompt
from ..forms import Form, at_most
from ..services import names

USERNAME_RE = r"^[\w.\-]+$"
# What accounts.username_problem finds, said to the person choosing the name.
USERNAME_PROBLEMS = {
    "invisible": _l("This username has a character that shows nothing (a space, a filler or an invisible "
                    "character): use letters, digits, '.', '-' and '_' only."),
    "taken": _l("This username is taken."),
    "lookalike": _l("This username looks too much like an existing one (letters that look the same, "
                    "such as I and l or a Latin and a Cyrillic a): choose another."),
    "mixed_scripts": _l("This username mixes letters of different scripts (such as Latin and Cyrillic), "
                        "which can imitate other names: use the letters of one script."),
}


# Shown with the password field before anything is sent (the rules of StrongPassword).
PASSWORD_RULE = _l("At least 8 characters; not a common password, nor your username or email.")


class StrongPassword:
    """At least 8 characters, not a common password, not the username or email."""

    def __call__(self, form, field):
        from ..services.security import password_problem

        username = getattr(form, "username", None)
        email = getattr(form, "email", None)
        problem = password_problem(field.data or "", username.data if username else None, email.data if email else None)
        if problem == "short":
            raise ValidationError(_l("Use at least 8 characters."))
        if problem == "common":
            raise ValidationError(_l("This password is too common: choose another."))
        if problem == "personal":
            raise ValidationError(_l("Do not use your username or email as the password."))


class Visible:
    """No character that shows nothing (names.has_invisible). A Hangul
    filler is a letter to USERNAME_RE, so the name would pass it: said on
    its own, as the name may look fine on screen (a space, a zero-width or a
    variation character gets USERNAME_RE's message)."""

    def __call__(self, form, field):
        name = field.data or ""
        if names.has_invisible(name) and re.match(USERNAME_RE, name):
            raise StopValidation(USERNAME_PROBLEMS["invisible"])


def username_field(label, description=None):
    """A username as every form takes it: NFKC first (full-width "ｇｉ５" is
    "gi5"), then 3 to 40 visible letters, digits, '.', '-' and '_'."""
    return StringField(
        label,
        description=description,
        filters=[names.normalise],
        validators=[
            DataRequired(),
            Visible(),
            Length(min=3, max=40),
            Regexp(USERNAME_RE, message=_l("Use letters, digits, '.', '-' and '_' only.")),
        ],
    )


class LoginForm(Form):
    email = EmailField(_l("Email"), validators=[DataRequired(), at_most(254)])
    password = PasswordField(_l("Password"), validators=[DataRequired(), at_most(200)])
    remember = BooleanField(_l("Keep me logged in"))


class JoinForm(Form):
    """What a campaign asks of a volunteer: language levels and consent."""

    source_level = SelectField(_l("Your level of the source language"), choices=with_prompt(LANGUAGE_LEVELS), validators=[DataRequired()])
    target_level = SelectField(_l("Your level of the target language"), choices=with_prompt(LANGUAGE_LEVELS), validators=[DataRequired()])
    consent = BooleanField(
        _l("I agree that my answers and my profile (without my name or email) are used for research."),
        validators=[DataRequired(_l("Please give your consent to take part."))],
    )


class RegisterForm(JoinForm):
    username = username_field(_l("Public username"),
                              _l("Shown in the ranking. Letters, digits, '.', '-' and '_'."))
    real_name = StringField(_l("Real name (optional)"), validators=[Optional(), at_most(120)])
    email = EmailField(
        _l("Email"),
        description=_l("We send you a link to confirm it. Only confirmed volunteers take part in the raffle."),
        validators=[DataRequired(), Email(check_deliverability=False), at_most(254)],
    )
    password = PasswordField(_l("Password"), validators=[DataRequired(), at_most(200), StrongPassword()],
                             description=PASSWORD_RULE)
    password2 = PasswordField(
        _l("Repeat the password"),
        validators=[DataRequired(), at_most(200), EqualTo("password", message=_l("The passwords do not match."))],
    )
    # A honeypot: hidden from people (CSS and aria-hidden); bots fill it in.
    website = StringField(_l("Leave this field empty"), validators=[Optional(), at_most(200)])
    age_group = SelectField(_l("Age group"), choices=with_prompt(AGE_GROUPS), validators=[DataRequired()])
    studies_level = SelectField(_l("Level of studies"), choices=with_prompt(STUDIES_LEVELS), validators=[DataRequired()])
    studies_field = SelectField(_l("Field of studies or work"), choices=with_prompt(STUDIES_FIELDS), validators=[DataRequired()])
    # Field order on the page: account, profile, then the campaign's questions.
    field_order = (
        "username", "real_name", "email", "password", "password2",
        "age_group", "studies_level", "studies_field", "source_level", "target_level", "consent",
    )


class ResetRequestForm(Form):
    email = EmailField(_l("Email"), validators=[DataRequired(), Email(check_deliverability=False), at_most(254)])


class ResetForm(Form):
    password = PasswordField(_l("New password"), validators=[DataRequired(), at_most(200), StrongPassword()],
                             description=PASSWORD_RULE)
    password2 = PasswordField(
        _l("Repeat the password"),
        validators=[DataRequired(), at_most(200), EqualTo("password", message=_l("The passwords do not match."))],
    )


class PostForm(Form):
    """A form with nothing but its CSRF token (logout, resend)."""


def label_levels(form, campaign, language_name, locale):
    """Name the campaign's languages in the two level questions."""
    from flask_babel import gettext as _

    form.source_level.label.text = _(
        "Your level of %(language)s", language=language_name(campaign.source_language, locale)
    )
    form.target_level.label.text = _(
        "Your level of %(language)s", language=language_name(campaign.target_language, locale)
    )
    return form
