"""Error Span Annotation (Kocmi et al., WMT 2024): spans of the translation
marked minor or major, then a 0-100 score, segment by segment in document
order. ``protocol`` is what the registry (``app.protocols``) hands the
shared machinery; ``spans`` checks the marks; ``export``, ``dashboard``,
``review`` and ``form`` are ESA's own."""
