"""Static files (issue 22), through the Flask test client: fingerprinted URLs
in the pages, cache headers, gzip and brotli when accepted, the favicon."""
import gzip
import hashlib
import os
import re

import brotli
import pytest

from app import assets
from app.errors import CSP
from helpers import csrf_token, give_every_campaign, register

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STATIC = os.path.join(ROOT, "static")
TEXT_ASSETS = ("css/bozka.css", "js/evaluate.js", "js/slider.js", "js/dashboard.js", "js/vendor/socket.io.min.js",
               "favicon.svg")


def static_urls(html):
    return re.findall(r'(?:href|src)="(/static/[^"?#]+)"', html)


def source_of(url):
    """The project's file a fingerprinted URL stands for, checked against its MD5."""
    match = re.fullmatch(r"/static/(.+)-([0-9a-f]{32})(\.[^/]+)", url)
    assert match, f"{url} carries no fingerprint"
    path = os.path.join(STATIC, match[1] + match[3])
    with open(path, "rb") as handle:
        content = handle.read()
    assert hashlib.md5(content).hexdigest() == match[2], f"{url}: the fingerprint is not {path}'s content"
    return content


def fingerprinted(client, name):
    with client.application.test_request_context():
        from flask import url_for

        return url_for("static", filename=name)


def test_every_static_url_of_the_pages_carries_its_files_content_hash(app, client, make_campaign):
    from app.models import utcnow
    from app.services import accounts
    from app.extensions import db

    make_campaign(protocol="da")
    register(client)
    pages = {path: client.get(path) for path in ("/login", "/c/test/evaluate")}
    organiser = accounts.create_user("org@example.org", "org1", "staff-password", role="organiser")
    organiser.email_confirmed_at = utcnow()
    give_every_campaign(organiser)
    staff = app.test_client()
    staff.post("/login", data={"csrf_token": csrf_token(staff, "/login"), "email": "org@example.org",
                               "password": "staff-password"})
    pages["/organiser/c/test/"] = staff.get("/organiser/c/test/")
    seen = set()
    for path, response in pages.items():
        assert response.status_code == 200, path
        urls = static_urls(response.get_data(as_text=True))
        assert urls, path
        for url in urls:
            content = source_of(url)
            served = client.get(url)  # no Accept-Encoding: the file itself
            assert served.status_code == 200 and served.data == content, url
            seen.add(re.sub(r"-[0-9a-f]{32}", "", url))
    assert {"/static/css/bozka.css", "/static/favicon.svg", "/static/favicon.ico", "/static/js/evaluate.js",
            "/static/js/slider.js", "/static/js/vendor/socket.io.min.js", "/static/js/dashboard.js"} <= seen


def test_templates_link_static_files_only_through_url_for():
    """A path written by hand would miss its fingerprint (and its year of cache)."""
    for folder, _dirs, names in os.walk(os.path.join(ROOT, "templates")):
        for name in names:
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                text = handle.read()
            assert not re.search(r"""(?:href|src)=["']/static/""", text), name


@pytest.mark.parametrize("name", TEXT_ASSETS)
def test_fingerprinted_files_are_cached_for_a_year_and_plain_names_for_an_hour(client, name):
    response = client.get(fingerprinted(client, name))
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert response.headers["Content-Security-Policy"] == CSP  # WhiteNoise answers; the headers stay
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    plain = client.get(f"/static/{name}")
    assert plain.status_code == 200
    assert "immutable" not in plain.headers["Cache-Control"] and "max-age=3600" in plain.headers["Cache-Control"]


@pytest.mark.parametrize("name", TEXT_ASSETS)
def test_text_assets_are_compressed_only_for_a_client_that_accepts_it(client, name):
    url = fingerprinted(client, name)
    with open(os.path.join(STATIC, name), "rb") as handle:
        content = handle.read()
    for accept, decode in (("gzip", gzip.decompress), ("gzip, deflate, br", brotli.decompress),
                           ("deflate, gzip;q=0.8", gzip.decompress)):
        response = client.get(url, headers={"Accept-Encoding": accept})
        encoding = "br" if decode is brotli.decompress else "gzip"
        assert response.headers.get("Content-Encoding") == encoding, (name, accept)
        assert decode(response.data) == content
        assert int(response.headers["Content-Length"]) == len(response.data) < len(content)
        assert "Accept-Encoding" in response.headers["Vary"]
    for headers in ({}, {"Accept-Encoding": "identity"}, {"Accept-Encoding": "deflate"}):
        response = client.get(url, headers=headers)
        assert "Content-Encoding" not in response.headers, (name, headers)
        assert response.data == content


def test_the_favicon_is_linked_and_served(client):
    page = client.get("/login").get_data(as_text=True)
    icon = re.search(r'<link rel="icon" href="([^"]+)" type="image/svg\+xml">', page)
    assert icon and icon[1].startswith("/static/favicon-")
    svg = client.get(icon[1])
    assert svg.status_code == 200 and svg.mimetype == "image/svg+xml" and b"<svg" in svg.data
    ico = client.get("/favicon.ico")
    with open(os.path.join(STATIC, "favicon.ico"), "rb") as handle:
        assert ico.status_code == 200 and ico.data == handle.read()
    assert ico.mimetype in ("image/vnd.microsoft.icon", "image/x-icon")
    assert "max-age=3600" in ico.headers["Cache-Control"]


def test_a_changed_file_gets_a_new_fingerprint_and_the_old_copy_stays(tmp_path):
    folder = str(tmp_path / "static")
    os.makedirs(os.path.join(folder, "css"))
    path = os.path.join(folder, "css", "site.css")
    with open(path, "w") as handle:
        handle.write("body { color: red; }\n" * 40)
    first = assets.build(folder)["css/site.css"]
    assert assets.current_manifest(folder) == {"css/site.css": first}
    assert os.path.isfile(os.path.join(folder, first + ".gz")) and os.path.isfile(os.path.join(folder, first + ".br"))
    with open(path, "a") as handle:
        handle.write("p { color: blue; }\n")
    assert assets.current_manifest(folder) is None  # stale: the next start compiles again
    second = assets.build(folder)["css/site.css"]
    assert second != first and os.path.isfile(os.path.join(folder, first))
    with open(os.path.join(folder, second), "rb") as handle:
        assert hashlib.md5(handle.read()).hexdigest() in second
