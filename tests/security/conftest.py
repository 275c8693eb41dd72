"""Fixtures of the security tests (issue 8).

The shared ``app`` fixture (tests/conftest.py) turns rate limits off; the
tests here that need them use ``limited_app``, built with ``RATELIMIT_ENABLED``.
"""
import pytest

from app import realtime
from app.extensions import db
from app.services import dashboard
from databases import fresh_schema
from helpers import build_app


@pytest.fixture
def limited_app(tmp_path):
    """The site with its rate limits on, as in production."""
    app = build_app(tmp_path, RATELIMIT_ENABLED=True)
    realtime.reset()
    dashboard.forget()
    with app.app_context():
        fresh_schema(app.config["SQLALCHEMY_DATABASE_URI"])
        yield app
        db.session.remove()
        db.engine.dispose()


@pytest.fixture(scope="module")
def live():
    """The site served as ``make run`` serves it, for one test module (a
    module that needs other settings defines its own ``live``)."""
    from test_security_faults_live import Site

    site = Site()
    try:
        site.start()
        yield site
    finally:
        site.remove()
