"""Accounts and sessions: hashing, password policy, rate limits, the same
answer for known and unknown emails, signed expiring single-use tokens,
session rotation, cookie flags, the audit log."""
import hashlib
import re
import time
from datetime import timedelta

import pytest
from itsdangerous import TimestampSigner, URLSafeTimedSerializer
from sqlalchemy import func, select

from app.extensions import db
from app.models import AuditLog, User, utcnow
from app.services import accounts, raffle
from app.services.security import common_passwords, password_problem
from databases import fresh_schema
from helpers import build_app, csrf_token, register
from security_helpers import STRONG, add_campaign, assert_inert, login, make_staff

def _without_tokens(html):
    return re.sub(r'value="[^"]*"', 'value=""', html)


# --- hashing and password policy ------------------------------------------------

def test_passwords_are_stored_as_scrypt_hashes(app):
    user = accounts.create_user("a@example.org", "ane", STRONG)
    db.session.commit()
    assert user.password_hash.startswith("scrypt:")
    assert STRONG not in user.password_hash
    assert user.check_password(STRONG) and not user.check_password(STRONG + "x")
    other = accounts.create_user("b@example.org", "bea", STRONG)
    assert other.password_hash != user.password_hash  # salted


def test_common_password_list_is_loaded():
    words = common_passwords()
    assert len(words) >= 100
    assert {"password", "123456", "qwerty"} <= words


@pytest.mark.parametrize(
    "password, problem",
    [
        ("short1", "short"),
        ("1234567", "short"),
        ("password", "common"),
        ("Password", "common"),
        ("12345678", "common"),
        ("aaaaaaaaaaaa", "common"),  # too few distinct characters
        ("ane-the-volunteer", "personal"),
        ("ane@example.org", "personal"),
        (STRONG, None),
    ],
)
def test_password_policy(password, problem):
    assert password_problem(password, "ane-the-volunteer", "ane@example.org") == problem


@pytest.mark.parametrize("password", ["short", "password", "qwerty123", "iloveyou", "ane@example.org"])
def test_registration_refuses_weak_passwords(app, client, make_campaign, password):
    make_campaign()
    page = register(client, password=password)
    assert page.status_code == 200
    assert db.session.scalar(select(func.count(User.id))) == 0


# --- rate limits ----------------------------------------------------------------

def _flood(client, method, url, data_for, limit):
    """Send limit requests (all must pass the limiter), then one more."""
    for n in range(limit):
        response = getattr(client, method)(url, data=data_for(n))
        assert response.status_code != 429, f"request {n + 1} of {limit} to {url} was limited"
    return getattr(client, method)(url, data=data_for(limit))


def test_login_is_rate_limited(limited_app):
    client = limited_app.test_client()
    token = csrf_token(client, "/login")
    last = _flood(client, "post", "/login",
                  lambda n: {"csrf_token": token, "email": "x@example.org", "password": f"guess-{n}"}, 10)
    assert last.status_code == 429
    assert "Too many attempts" in last.get_data(as_text=True)
    # Reading the page is not limited.
    assert client.get("/login").status_code == 200


def test_registration_is_rate_limited(limited_app, tmp_path):
    add_campaign(tmp_path)
    client = limited_app.test_client()
    token = csrf_token(client, "/c/test/register")
    last = _flood(client, "post", "/c/test/register",
                  lambda n: {"csrf_token": token, "username": f"u{n}", "email": "bad"}, 5)
    assert last.status_code == 429


def test_password_reset_request_is_rate_limited(limited_app):
    client = limited_app.test_client()
    token = csrf_token(client, "/reset")
    last = _flood(client, "post", "/reset", lambda n: {"csrf_token": token, "email": f"p{n}@example.org"}, 5)
    assert last.status_code == 429


def test_reset_and_confirmation_links_are_rate_limited(limited_app):
    client = limited_app.test_client()
    for url in ("/reset/not-a-token", "/confirm/not-a-token"):
        for n in range(20):
            assert client.get(url).status_code != 429, f"{url}: request {n + 1} limited"
        assert client.get(url).status_code == 429


