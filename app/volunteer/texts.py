"""The volunteer's count and raffle numbers as the pages show them.

One function for the pages (a Jinja global, ``tickets_summary``) and for
the judging API's answer, which sends it with every judgment. It takes the
current language's catalogue once and fills three messages, instead of a
template render with a Babel lookup per message (84 µs a judgment before,
about 15 now, of ~2 ms; scripts/bench/profile_judging.py).
"""
from flask_babel import get_locale, get_translations
from markupsafe import Markup

from ..services import rewards

# Flask-Babel's catalogue of each language, as it loaded it (it keeps them
# for the process too); looked up here by the locale alone.
_catalogues = {}


def _catalogue():
    locale = get_locale()
    catalogue = _catalogues.get(locale)
    if catalogue is None:
        catalogue = _catalogues[locale] = get_translations()
    return catalogue


def tickets_summary(answered, tickets, raffle_every, under_review=False, next_ticket=False, count=None):
    """HTML: "You have judged N sentences." (the answers that count) and the
    raffle numbers (or how to earn one); ``under_review``: a neutral word
    that the volunteer is held for review. The catalogue's messages are
    trusted, as in the templates; every value filled in is a number (``%d``),
    so nothing needs escaping. ``next_ticket``: also how many more sentences
    win the next raffle number (the judging page). ``count``: how many
    numbers the volunteer has when ``tickets`` are only the latest few
    (``rewards.LATEST_SHOWN``, what each judgment carries); the welcome page
    passes them all."""
    catalogue = _catalogue()
    judged = catalogue.ungettext(
        "You have judged %(num)d sentence.", "You have judged %(num)d sentences.", answered
    ) % {"num": answered}
    count = len(tickets) if count is None else count
    if count > len(tickets):
        held = "%s <strong>%s</strong>" % (
            catalogue.ungettext("You have %(num)d raffle number; the latest:",
                                "You have %(num)d raffle numbers; the latest:", count) % {"num": count},
            ", ".join("%d" % number for number in tickets),
        )
    elif tickets:
        held = "%s <strong>%s</strong>" % (
            catalogue.ungettext("Your raffle number:", "Your raffle numbers:", len(tickets)),
            ", ".join("%d" % number for number in tickets),
        )
    else:
        held = catalogue.ungettext(
            "Every %(num)d sentence earns a raffle number.", "Every %(num)d sentences earn a raffle number.",
            raffle_every,
        ) % {"num": raffle_every}
    coming = ""
    if next_ticket:
        more = rewards.to_next_ticket(answered, raffle_every)
        coming = '\n  <span class="next-ticket">%s</span>' % catalogue.ungettext(
            "%(num)d more sentence to your next raffle number.", "%(num)d more sentences to your next raffle number.",
            more,
        ) % {"num": more}
    review = ""
    if under_review:
        review = '\n  <span class="review">%s</span>' % catalogue.ugettext(
            "The organisers are reviewing your answers. Until they have, your name is not in the ranking "
            "and your raffle numbers are not in the draw. You may go on judging."
        )
    return Markup(f'<p class="mine">\n  <span>{judged}</span>\n  <span>{held}</span>{coming}{review}\n</p>')
