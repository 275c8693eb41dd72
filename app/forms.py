"""The base of every form: WTForms' own messages ("This field is required.",
"Not a valid choice.") come from our catalogue in the interface language,
through WTForms' documented hook (``Meta.get_translations``). Flask-WTF's
default takes them from WTForms' catalogues, which have no Basque."""
from flask_babel import get_translations
from flask_babel import lazy_gettext as _l
from flask_wtf import FlaskForm
from wtforms import RadioField
from wtforms.validators import DataRequired, Length, NumberRange, StopValidation

# WTForms' own messages that our forms can show, marked here so that
# `flask translate extract` puts them in our catalogue. Length's are plural
# forms (ngettext): our forms give Length a message of their own instead.
WTFORMS_MESSAGES = (
    _l("This field is required."),
    _l("Invalid email address."),
    _l("Invalid input."),
    _l("Not a valid choice."),
    _l("Not a valid integer value."),
    _l("Not a valid datetime value."),
    _l("Number must be between %(min)s and %(max)s."),
    _l("Field must be between %(min)d and %(max)d characters long."),
)

TOO_LONG = _l("Use at most %(max)d characters.")


def at_most(characters):
    """Length(max=...) with our message (WTForms' own is a plural form)."""
    return Length(max=characters, message=TOO_LONG)


class Bounded(NumberRange):
    """NumberRange that also refuses integers too long to compare: WTForms
    compares through float(), which overflows (a 500) past about 308 digits."""

    def __call__(self, form, field):
        if isinstance(field.data, int) and abs(field.data) > 10**9:
            raise StopValidation(self.message or _l("Number must be between %(min)s and %(max)s.",
                                                     min=self.min, max=self.max))
        super().__call__(form, field)


class CatalogueTranslations:
    """What WTForms asks of a translations object, read from our catalogue
    when the message is shown (WTForms formats the result itself)."""

    def gettext(self, string):
        return get_translations().ugettext(string)

    def ngettext(self, singular, plural, n):
        return get_translations().ungettext(singular, plural, n)


class Form(FlaskForm):
    class Meta:
        def get_translations(self, form):
            return CatalogueTranslations()


# The three answers of a pairwise comparison: the judged item's and the
# practice item's (both in the volunteer's task).
ANSWERS = [
    ("left", _l("The first translation")),
    ("right", _l("The second translation")),
    ("equal", _l("Both are of equal quality (only if truly necessary)")),
]


def answer_field():
    return RadioField(
        _l("Which translation is better?"),
        choices=ANSWERS,
        validators=[DataRequired(_l("Please choose one of the three answers."))],
    )