def test_resending_the_confirmation_is_rate_limited(limited_app, tmp_path):
    add_campaign(tmp_path)
    client = limited_app.test_client()
    assert register(client).status_code == 302
    token = csrf_token(client, "/c/test/welcome")
    last = _flood(client, "post", "/confirm", lambda n: {"csrf_token": token}, 5)
    assert last.status_code == 429


# --- the same answer whether or not an email is registered -----------------------

def test_reset_request_answers_the_same_for_known_and_unknown_emails(app, make_campaign):
    make_staff("volunteer", "known")
    answers = []
    for email in ("known@example.org", "nobody@example.org"):
        client = app.test_client()
        token = csrf_token(client, "/reset")
        response = client.post("/reset", data={"csrf_token": token, "email": email})
        page = client.get(response.headers["Location"])
        answers.append((response.status_code, response.headers["Location"], _without_tokens(page.get_data(as_text=True))))
    assert answers[0] == answers[1]


def test_login_answers_the_same_for_unknown_email_and_wrong_password(app, monkeypatch):
    make_staff("volunteer", "known")
    import app.models as models
    import app.services.security as security

    checked = []
    real = models.check_password_hash
    for module in (models, security):
        monkeypatch.setattr(module, "check_password_hash", lambda h, p: checked.append(h) or real(h, p))
    answers = []
    for email in ("known@example.org", "nobody@example.org"):
        client = app.test_client()
        response = login(client, email, "not the password")
        answers.append((response.status_code, _without_tokens(response.get_data(as_text=True))))
    assert answers[0] == answers[1]
    assert "Wrong email or password." in answers[0][1]
    # A password hash is checked in both cases (no shortcut for unknown emails
    # that would tell them apart by time).
    assert len(checked) == 2


# --- tokens: signed, expiring, single use ---------------------------------------

def _reset_link(app, user):
    return "/reset/" + accounts.make_token(app.config["SECRET_KEY"], "reset", user)


def _new_password(client, url, password):
    token = csrf_token(client, url)
    return client.post(url, data={"csrf_token": token, "password": password, "password2": password})


def test_a_reset_link_works_once(app):
    user = make_staff("volunteer", "ane")
    client = app.test_client()
    url = _reset_link(app, user)
    assert client.get(url).status_code == 200
    done = _new_password(client, url, "a brand new secret 1")
    assert done.status_code == 302 and done.headers["Location"].endswith("/login")
    db.session.refresh(user)
    assert user.check_password("a brand new secret 1")
    # The same link again: refused, the password stays.
    again = client.get(url)
    assert again.status_code == 302 and again.headers["Location"].endswith("/reset")
    token = csrf_token(client, "/login")
    refused = client.post(url, data={"csrf_token": token, "password": "another secret 22",
                                     "password2": "another secret 22"})
    assert refused.status_code == 302 and refused.headers["Location"].endswith("/reset")
    db.session.refresh(user)
    assert user.check_password("a brand new secret 1")


def test_an_expired_reset_link_is_refused(app):
    user = make_staff("volunteer", "ane")

    class Past(TimestampSigner):
        def get_timestamp(self):
            return int(time.time()) - 3601

    old = URLSafeTimedSerializer(app.config["SECRET_KEY"], salt="bozka-reset", signer=Past).dumps(
        {"u": user.id, "f": accounts._fingerprint(user)})
    assert accounts.read_token(app.config["SECRET_KEY"], "reset", old, 3600) is None
    fresh = accounts.make_token(app.config["SECRET_KEY"], "reset", user)
    assert accounts.read_token(app.config["SECRET_KEY"], "reset", fresh, 3600) == user
    response = app.test_client().get("/reset/" + old)
    assert response.status_code == 302 and response.headers["Location"].endswith("/reset")


