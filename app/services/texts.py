"""Comparing texts as a reader sees them: white space does not make two
translations different (the importer's checks, the protocols' items)."""


def same_text(text):
    """A text with its white space normalised, for comparisons."""
    return " ".join(text.split())


def same_output(a, b):
    """Identical outputs, ignoring differences in white space."""
    return same_text(a) == same_text(b)
