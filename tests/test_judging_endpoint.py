"""The judging API's WSGI endpoint (app/volunteer/endpoint.py): it answers the
usual judgment itself, with the same checks as the Flask app, and hands
every other request to the Flask app untouched."""
import hashlib
import json

import pytest
from flask_login.utils import _create_identifier
from sqlalchemy import func, select

from app.extensions import db
from app.models import Item, User
from app.volunteer.endpoint import JudgmentEndpoint, session_identifier
from helpers import csrf_token, register
from test_volunteer_flow import _right_answer


@pytest.fixture
def flask_calls(app):
    """How many requests reached the Flask app behind the endpoint."""
    endpoint = app.wsgi_app
    while not isinstance(endpoint, JudgmentEndpoint):
        endpoint = endpoint.wsgi_app
    inner, calls = endpoint.wsgi_app, []

    def counting(environ, start_response):
        calls.append(environ["PATH_INFO"])
        return inner(environ, start_response)

    endpoint.wsgi_app = counting
    yield calls
    endpoint.wsgi_app = inner


def _volunteer(client, make_campaign, **campaign):
    make_campaign(sentences=20, **campaign)
    register(client)
    headers = {"X-CSRFToken": csrf_token(client, "/c/test/welcome")}
    item = client.get("/c/test/api/item").get_json()["item"]
    return headers, item


def _answer(item):
    return {"token": item["token"], "choice": _right_answer(item["left"], item["right"])}


def _answered():
    return db.session.scalar(select(func.count(Item.id)).where(Item.answered_at.is_not(None)))


def test_the_usual_judgment_never_reaches_flask_and_answers_as_the_view_does(client, make_campaign, flask_calls):
    headers, item = _volunteer(client, make_campaign)
    flask_calls.clear()
    response = client.post("/c/test/api/judgment", json=_answer(item), headers=headers)
    assert flask_calls == []
    assert response.status_code == 200 and response.mimetype == "application/json"
    data = response.get_json()
    assert set(data) == {"status", "answered", "tickets", "new_ticket", "item", "mine"}
    assert data["status"] == "accepted" and data["answered"] == 1 and data["item"]["position"] == 2
    assert "You have judged 1 sentence." in data["mine"]
    # The same security headers as every page of the Flask app.
    page = client.get("/c/test/welcome")
    for name in ("Content-Security-Policy", "X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy"):
        assert response.headers[name] == page.headers[name]
    assert "Set-Cookie" not in response.headers  # the session is not changed
    # A replay: "stale", counted once, still without Flask.
    flask_calls.clear()
    replay = client.post("/c/test/api/judgment", json=_answer(item), headers=headers).get_json()
    assert replay["status"] == "stale" and replay["answered"] == 1 and _answered() == 1
    assert flask_calls == []


def test_the_flask_view_gives_the_same_answer(app, client, make_campaign, flask_calls, monkeypatch):
    """With the endpoint switched off for one request, the view answers the
    next judgment: same shape, same count, same summary text."""
    headers, item = _volunteer(client, make_campaign)
    fast = client.post("/c/test/api/judgment", json=_answer(item), headers=headers).get_json()
    monkeypatch.setattr(JudgmentEndpoint, "_judgment", lambda self, environ, slug: None)
    flask_calls.clear()
    slow = client.post("/c/test/api/judgment", json=_answer(fast["item"]), headers=headers).get_json()
    assert flask_calls == ["/c/test/api/judgment"]
    assert set(slow) == set(fast) and slow["answered"] == 2 and slow["status"] == "accepted"
    assert slow["mine"] == fast["mine"].replace("judged 1 sentence.", "judged 2 sentences.")


@pytest.mark.parametrize("case", ["no csrf", "forged csrf", "other session's csrf", "bad json", "bad choice",
                                  "long token", "form body", "no cookie", "forged cookie", "unknown campaign",
                                  "NUL in the query"])
def test_anything_unusual_is_left_to_flask_and_changes_nothing(app, client, make_campaign, flask_calls, case):
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
    flask_calls.clear()
    if kwargs:
        response = client.post(path, headers=headers, **kwargs)
    else:
        response = client.post(path, data=body, content_type="application/json", headers=headers)
    assert flask_calls == [path]
    assert response.status_code in (400, 401, 302, 404)
    assert _answered() == 0


def test_who_has_not_joined_is_refused_by_flask(client, make_campaign, flask_calls):
    make_campaign(sentences=20)
    from app.services import accounts

    accounts.create_user("mikel@example.org", "mikel", "correct horse 2")
    db.session.commit()
    token = csrf_token(client, "/login")
    client.post("/login", data={"csrf_token": token, "email": "mikel@example.org", "password": "correct horse 2"})
    headers = {"X-CSRFToken": csrf_token(client, "/login")}
    flask_calls.clear()
    response = client.post("/c/test/api/judgment", json={"token": "abc", "choice": "left"}, headers=headers)
    assert response.status_code == 403 and flask_calls == ["/c/test/api/judgment"]
    assert db.session.scalar(select(func.count(Item.id))) == 0