def test_tokens_are_signed_and_bound_to_their_purpose(app):
    user = make_staff("volunteer", "ane")
    secret = app.config["SECRET_KEY"]
    token = accounts.make_token(secret, "reset", user)
    tampered = token[:-2] + ("AA" if token[-2:] != "AA" else "BB")
    assert accounts.read_token(secret, "reset", tampered, 3600) is None
    assert accounts.read_token("another-secret", "reset", token, 3600) is None
    assert accounts.read_token(secret, "confirm", token, 3600) is None  # a reset link never confirms
    forged = URLSafeTimedSerializer("guessed", salt="bozka-reset").dumps({"u": user.id, "f": "0" * 16})
    assert accounts.read_token(secret, "reset", forged, 3600) is None


def test_a_confirmation_link_works_once(app, client, make_campaign):
    make_campaign()
    assert register(client).status_code == 302
    user = db.session.scalar(select(User))
    url = "/confirm/" + accounts.make_token(app.config["SECRET_KEY"], "confirm", user)
    assert client.get(url).status_code == 302
    db.session.refresh(user)
    first = user.email_confirmed_at
    assert first is not None
    page = client.get(url, follow_redirects=True).get_data(as_text=True)
    assert "Your email is already confirmed." in page  # said, and nothing changes
    db.session.refresh(user)
    assert user.email_confirmed_at == first


def test_a_password_change_ends_other_sessions(app, make_campaign):
    """A reset (after an account was taken over, say) logs out every other
    device: the session names the password it was opened with."""
    make_campaign()
    user = make_staff("volunteer", "ane")
    thief = app.test_client()
    assert login(thief, "ane@example.org").status_code == 302
    assert thief.get("/c/test/join").status_code == 200  # logged in
    owner = app.test_client()
    assert _new_password(owner, _reset_link(app, user), "a brand new secret 1").status_code == 302
    response = thief.get("/c/test/join")
    assert response.status_code == 302 and "/login" in response.headers["Location"]
    # Logging in with the new password works as before.
    assert login(owner, "ane@example.org", "a brand new secret 1").status_code == 302
    assert owner.get("/c/test/join").status_code == 200


# --- sessions and cookies -----------------------------------------------------

def test_login_starts_a_fresh_session(app):
    make_staff("volunteer", "ane")
    client = app.test_client()
    csrf_token(client, "/login")
    with client.session_transaction() as session:
        session["planted"] = "by an attacker"
        before = dict(session)
    assert login(client, "ane@example.org").status_code == 302
    with client.session_transaction() as session:
        assert "planted" not in session
        assert session.get("csrf_token") != before.get("csrf_token")
        assert session.get("_user_id")


def _cookies(response):
    return {header.split("=", 1)[0]: header for header in response.headers.getlist("Set-Cookie")}


def test_session_cookies_are_httponly_and_samesite_lax(app):
    make_staff("volunteer", "ane")
    client = app.test_client()
    token = csrf_token(client, "/login")
    response = client.post("/login", data={"csrf_token": token, "email": "ane@example.org", "password": STRONG,
                                           "remember": "y"})
    cookies = _cookies(response)
    for name in ("session", "remember_token"):
        assert name in cookies, cookies
        assert "HttpOnly" in cookies[name] and "SameSite=Lax" in cookies[name]
        assert "Secure" not in cookies[name]  # plain HTTP in development


def test_cookies_are_secure_when_configured(tmp_path):
    app = build_app(tmp_path, SESSION_COOKIE_SECURE=True)
    with app.app_context():
        fresh_schema(app.config["SQLALCHEMY_DATABASE_URI"])
        make_staff("volunteer", "ane")
        client = app.test_client()
        token = csrf_token(client, "/login")
        response = client.post("/login", data={"csrf_token": token, "email": "ane@example.org",
                                               "password": STRONG, "remember": "y"})
        cookies = _cookies(response)
        for name in ("session", "remember_token"):
            assert "Secure" in cookies[name] and "HttpOnly" in cookies[name], cookies[name]
        token = csrf_token(client, "/reset")
        language = client.post("/language", data={"csrf_token": token, "lang": "en"})
        assert "Secure" in _cookies(language)["bozka_lang"]
        db.session.remove()
        db.engine.dispose()


