"""Bounded requests (issue 21, item 4): every body is limited
(MAX_CONTENT_LENGTH, 1 MiB), the JSON APIs far more (BOZKA_MAX_JSON_BODY,
4 KiB), and a body over its limit is refused with 413 before anything reads
it, with a translated page or JSON like the site's other errors. The same
against a real server: test_security_limits_live.py."""
import io
import json

import pytest

from app import config
from helpers import csrf_token, register
from security_helpers import db_snapshot

MiB = 1024 * 1024


class Unreadable(io.RawIOBase):
    """A request body that fails the test if anything reads it."""

    def readable(self):
        return True

    def readinto(self, buffer):
        raise AssertionError("the body was read")


def _volunteer(client, make_campaign):
    make_campaign(sentences=20)
    register(client)
    return {"X-CSRFToken": csrf_token(client, "/c/test/welcome")}


def test_the_limits_are_settings_from_the_environment(monkeypatch, tmp_path):
    defaults = config.from_env(str(tmp_path))
    assert defaults["MAX_CONTENT_LENGTH"] == MiB
    assert defaults["BOZKA_MAX_JSON_BODY"] == 4096
    monkeypatch.setenv("MAX_CONTENT_LENGTH", "200000")
    monkeypatch.setenv("BOZKA_MAX_JSON_BODY", "2000")
    changed = config.from_env(str(tmp_path))
    assert (changed["MAX_CONTENT_LENGTH"], changed["BOZKA_MAX_JSON_BODY"]) == (200000, 2000)


def test_a_judgment_over_the_json_limit_is_refused_with_json(app, client, make_campaign):
    headers = _volunteer(client, make_campaign)
    before = db_snapshot()
    padded = json.dumps({"token": "x", "choice": "A", "pad": "x" * 5000})
    answer = client.post("/c/test/api/judgment", data=padded, content_type="application/json", headers=headers)
    assert answer.status_code == 413
    assert answer.is_json and answer.get_json()["status"] == "error"
    assert "larger than this site accepts" in answer.get_json()["message"]
    assert db_snapshot() == before
    # Under the limit, the same view reads it (and finds no such item).
    small = json.dumps({"token": "x", "choice": "A", "pad": "x" * 3000})
    assert client.post("/c/test/api/judgment", data=small, content_type="application/json",
                       headers=headers).status_code == 400


def test_a_page_over_the_site_limit_is_refused_with_a_page(app, client):
    token = csrf_token(client, "/login")
    body = {"csrf_token": token, "email": "a@example.org", "password": "x" * (2 * MiB)}
    answer = client.post("/login", data=body)
    assert answer.status_code == 413
    page = answer.get_data(as_text=True)
    assert "<title>" in page and "larger than this site accepts" in page
    assert answer.headers["Content-Security-Policy"]  # the site's headers, as on every page


def test_the_page_is_in_the_visitors_language(app, client):
    answer = client.post("/login", data=b"x" * (MiB + 1), content_type="application/x-www-form-urlencoded",
                         headers={"Accept-Language": "eu"})
    assert answer.status_code == 413
    # Made with gettext in the request's language, as the other error pages
    # (the catalogues gain the new message when the lead next updates them).
    assert 'lang="eu"' in answer.get_data(as_text=True)


@pytest.mark.parametrize("method, path, length", [
    ("POST", "/c/test/api/judgment", 4097),  # the JSON limit
    ("GET", "/c/test/api/item", 4097),
    ("POST", "/login", MiB + 1),  # the site's limit, before CSRF or the form read it
    ("POST", "/c/test/register", 100 * MiB),
    ("POST", "/no/such/page", 100 * MiB),
])
def test_a_body_over_its_limit_is_refused_before_anything_reads_it(app, client, make_campaign, method, path, length):
    make_campaign()
    answer = client.open(path, method=method, content_type="application/x-www-form-urlencoded",
                         environ_overrides={"wsgi.input": Unreadable(), "CONTENT_LENGTH": str(length)})
    assert answer.status_code == 413


def test_a_body_without_a_length_is_cut_at_the_limit(app, client, make_campaign):
    """A chunked body (no Content-Length): Werkzeug counts while it reads."""
    headers = _volunteer(client, make_campaign)
    body = io.BytesIO(json.dumps({"token": "x", "choice": "A", "pad": "x" * 10000}).encode())
    answer = client.post("/c/test/api/judgment", input_stream=body, content_type="application/json",
                         headers=headers, environ_overrides={"wsgi.input_terminated": True})
    assert answer.status_code == 413
