"""CSRF: every state-changing request without a valid token is refused and
changes nothing. The routes come from ``app.url_map``, so a new POST route
is tested the day it is added; the same requests with a token succeed (the
refusal is the token's doing, not bad data)."""
import hashlib

from sqlalchemy import select

from app.extensions import db
from app.models import Control
from app.services import accounts
from helpers import csrf_token, register
from security_helpers import STRONG, db_snapshot, login, make_staff

UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}
NEW_PASSWORD = "a brand new secret 1"


def _volunteer_data(app):
    """Valid bodies for each endpoint, by endpoint name: (who, json or form)."""
    user = db.session.scalar(select(accounts.User).where(accounts.User.username == "ane"))
    reset_token = accounts.make_token(app.config["SECRET_KEY"], "reset", user)
    aide = db.session.scalar(select(accounts.User.id).where(accounts.User.username == "aide"))
    return {
        "volunteer.join": ("other", "/c/test/join", {"source_level": "B1-B2", "target_level": "C1-C2", "consent": "y"}),
        "volunteer.evaluate": ("volunteer", "/c/test/evaluate", "judgment-form"),
        "volunteer.ranking_visibility": ("volunteer", "/c/test/ranking-visibility", {"hide": "1"}),
        "volunteer.api_judgment": ("volunteer", "/c/test/api/judgment", "judgment-json"),
        "auth.login": ("anonymous", "/login", {"email": "ane@example.org", "password": STRONG}),
        "auth.logout": ("volunteer", "/logout", {}),
        "auth.register": ("anonymous", "/c/test/register", {
            "username": "newbie", "email": "newbie@example.org", "password": STRONG, "password2": STRONG,
            "age_group": "26-35", "studies_level": "university", "studies_field": "humanities",
            "source_level": "B1-B2", "target_level": "C1-C2", "consent": "y"}),
        "auth.resend_confirmation": ("volunteer", "/confirm", {}),
        "auth.reset_request": ("anonymous", "/reset", {"email": "ane@example.org"}),
        "auth.set_language": ("volunteer", "/language", {"lang": "eu"}),
        "organiser.set_status": ("organiser", "/organiser/c/test/status", {"status": "closed"}),
        "organiser.announce": ("organiser", "/organiser/c/test/announce", {"text": "Hello"}),
        "organiser.raffle_commit": ("organiser", "/organiser/c/test/raffle/commit",
                                    {"seed_sha256": hashlib.sha256(b"seed").hexdigest()}),
        "organiser.raffle_draw": ("organiser", "/organiser/c/test/raffle/draw", {"seed": "seed", "prizes": "1"}),
        "organiser.raffle_notify": ("organiser", "/organiser/c/test/raffle/notify", {"prize": "1", "note": "Hi"}),
        "organiser.accounts_page": ("admin", "/organiser/accounts", {
            "role": "researcher", "username": "sci", "email": "sci@example.org", "password": STRONG}),
        # Participation 1 is the volunteer's (ane); refused or not, a decision is a 302 with a token.
        "organiser.clear_hold": ("organiser", "/organiser/c/test/volunteer/1/clear-hold", {}),
        "organiser.void_ticket": ("organiser", "/organiser/c/test/volunteer/1/ticket/1/void", {}),
        "organiser.dismiss": ("organiser", "/organiser/c/test/volunteer/1/dismiss", {"reason": "a test"}),
        "organiser.add_organiser": ("admin", "/organiser/c/test/organisers/add", {"username": "aide"}),
        "organiser.remove_organiser": ("admin", f"/organiser/c/test/organisers/{aide}/remove", {}),
        # Last: a new password ends the volunteer's other sessions.
        "auth.reset": ("anonymous", f"/reset/{reset_token}", {"password": NEW_PASSWORD, "password2": NEW_PASSWORD}),
    }


def _clients(app):
    clients = {"anonymous": app.test_client(), "volunteer": app.test_client(), "organiser": app.test_client(),
               "other": app.test_client(), "admin": app.test_client()}
    register(clients["volunteer"])
    make_staff("organiser", "boss")
    make_staff("organiser", "aide")  # given and taken the campaign by the admin
    make_staff("admin", "chief")
    make_staff("volunteer", "other")
    assert login(clients["organiser"], "boss@example.org").status_code == 302
    assert login(clients["admin"], "chief@example.org").status_code == 302
    assert login(clients["other"], "other@example.org").status_code == 302
    return clients


