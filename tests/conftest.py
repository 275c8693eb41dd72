import os
import shutil
import tempfile

import pytest

from app.extensions import db
from app.services.campaign_writer import create_campaign
from app.services.importer import read_campaign
from browser import browser  # noqa: F401 (the session's Chromium, for every folder)
from databases import fresh_schema
from helpers import QUIET_SIGNS, build_app, write_campaign


def pytest_configure(config):
    """Apps built by the tests keep their instance files (secret key, the demo's
    raffle seeds) in a folder of their own, never in the checkout's instance/."""
    if "BOZKA_INSTANCE" not in os.environ:
        os.environ["BOZKA_INSTANCE"] = config.bozka_instance = tempfile.mkdtemp(prefix="bozka-tests-")


def pytest_unconfigure(config):
    folder = getattr(config, "bozka_instance", None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


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
    app = build_app(tmp_path)
    database = app.config["SQLALCHEMY_DATABASE_URI"]

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
        folder = write_campaign(str(tmp_path / "campaign"), **(QUIET_SIGNS | kwargs))
        campaign = create_campaign(read_campaign(folder))
        db.session.commit()
        return campaign

    return make