@pytest.mark.parametrize("target", ["//evil.example/", "/\\evil.example/", "https://evil.example/", "/\t/evil.example"])
def test_login_never_redirects_off_site(app, target):
    make_staff("volunteer", "ane")
    client = app.test_client()
    token = csrf_token(client, "/login")
    response = client.post("/login?next=" + target, data={"csrf_token": token, "email": "ane@example.org",
                                                          "password": STRONG})
    assert response.status_code == 302
    location = response.headers["Location"]
    assert "evil.example" not in location, location


# --- the audit log --------------------------------------------------------------

def test_organiser_and_researcher_actions_are_audited(app, make_campaign):
    campaign = make_campaign()
    campaign.ends_at = utcnow() + timedelta(days=1)  # the commitment names it as the draw's time
    db.session.commit()
    make_staff("admin", "boss")  # an admin: the accounts page and the log are theirs
    make_staff("researcher", "sci")
    organiser, researcher = app.test_client(), app.test_client()
    assert login(organiser, "boss@example.org").status_code == 302
    assert login(researcher, "sci@example.org").status_code == 302
    token = csrf_token(organiser, "/organiser/c/test/")
    seed = "a secret seed"
    organiser.post("/organiser/c/test/announce", data={"csrf_token": token, "text": "Hello <b>all</b>"})
    organiser.post("/organiser/c/test/raffle/commit",
                   data={"csrf_token": token, "seed_sha256": hashlib.sha256(seed.encode()).hexdigest(),
                         "beacon": "drand quicknet round 1",
                         "beacon_at": (campaign.ends_at + timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M")})
    # The time of the draw and the beacon's come (as if a day went by); then close and draw.
    past = utcnow() - timedelta(minutes=2)
    campaign.ends_at = raffle.commitment(campaign).draw_at = past
    raffle.commitment(campaign).beacon_at = past + timedelta(minutes=1)
    db.session.commit()
    organiser.post("/organiser/c/test/status", data={"csrf_token": token, "status": "closed",
                                                     "ends_at": past.strftime("%Y-%m-%dT%H:%M")})
    organiser.post("/organiser/c/test/raffle/draw", data={"csrf_token": token, "seed": seed, "beacon": "7",
                                                          "prizes": "1"})
    organiser.get("/organiser/c/test/raffle/winners")
    account_token = csrf_token(organiser, "/organiser/accounts")
    organiser.post("/organiser/accounts", data={"csrf_token": account_token, "role": "researcher",
                                                "username": "newsci", "email": "newsci@example.org",
                                                "password": "a long new secret 9"})
    assert researcher.get("/organiser/c/test/export/judgments.csv").status_code == 200
    entries = db.session.scalars(select(AuditLog).order_by(AuditLog.id)).all()
    assert [(e.username, e.action) for e in entries] == [
        ("boss", "campaign.announce"),
        ("boss", "raffle.commit"),
        ("boss", "campaign.status"),
        ("boss", "raffle.draw"),
        ("boss", "raffle.winners"),
        ("boss", "account.create"),
        ("sci", "export"),
    ]
    assert all(e.at is not None and e.user_id for e in entries)
    assert entries[0].details == {"text": "Hello <b>all</b>"}
    assert entries[2].details["status"] == "closed"
    assert entries[4].target == "test" and entries[4].details == {"usernames": []}  # nobody held a ticket
    assert entries[5].target == "newsci" and entries[6].details == {"kind": "judgments", "format": "csv"}
    page = organiser.get("/organiser/audit").get_data(as_text=True)
    # Each action by its label in the interface language, not its stored code.
    assert "<td>Announcement</td>" in page and "campaign.announce" not in page
    assert "newsci" in page and "<b>all" not in page
    assert_inert(page, where="audit log")
    # Only admins read the log (it names every campaign's volunteers looked at).
    assert researcher.get("/organiser/audit").status_code == 403
    make_staff("organiser", "ori")
    assert login(other := app.test_client(), "ori@example.org").status_code == 302
    assert other.get("/organiser/audit").status_code == 403