def test_a_changed_password_logs_the_session_out(client, make_campaign, flask_calls):
    headers, item = _volunteer(client, make_campaign)
    user = db.session.scalar(select(User).where(User.username == "ane"))
    user.set_password("another horse 7")
    db.session.commit()
    flask_calls.clear()
    response = client.post("/c/test/api/judgment", json=_answer(item), headers=headers)
    assert flask_calls == ["/c/test/api/judgment"] and response.status_code in (401, 302)
    assert _answered() == 0


def test_session_protection_as_flask_login_does_it(client, make_campaign, flask_calls):
    """From another address the session is no longer fresh: Flask-Login marks
    it (the Flask app answers and sets the cookie); after that the endpoint
    takes the marked session as it is."""
    headers, item = _volunteer(client, make_campaign)
    moved = {"REMOTE_ADDR": "10.9.8.7"}
    flask_calls.clear()
    first = client.post("/c/test/api/judgment", json=_answer(item), headers=headers, environ_base=moved)
    assert flask_calls == ["/c/test/api/judgment"] and first.get_json()["status"] == "accepted"
    assert "Set-Cookie" in first.headers  # _fresh = False
    second = client.post("/c/test/api/judgment", json=_answer(first.get_json()["item"]), headers=headers,
                         environ_base=moved)
    assert flask_calls == ["/c/test/api/judgment"] and second.get_json()["answered"] == 2


def test_over_https_the_referrer_is_checked_as_flask_wtf_does(client, make_campaign, flask_calls):
    headers, item = _volunteer(client, make_campaign)
    flask_calls.clear()
    refused = client.post("/c/test/api/judgment", json=_answer(item), headers=headers, base_url="https://localhost")
    assert refused.status_code == 400 and flask_calls == ["/c/test/api/judgment"] and _answered() == 0
    flask_calls.clear()
    accepted = client.post("/c/test/api/judgment", json=_answer(item), base_url="https://localhost",
                           headers={**headers, "Referer": "https://localhost/c/test/evaluate"})
    assert accepted.get_json()["status"] == "accepted" and flask_calls == [] and _answered() == 1


def test_the_summary_is_in_the_volunteers_language(client, make_campaign, flask_calls):
    headers, item = _volunteer(client, make_campaign)
    user = db.session.scalar(select(User).where(User.username == "ane"))
    user.locale = "eu"
    db.session.commit()
    flask_calls.clear()
    data = client.post("/c/test/api/judgment", json=_answer(item), headers=headers).get_json()
    assert flask_calls == [] and "You have judged" not in data["mine"]
    with client.application.test_request_context():
        from flask_babel import force_locale, ngettext

        with force_locale("eu"):
            expected = ngettext("You have judged %(num)d sentence.", "You have judged %(num)d sentences.", 1)
    assert expected in data["mine"]


@pytest.mark.parametrize("forwarded", [None, "203.0.113.9, 10.0.0.1"])
def test_the_session_identifier_is_flask_logins(app, forwarded):
    headers = {"User-Agent": "Mozilla/5.0 (Linux; Android 14) Ã±"}
    if forwarded:
        headers["X-Forwarded-For"] = forwarded
    with app.test_request_context("/", headers=headers, environ_base={"REMOTE_ADDR": "192.0.2.4"}) as context:
        assert session_identifier(context.request.environ) == _create_identifier()
    assert len(hashlib.sha512().hexdigest()) == len(session_identifier({}))


def test_a_checked_signature_is_kept_only_until_its_age_limit(monkeypatch):
    from itsdangerous import URLSafeTimedSerializer

    from app.volunteer import endpoint

    serializer = URLSafeTimedSerializer("secret", salt="s")
    signed = serializer.dumps("value")
    verified = endpoint.Verified()
    assert verified.loads(serializer, signed, 60) == "value"
    # A character inside the signature (the last one's low bits are padding,
    # so changing it may leave the signature's bytes as they were).
    forged = signed[:-5] + ("A" if signed[-5] != "A" else "B") + signed[-4:]
    assert verified.loads(serializer, forged, 60) is None
    assert verified.loads(URLSafeTimedSerializer("other", salt="s"), signed, 60) is None  # another key
    later = endpoint.time.time() + 61
    monkeypatch.setattr(endpoint.time, "time", lambda: later)
    assert verified.loads(serializer, signed, 60) is None  # known, but too old now
    assert verified.loads(serializer, signed, None) == "value"  # no limit


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