def _prepare(client, body):
    """The body to send; for a judgment, the volunteer's current item is
    served first (that is a change of its own, before the snapshot)."""
    if body in ("judgment-json", "judgment-form"):
        item = client.get("/c/test/api/item").get_json()["item"]
        better = set(db.session.scalars(select(Control.better)))
        choice = "right" if item["right"] in better else "left"
        answer = {"token": item["token"], "choice": choice}
        return ("json", answer) if body == "judgment-json" else ("form", answer)
    return "form", dict(body)


def _send(client, url, prepared, token=None):
    kind, body = prepared
    if kind == "json":
        return client.post(url, json=body, headers={"X-CSRFToken": token} if token else {})
    return client.post(url, data={**body, "csrf_token": token} if token else body)


def _unsafe_rules(app):
    return sorted(
        (rule for rule in app.url_map.iter_rules() if rule.methods & UNSAFE and rule.endpoint != "static"),
        key=lambda rule: rule.endpoint,
    )


def test_every_state_changing_route_refuses_a_request_without_token(app, make_campaign):
    make_campaign()
    clients = _clients(app)
    known = _volunteer_data(app)
    tested = []
    for rule in _unsafe_rules(app):
        who, url, body = known.get(rule.endpoint, ("organiser", None, {}))
        if url is None:  # a route this test does not know yet: refused all the same
            url = rule.build({name: "test" for name in rule.arguments}, append_unknown=False)[1]
        client = clients[who]
        prepared = _prepare(client, body)
        before = db_snapshot()
        response = _send(client, url, prepared)
        assert response.status_code == 400, f"{rule.endpoint}: {response.status_code} without a CSRF token"
        assert "Form expired" in response.get_data(as_text=True) or response.is_json
        assert db_snapshot() == before, f"{rule.endpoint}: the database changed without a CSRF token"
        assert "bozka_lang" not in response.headers.get("Set-Cookie", "")
        tested.append(rule.endpoint)
    assert set(known) <= set(tested), "a route this test knows is gone: update the test"
    assert len(tested) >= 16


def test_the_same_requests_with_a_token_are_accepted(app, make_campaign):
    """The control experiment: with the token, every request above does its job."""
    make_campaign()
    clients = _clients(app)
    for endpoint, (who, url, body) in _volunteer_data(app).items():
        client = clients[who]
        token = csrf_token(client, "/login" if who == "anonymous" else "/c/test/instructions")
        response = _send(client, url, _prepare(client, body), token)
        assert response.status_code in (200, 302), f"{endpoint}: {response.status_code} with a token"
        assert "Form expired" not in response.get_data(as_text=True), endpoint
        if endpoint == "auth.logout":  # the volunteer's later requests need a session
            assert login(client, "ane@example.org").status_code == 302
    user = db.session.scalar(select(accounts.User).where(accounts.User.username == "ane"))
    db.session.refresh(user)
    assert user.check_password(NEW_PASSWORD) and user.locale == "eu" and user.hide_from_ranking


def test_the_judgment_api_refuses_another_sessions_token(app, make_campaign):
    make_campaign()
    victim = app.test_client()
    register(victim)
    attacker = app.test_client()
    stolen_shape = csrf_token(attacker, "/login")  # a valid token, of another session
    item = victim.get("/c/test/api/item").get_json()["item"]
    before = db_snapshot()
    for headers in ({}, {"X-CSRFToken": stolen_shape}, {"X-CSRFToken": "x" * 91}):
        response = victim.post("/c/test/api/judgment", json={"token": item["token"], "choice": "left"},
                               headers=headers)
        assert response.status_code == 400 and response.is_json
        assert response.get_json()["status"] == "error"
    # A form-encoded cross-site post (what an attacker's page can send) too.
    response = victim.post("/c/test/api/judgment", data={"token": item["token"], "choice": "left"})
    assert response.status_code == 400
    assert db_snapshot() == before
