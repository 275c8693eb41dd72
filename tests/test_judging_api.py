"""The judging API (POST /c/<slug>/api/judgment): one Flask view, through
Flask's whole request pipeline (session, log-in, CSRF, locale, hooks,
error handlers), for every judgment."""
import json

import pytest
from flask import g, request
from sqlalchemy import func, select

from app.extensions import db
from app.models import Item, User
from helpers import csrf_token, register
from test_volunteer_flow import right_answer


def _volunteer(client, make_campaign, **campaign):
    make_campaign(sentences=20, **campaign)
    register(client)
    headers = {"X-CSRFToken": csrf_token(client, "/c/test/welcome")}
    item = client.get("/c/test/api/item").get_json()["item"]
    return headers, item


def _answer(item):
    return {"token": item["token"], "choice": right_answer(item["left"], item["right"])}


def _answered():
    return db.session.scalar(select(func.count(Item.id)).where(Item.answered_at.is_not(None)))


def test_a_judgment_runs_flasks_before_and_after_request_hooks(app, client, make_campaign):
    seen = []

    @app.before_request
    def before():
        seen.append(("before", request.path, g.get("bozka_campaign")))

    @app.after_request
    def after(response):
        seen.append(("after", request.path, response.status_code))
        return response

    headers, item = _volunteer(client, make_campaign)
    seen.clear()
    response = client.post("/c/test/api/judgment", json=_answer(item), headers=headers)
    assert response.status_code == 200 and response.get_json()["status"] == "accepted"
    path = "/c/test/api/judgment"
    assert seen == [("before", path, None), ("after", path, 200)]


def test_a_judgment_answers_with_the_next_item_and_the_sites_headers(client, make_campaign):
    headers, item = _volunteer(client, make_campaign)
    response = client.post("/c/test/api/judgment", json=_answer(item), headers=headers)
    assert response.status_code == 200 and response.mimetype == "application/json"
    data = response.get_json()
    assert set(data) == {"status", "answered", "counted", "held", "tickets", "tickets_count", "new_ticket", "item",
                         "mine"}
    assert data["status"] == "accepted" and data["answered"] == 1 and data["counted"] and not data["held"]
    assert data["item"]["token"] != item["token"] and "position" not in data["item"]
    assert "You have judged 1 sentence." in data["mine"]
    page = client.get("/c/test/welcome")
    for name in ("Content-Security-Policy", "X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy"):
        assert response.headers[name] == page.headers[name]
    # A replay: "stale", counted once.
    replay = client.post("/c/test/api/judgment", json=_answer(item), headers=headers).get_json()
    assert replay["status"] == "stale" and replay["answered"] == 1 and _answered() == 1
    second = client.post("/c/test/api/judgment", json=_answer(data["item"]), headers=headers).get_json()
    assert second["answered"] == 2 and "You have judged 2 sentences." in second["mine"]


@pytest.mark.parametrize("case", ["no csrf", "forged csrf", "other session's csrf", "bad json", "bad choice",
                                  "long token", "form body", "no cookie", "forged cookie", "unknown campaign",
                                  "NUL in the query"])
def test_anything_unusual_is_refused_and_changes_nothing(app, client, make_campaign, case):
    headers, item = _volunteer(client, make_campaign)
    other = app.test_client()
    register(other, username="mikel", email="mikel@example.org")
    other_csrf = csrf_token(other, "/c/test/welcome")
    body, kwargs, path = json.dumps(_answer(item)), {}, "/c/test/api/judgment"
    if case == "no csrf":
        headers = {}
    elif case == "forged csrf":
        headers = {"X-CSRFToken": headers["X-CSRFToken"][:-2] + "xx"}
    elif case == "other session's csrf":
        headers = {"X-CSRFToken": other_csrf}
    elif case == "bad json":
        body = body[:-1]
    elif case == "bad choice":
        body = json.dumps({"token": item["token"], "choice": "both"})
    elif case == "long token":
        body = json.dumps({"token": "x" * 33, "choice": "left"})
    elif case == "form body":
        kwargs = {"data": {"token": item["token"], "choice": "left"}}
    elif case == "no cookie":
        client.delete_cookie("session", domain="localhost")
    elif case == "forged cookie":
        cookie = client.get_cookie("session", domain="localhost").value
        client.set_cookie("session", cookie[:-3] + "abc", domain="localhost")
    elif case == "unknown campaign":
        path = "/c/nosuch/api/judgment"
    elif case == "NUL in the query":
        kwargs = {"query_string": "x=%00", "data": body, "content_type": "application/json"}
    if kwargs:
        response = client.post(path, headers=headers, **kwargs)
    else:
        response = client.post(path, data=body, content_type="application/json", headers=headers)
    assert response.status_code in (400, 401, 302, 404)
    assert _answered() == 0


