"""Usernames people cannot confuse: Unicode TR39 (UTS #39) through ICU's
spoof checker (PyICU), not tables of our own."""
import icu

_SKELETONS = icu.SpoofChecker()
# Highly restrictive: one script, or Latin with Han and the Japanese or
# Korean scripts (TR39 5.2); and digits of one numbering system.
_SCRIPTS = icu.SpoofChecker()
_SCRIPTS.setChecks(icu.USpoofChecks.RESTRICTION_LEVEL | icu.USpoofChecks.MIXED_NUMBERS)
_SCRIPTS.setRestrictionLevel(icu.URestrictionLevel.HIGHLY_RESTRICTIVE)


def skeleton(name):
    """The key two names share when they look alike: the TR39 skeleton, in
    lower case (so "PAYPAL" and "paypaI" share "paypal" too)."""
    return _SKELETONS.getSkeleton(0, _SKELETONS.getSkeleton(0, name).casefold())


def mixes_scripts(name):
    """True if the name mixes scripts (Latin "a" with Cyrillic "а") or digits of two systems."""
    return _SCRIPTS.check(name) != 0
