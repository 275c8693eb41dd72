"""Static files (issue 22) from real servers: the site started by ``make run
PORT=...`` itself (gunicorn, one gevent worker, no nginx), and the same files
through deploy/nginx.conf (scripts/cluster.py). Compression and cache headers
on the wire."""
import gzip
import http.client
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile

import brotli
import pytest

from e2e.conftest import ROOT, _free_port, _wait_until_up, serve_command

sys.path.insert(0, os.path.join(ROOT, "scripts"))
from cluster import Cluster, nginx_binary  # noqa: E402

FOREVER = "public, max-age=31536000, immutable"
TYPES = {".css": "text/css", ".js": ("text/javascript", "application/javascript"), ".svg": "image/svg+xml",
         ".ico": "image/"}


def fetch(port, path, accept=None):
    """status, headers (lower-case names) and the body as sent, undecoded."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path, headers={"Accept-Encoding": accept} if accept else {})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def check_static_files(port, encodings=("gzip", "br")):
    """Every static file of the login page: fingerprinted, a year's cache, compressed only when accepted."""
    status, _headers, page = fetch(port, "/login")
    assert status == 200
    urls = re.findall(r'(?:href|src)="(/static/[^"]+)"', page.decode())
    assert any(url.endswith(".css") for url in urls) and any(url.endswith(".svg") for url in urls)
    for url in urls:
        assert re.search(r"-[0-9a-f]{32}\.", url), url
        with open(os.path.join(ROOT, re.sub(r"-[0-9a-f]{32}", "", url).lstrip("/")), "rb") as handle:
            content = handle.read()
        status, headers, body = fetch(port, url)
        assert status == 200 and body == content and "content-encoding" not in headers, url
        assert headers["content-type"].startswith(TYPES[os.path.splitext(url)[1]]), (url, headers["content-type"])
        assert headers["cache-control"] == FOREVER, url
        if url.endswith(".ico"):
            continue
        for accept, encoding, decode in (("gzip, deflate", "gzip", gzip.decompress),
                                         ("gzip, deflate, br", "br", brotli.decompress)):
            if encoding not in encodings:
                continue
            status, headers, body = fetch(port, url, accept)
            assert status == 200 and headers.get("content-encoding") == encoding, (url, accept, headers)
            assert decode(body) == content and len(body) < len(content)
            assert headers["cache-control"] == FOREVER and "accept-encoding" in headers["vary"].lower()
    status, headers, body = fetch(port, "/static/css/bozka.css", "gzip")
    assert status == 200 and headers.get("content-encoding") == "gzip"
    assert "immutable" not in headers["cache-control"] and "max-age=3600" in headers["cache-control"]
    status, headers, _body = fetch(port, "/favicon.ico")
    assert status == 200 and headers["content-type"] in ("image/vnd.microsoft.icon", "image/x-icon")
    assert headers["x-content-type-options"] == "nosniff"


def test_make_run_serves_on_the_given_port_with_compressed_and_cached_static_files():
    port = _free_port()
    instance = tempfile.mkdtemp(prefix="bozka-makerun-")
    env = {**os.environ, "BOZKA_INSTANCE": instance, "FLASK_DEBUG": "0", "PYTHONUNBUFFERED": "1"}
    for name in ("DATABASE_URL", "SOCKETIO_MESSAGE_QUEUE", "RATELIMIT_STORAGE_URI", "MAIL_SERVER", "BOZKA_ENV",
                 "SECRET_KEY", "PORT", "HOST", "MAKEFLAGS", "MFLAGS"):
        env.pop(name, None)
    log_path = os.path.join(instance, "make-run.log")
    with open(log_path, "w") as log:
        process = subprocess.Popen(["make", "--no-print-directory", "run", f"PORT={port}"], cwd=ROOT, env=env,
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_until_up(f"http://127.0.0.1:{port}/", process, log_path, timeout=300)
        with open(log_path, encoding="utf-8") as handle:
            printed = handle.read()
        assert f"Bozka is ready: http://127.0.0.1:{port}\n" in printed
        assert "5000" not in printed.split("Bozka is ready")[1].split("\n\n")[0]
        check_static_files(port)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)  # make and the gunicorn it started: its own session
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def test_make_run_passes_port_and_host_to_the_server_the_tests_start():
    """The tests' server command (e2e/conftest.py) is make run's, at any PORT and HOST."""
    done = subprocess.run(["make", "-n", "--no-print-directory", "run", "PORT=5123", "HOST=127.0.0.2"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.endswith("demo --url http://127.0.0.2:5123") for line in lines), done.stdout
    served = shlex.split(next(line for line in lines if "gunicorn" in line))
    expected = serve_command(5123)
    expected[expected.index("--bind") + 1] = "127.0.0.2:5123"
    assert served[1:] == expected[1:] and served[0].endswith("/gunicorn")


@pytest.mark.skipif(not os.path.exists(nginx_binary()), reason="nginx is not installed (make test installs it)")
def test_nginx_serves_the_same_files_compressed_and_cached():
    with Cluster(processes=1, nginx=True) as cluster:
        check_static_files(cluster.nginx_port, encodings=("gzip",))  # Debian's nginx has gzip_static, not brotli
        # Its workers run as the user running the tests, so that a checkout in
        # a private (0700) folder is readable to them too, root or not.
        with open(f"/proc/{cluster.nginx.pid}/task/{cluster.nginx.pid}/children") as handle:
            workers = handle.read().split()
        assert workers
        for pid in workers:
            with open(f"/proc/{pid}/status") as handle:
                uids = next(line for line in handle if line.startswith("Uid:")).split()[1:]
            assert {int(uid) for uid in uids} == {os.geteuid()}, (pid, uids)
