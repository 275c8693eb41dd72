import os
import re

import pytest

from app import create_app
from app.extensions import db
from app.services.importer import create_campaign, read_campaign
from browser import browser  # noqa: F401 (the session's Chromium, for every folder)
from databases import fresh_schema
from helpers import write_campaign



@pytest.fixture(autouse=True)
def fresh_user_per_event(monkeypatch):
    """Tests hold one app context, so ``g`` outlives requests and Socket.IO
    events (in production each has its own). Load the user afresh each time,
    as a new context would."""
    import flask_login.utils
    from flask import current_app, g, has_request_context

    def _get_user():
        if has_request_context():
            g.pop("_login_user", None)
            current_app.login_manager._load_user()
            return g._login_user
        return None

    monkeypatch.setattr(flask_login.utils, "_get_user", _get_user)


@pytest.fixture
def app(tmp_path):
    database = os.environ.get("BOZKA_TEST_DATABASE_URL") or f"sqlite:///{tmp_path / 'test.sqlite3'}"
    app = create_app(
        {
            "TESTING": True,
            "SQLALCHEMY_DATABASE_URI": database,
            "SECRET_KEY": "test-secret",
            "BOZKA_RANDOM_SEED": 1,
            "SERVER_NAME": "localhost",
            "SOCKETIO_MESSAGE_QUEUE": None,
            "SOCKETIO_ASYNC_MODE": "threading",
            "BOZKA_REALTIME_TICKER": False,
            "RATELIMIT_ENABLED": False,  # tests/test_security.py turns it on
        }
    )
    import random

    app.extensions["bozka_rng"] = random.Random(1)
    @app.before_request
    def fresh_g():
        # Tests hold one app context for direct database checks; in
        # production every request has its own, so give each request a
        # clean ``g`` (flask-login caches the user there).
        from flask import g

        for name in list(vars(g)):
            delattr(g, name)

    from app import realtime
    from app.services import dashboard

    realtime.reset()  # module-level caches are keyed by campaign id
    dashboard.forget()
    with app.app_context():
        fresh_schema(database)
        yield app
        db.session.remove()
        if database.startswith("sqlite"):
            db.drop_all()
        db.engine.dispose()  # no connections left behind between tests


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def make_campaign(app, tmp_path):
    def make(**kwargs):
        folder = write_campaign(str(tmp_path / "campaign"), **kwargs)
        campaign = create_campaign(read_campaign(folder))
        db.session.commit()
        return campaign

    return make


