"""ESA practice (issue 33): a translation with known errors, written inline
in practice.tsv as ``[[minor:words]]`` or ``[[major:words]]`` (an omission:
``[[minor:]]`` or ``[[major:]]``, on nothing). The volunteer marks the
errors with the item's own widget and scores; the feedback says which known
errors they found (a mark overlapping one), which they missed, and what they
marked where none was known. The score is not judged: ESA's scores differ
from person to person. Nothing is stored (services/practice.py).
"""
import json
import re
from dataclasses import dataclass

from ...services import practice
from . import spans as esa_spans

TEMPLATE = "volunteer/practice_esa.html"
HEADER = ["source", "translation", "why"]
# A known error: [[severity:text]], the text without brackets (so it cannot
# hold another mark); any other "[[" or "]]" is a malformed file.
MARK = re.compile(r"\[\[([^\[\]:]*):([^\[\]]*)\]\]")
BRACKETS = re.compile(r"\[\[|\]\]")


def read_marked(marked):
    """(translation, spans) of a translation with its errors marked inline:
    the text without the marks, and the spans as esa_spans.parse gives them.
    Raises ValueError saying what is wrong."""
    text, spans, at, omissions = [], [], 0, 0
    for match in MARK.finditer(marked):
        between = marked[at:match.start()]
        if BRACKETS.search(between):
            raise ValueError(f"'{BRACKETS.search(between).group()}' outside a mark: write an error as "
                             "[[minor:words]] or [[major:words]], without brackets inside")
        text.append(between)
        severity, words = match.group(1).strip(), match.group(2)
        if severity not in esa_spans.SEVERITIES:
            raise ValueError(f"[[{match.group(1)}:...]]: the severity must be minor or major")
        start = len("".join(text))
        if not words:
            omissions += 1
            spans.append({"start": None, "end": None, "severity": severity})
        elif words != words.strip():
            raise ValueError(f"[[{severity}:{words}]]: a marked error begins or ends with a space; mark the words only")
        else:
            spans.append({"start": start, "end": start + len(words), "severity": severity})
        text.append(words)
        at = match.end()
    rest = marked[at:]
    if BRACKETS.search(rest):
        raise ValueError(f"'{BRACKETS.search(rest).group()}' outside a mark: write an error as "
                         "[[minor:words]] or [[major:words]], without brackets inside")
    text = "".join(text) + rest
    if not text.strip():
        raise ValueError("the translation is empty without its marks")
    if omissions > 1:
        raise ValueError("more than one omission ([[minor:]] or [[major:]]); a volunteer can mark one")
    return text, esa_spans.parse(spans, length=len(text))


def read_row(cells):
    """((source, translation, "", why), spans) of a practice.tsv row
    (source, marked translation, why); ValueError if the marks are malformed."""
    source, marked, why = cells
    translation, spans = read_marked(marked)
    return (source, translation, "", why), spans


def overlaps(a, b):
    """Whether two spans overlap: two omissions do; an omission and a span do not."""
    if a["start"] is None or b["start"] is None:
        return a["start"] is None and b["start"] is None
    return a["start"] < b["end"] and b["start"] < a["end"]


@dataclass(frozen=True)
class Feedback:
    """The known errors found (each with the severity the volunteer gave),
    those missed, and the marks that match no known error."""

    found: tuple  # (known span, the severity marked)
    missed: tuple
    extra: tuple

    @property
    def correct(self):
        return not self.missed and not self.extra


def feedback(expected, marked):
    """Feedback on the spans ``marked`` against the ``expected`` ones: a known
    error is found when a mark overlaps it (a mark may find several)."""
    found, missed = [], []
    for span in expected:
        hits = [mark for mark in marked if overlaps(span, mark)]
        if hits:
            found.append((span, hits[0]["severity"]))
        else:
            missed.append(span)
    extra = [mark for mark in marked if not any(overlaps(span, mark) for span in expected)]
    return Feedback(tuple(found), tuple(missed), tuple(extra))


def pieces(text, spans):
    """The text cut at the spans: (text, severity or None) in order, for the
    page to show the known errors without JavaScript."""
    out, at = [], 0
    for span in spans:
        if span["start"] is None:
            continue
        out += [(text[at:span["start"]], None)] if span["start"] > at else []
        out.append((text[span["start"]:span["end"]], span["severity"]))
        at = span["end"]
    return out + ([(text[at:], None)] if at < len(text) else [])


@dataclass(frozen=True)
class Shown:
    """One ESA practice item as shown: its place among ``total``, its texts,
    its known errors, and the explanation (a campaign_texts.CampaignText)."""

    number: int
    total: int
    source: str
    translation: str
    spans: list
    why: object

    def pieces(self):
        """The translation cut at its known errors (``pieces``)."""
        return pieces(self.translation, self.spans)

    def quote(self, span):
        """The words of a span, or None for an omission."""
        return None if span["start"] is None else self.translation[span["start"]:span["end"]]


def show(campaign, number, state=None, locale=None):
    """Practice item ``number`` (from 1) as shown, or None past the last."""
    item = practice.item(campaign.id, number)
    if item is None:
        return None
    return Shown(number, practice.count(campaign.id), item.source, item.better, item.spans or [],
                 practice.why_of(campaign, item, locale))


# What the volunteer's practice page asks (app/volunteer/views.py).

def form(**data):
    from .form import PracticeForm

    return PracticeForm(**data)


def begin(rng):
    return None  # nothing to draw: one translation, shown as it is


def answered(form):
    """(state, the marks) of a valid answer; the page compares them with the
    item's known errors (``result``)."""
    return None, esa_spans.parse(json.loads(form.spans.data or "[]")) or []


def result(shown, marked):
    """Feedback on the marks; a mark beyond the text (an edited form) counts as none."""
    fitting = esa_spans.parse(marked, length=len(shown.translation)) or []
    return feedback(shown.spans, fitting)


def form_for(shown):
    return form(formdata=None, number=shown.number)
