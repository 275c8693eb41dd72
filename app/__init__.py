"""Bozka: crowd evaluation of machine translation.

Kept import-light on purpose: ``app.stats`` must be importable without
Flask, so the application factory lives in ``app.factory`` and is only
imported when ``create_app`` is called.
"""


def create_app(*args, **kwargs):
    from .factory import create_app as _create_app

    return _create_app(*args, **kwargs)
