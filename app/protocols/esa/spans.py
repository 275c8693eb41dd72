"""Error spans as a volunteer marks them (Kocmi et al., WMT 2024): a part of
the translation, minor or major; an omission has no offsets. Offsets are
code points of the exact text shown (Python ``str`` indices), start
inclusive, end exclusive. Plain functions of values: the form, the JSON
answer and the answer's check against the text all use ``parse``."""

SEVERITIES = ("minor", "major")
MAX_SPANS = 100  # more marks than a segment of 2,000 characters can hold apart
MAX_TEXT = 20000  # characters of the spans as JSON text, as the form and the JSON answer send them
# A span-based score of a segment, as WMT24 reports it beside the 0-100 score.
PENALTY = {"minor": -1, "major": -5}


def parse(value, length=None):
    """The spans of an answer as a sorted list of {"start", "end",
    "severity"} dicts, or None when ``value`` is not a list of such spans
    (overlapping, out of order or out of the text's ``length``, when given)."""
    if not isinstance(value, list) or len(value) > MAX_SPANS:
        return None
    spans = []
    for span in value:
        if not isinstance(span, dict) or set(span) != {"start", "end", "severity"}:
            return None
        start, end, severity = span["start"], span["end"], span["severity"]
        if severity not in SEVERITIES:
            return None
        if start is None and end is None:  # an omission
            spans.append({"start": None, "end": None, "severity": severity})
            continue
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in (start, end)) or not 0 <= start < end:
            return None
        if length is not None and end > length:
            return None
        spans.append({"start": start, "end": end, "severity": severity})
    marked = sorted((s for s in spans if s["start"] is not None), key=lambda s: s["start"])
    if any(a["end"] > b["start"] for a, b in zip(marked, marked[1:])):
        return None
    return marked + [s for s in spans if s["start"] is None]


def counts(spans):
    """(minor, major, omissions) of a segment's spans."""
    minor = sum(1 for s in spans if s["severity"] == "minor")
    return minor, len(spans) - minor, sum(1 for s in spans if s["start"] is None)


def span_score(spans):
    """The segment's span-based score: minor -1, major -5 (0: no error marked)."""
    return sum(PENALTY[s["severity"]] for s in spans)
