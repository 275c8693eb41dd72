"""Names and addresses people cannot confuse or multiply: usernames in
NFKC with nothing invisible, Unicode TR39 (UTS #39) through ICU's spoof
checker (PyICU) for lookalikes, not tables of our own; and the key that
makes the variants of one mailbox one address."""
import unicodedata

import icu

_SKELETONS = icu.SpoofChecker()
# Highly restrictive: one script, or Latin with Han and the Japanese or
# Korean scripts (TR39 5.2); and digits of one numbering system.
_SCRIPTS = icu.SpoofChecker()
_SCRIPTS.setChecks(icu.USpoofChecks.RESTRICTION_LEVEL | icu.USpoofChecks.MIXED_NUMBERS)
_SCRIPTS.setRestrictionLevel(icu.URestrictionLevel.HIGHLY_RESTRICTIVE)

# Mail providers that ignore dots in the local part (googlemail.com is gmail.com).
DOTLESS_DOMAINS = {"gmail.com": "gmail.com", "googlemail.com": "gmail.com"}


def normalise(name):
    """The username as stored and compared: NFKC (full-width "ｇｉ５" is
    "gi5"), without surrounding white space."""
    return unicodedata.normalize("NFKC", name or "").strip()


def invisible(character):
    """True for a character that shows nothing of its own: Unicode's
    default-ignorable code points (Hangul fillers U+115F, U+1160, U+3164,
    U+FFA0, variation selectors, zero-width joiners), other format and
    control characters, and spaces."""
    return (unicodedata.category(character)[0] in "CZ"
            or icu.Char.hasBinaryProperty(character, icu.UProperty.DEFAULT_IGNORABLE_CODE_POINT))


def has_invisible(name):
    """True if the name, once normalised, holds a character that shows nothing."""
    return any(invisible(character) for character in normalise(name))


def skeleton(name):
    """The key two names share when they look alike: the TR39 skeleton, in
    lower case (so "PAYPAL" and "paypaI" share "paypal" too)."""
    return _SKELETONS.getSkeleton(0, _SKELETONS.getSkeleton(0, name).casefold())


def mixes_scripts(name):
    """True if the name mixes scripts (Latin "a" with Cyrillic "а") or digits of two systems."""
    return _SCRIPTS.check(name) != 0


def email_key(email):
    """The key two addresses share when they reach the same mailbox: lower
    case, without a "+tag" (any domain), and for gmail.com and
    googlemail.com without dots in the local part. The address as typed is
    still the one mail goes to; only uniqueness uses the key."""
    local, _at, domain = (email or "").strip().lower().rpartition("@")
    if not _at:
        return domain
    local = local.split("+", 1)[0] or local
    domain = domain.rstrip(".")
    if domain in DOTLESS_DOMAINS:
        local, domain = local.replace(".", "") or local, DOTLESS_DOMAINS[domain]
    return f"{local}@{domain}"
