"""Static files (issue 22): fingerprinted names, compressed copies, cache headers, the favicon.

Flask-Static-Digest's compiler (also ``flask digest compile``) writes beside
each file of static/ a copy named by its MD5 (``css/bozka-<md5>.css``), the
.gz and .br of both, and ``cache_manifest.json``; the app does it at start
when a file changed. ``url_for('static', ...)`` gives the fingerprinted name.
WhiteNoise serves static/ in front of Flask: the .br or .gz copy when the
client accepts it, a year's immutable cache for fingerprinted names, an hour
for the others. deploy/nginx.conf serves the same files the same way.
"""
import contextlib
import filecmp
import json
import logging
import os
import re
import sys

from flask import send_from_directory
from flask_static_digest import digester
from whitenoise import WhiteNoise

from .errors import SECURITY_HEADERS
from .extensions import static_digest

MANIFEST = "cache_manifest.json"
FINGERPRINTED = re.compile(digester.DIGESTED_FILE_REGEX)
FOREVER = "public, max-age=31536000, immutable"
SHORT_AGE = 3600  # seconds: names without a fingerprint (/favicon.ico, an old page's link)
COMPRESSED = (".gz", ".br")

log = logging.getLogger(__name__)


def sources(folder):
    """The project's own files in ``folder``: relative path -> full path (no copy, no compressed file)."""
    found = {}
    for root, _dirs, names in os.walk(folder):
        for name in names:
            if name == MANIFEST or name.endswith(COMPRESSED) or FINGERPRINTED.search(name):
                continue
            path = os.path.join(root, name)
            found[os.path.relpath(path, folder).replace(os.sep, "/")] = path
    return found


def current_manifest(folder):
    """The manifest if it names, for every file, an identical fingerprinted copy with its .gz and .br; else None."""
    try:
        with open(os.path.join(folder, MANIFEST), encoding="utf-8") as handle:
            manifest = json.load(handle)
    except (OSError, ValueError):
        return None
    for relative, path in sources(folder).items():
        copy = os.path.join(folder, manifest.get(relative, relative))
        if copy == path or not os.path.isfile(copy) or not filecmp.cmp(path, copy, shallow=False):
            return None
        if not all(os.path.isfile(copy + suffix) for suffix in COMPRESSED):
            return None
    return manifest


def build(folder):
    """Fingerprint and compress ``folder`` unless it is current; returns the manifest ({} if it cannot be written)."""
    manifest = current_manifest(folder)
    if manifest is not None:
        return manifest
    try:
        with contextlib.redirect_stdout(sys.stderr):  # the compiler prints; a command's stdout may be an export
            digester.compile(folder + os.sep, folder + os.sep, [], True, True)
    except OSError as exc:
        log.warning("static files not fingerprinted (%s): run flask --app wsgi digest compile", exc)
        return {}
    return current_manifest(folder) or {}


def static_headers(headers, path, url):
    """WhiteNoise's hook: the security headers of every answer, and a year for a fingerprinted name."""
    for name, value in SECURITY_HEADERS:
        headers.setdefault(name, value)
    if FINGERPRINTED.search(url):
        headers["Cache-Control"] = FOREVER


def init_app(app):
    """Build static/ if needed, fingerprint url_for('static'), serve static/ through WhiteNoise, add /favicon.ico."""
    app.config.setdefault("FLASK_STATIC_DIGEST_COMPRESSION", ["gzip", "brotli"])  # read by `flask digest`
    manifest = build(app.static_folder)
    static_digest.init_app(app)

    @app.url_defaults
    def fingerprint(endpoint, values):
        if endpoint == "static" and "filename" in values:
            values["filename"] = manifest.get(values["filename"], values["filename"])

    app.wsgi_app = WhiteNoise(
        app.wsgi_app, root=app.static_folder, prefix=app.static_url_path, max_age=SHORT_AGE,
        allow_all_origins=False, add_headers_function=static_headers,
        immutable_file_test=lambda path, url: bool(FINGERPRINTED.search(url)),
    )

    # Browsers ask for /favicon.ico when a page names no icon (a PDF, an error from a proxy).
    app.add_url_rule("/favicon.ico", "favicon",
                     lambda: send_from_directory(app.static_folder, "favicon.ico", max_age=SHORT_AGE))