def test_who_has_not_joined_is_refused(client, make_campaign):
    make_campaign(sentences=20)
    from app.services import accounts

    accounts.create_user("mikel@example.org", "mikel", "correct horse 2")
    db.session.commit()
    token = csrf_token(client, "/login")
    client.post("/login", data={"csrf_token": token, "email": "mikel@example.org", "password": "correct horse 2"})
    headers = {"X-CSRFToken": csrf_token(client, "/login")}
    response = client.post("/c/test/api/judgment", json={"token": "abc", "choice": "left"}, headers=headers)
    assert response.status_code == 403
    assert db.session.scalar(select(func.count(Item.id))) == 0


def test_a_changed_password_logs_the_session_out(client, make_campaign):
    headers, item = _volunteer(client, make_campaign)
    user = db.session.scalar(select(User).where(User.username == "ane"))
    user.set_password("another horse 7")
    db.session.commit()
    response = client.post("/c/test/api/judgment", json=_answer(item), headers=headers)
    assert response.status_code in (401, 302)
    assert _answered() == 0


def test_from_another_address_the_session_is_marked_not_fresh(client, make_campaign):
    """Flask-Login's session protection: the judgment is taken, the session
    is marked (a new cookie), and later judgments go on."""
    headers, item = _volunteer(client, make_campaign)
    moved = {"REMOTE_ADDR": "10.9.8.7"}
    first = client.post("/c/test/api/judgment", json=_answer(item), headers=headers, environ_base=moved)
    assert first.get_json()["status"] == "accepted"
    assert "Set-Cookie" in first.headers  # _fresh = False
    second = client.post("/c/test/api/judgment", json=_answer(first.get_json()["item"]), headers=headers,
                         environ_base=moved)
    assert second.get_json()["answered"] == 2


def test_over_https_the_referrer_is_checked(client, make_campaign):
    headers, item = _volunteer(client, make_campaign)
    refused = client.post("/c/test/api/judgment", json=_answer(item), headers=headers, base_url="https://localhost")
    assert refused.status_code == 400 and _answered() == 0
    accepted = client.post("/c/test/api/judgment", json=_answer(item), base_url="https://localhost",
                           headers={**headers, "Referer": "https://localhost/c/test/evaluate"})
    assert accepted.get_json()["status"] == "accepted" and _answered() == 1


def test_the_summary_is_in_the_volunteers_language(client, make_campaign):
    headers, item = _volunteer(client, make_campaign)
    user = db.session.scalar(select(User).where(User.username == "ane"))
    user.locale = "eu"
    db.session.commit()
    data = client.post("/c/test/api/judgment", json=_answer(item), headers=headers).get_json()
    assert "You have judged" not in data["mine"]
    with client.application.test_request_context():
        from flask_babel import force_locale, ngettext

        with force_locale("eu"):
            expected = ngettext("You have judged %(num)d sentence.", "You have judged %(num)d sentences.", 1)
    assert expected in data["mine"]


def test_under_gevent_a_ready_request_waits_for_those_already_waiting():
    """A connection whose next request is already there (a keep-alive
    socket read without blocking) is not served twice in a row while
    another connection waits: each request first lets the waiting ones run."""
    import gevent

    from app.factory import YieldBeforeRequest

    served = []

    def inner(environ, start_response):
        served.append(environ["who"])
        return [b""]

    app = YieldBeforeRequest(inner)

    def connection(who, requests):
        for _ in range(requests):
            app({"who": who}, None)

    gevent.joinall([gevent.spawn(connection, "busy", 3), gevent.spawn(connection, "other", 1)])
    assert served == ["busy", "other", "busy", "busy"]
