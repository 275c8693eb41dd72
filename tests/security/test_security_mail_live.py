"""Mail against a real server, served as ``make run`` serves it (gunicorn, one
gevent worker, its background sender a greenlet): with the mail server
down, registration (new and taken email) and password reset (known and
unknown email) answer as usual, never 500 (issue 21 saw a 500 for a known
address and a 302 for an unknown one); the sender logs each failed try and
keeps the error; once the mail server is up, the retries deliver every
mail exactly once."""
import re
import time

import requests

from smtp_sink import SmtpSink, closed_port
from test_security_faults_live import PASSWORD, SLUG, Site, Volunteer


def _wait_for(check, timeout, what):
    stop_at = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < stop_at, f"gave up waiting for {what}"
        time.sleep(0.2)


def _csrf(http, url):
    return re.search(r'name="csrf_token"[^>]*value="([^"]+)"', http.get(url, timeout=10).text).group(1)


def _register(base, username, email):
    http = requests.Session()
    token = _csrf(http, f"{base}/c/{SLUG}/register")
    return http.post(f"{base}/c/{SLUG}/register", allow_redirects=False, timeout=30, data={
        "csrf_token": token, "username": username, "email": email, "password": PASSWORD, "password2": PASSWORD,
        "age_group": "26-35", "studies_level": "university", "studies_field": "language",
        "source_level": "B1-B2", "target_level": "C1-C2", "consent": "y"})


def _reset(base, email):
    http = requests.Session()
    token = _csrf(http, f"{base}/reset")
    started = time.perf_counter()
    response = http.post(f"{base}/reset", data={"csrf_token": token, "email": email}, allow_redirects=False,
                         timeout=30)
    return response, time.perf_counter() - started


def test_mail_server_down_then_up_under_the_real_server():
    port = closed_port()
    site = Site(MAIL_SERVER="127.0.0.1", MAIL_PORT=str(port), MAIL_USE_TLS="0", MAIL_RETRY_SECONDS="0.5",
                MAIL_POLL_SECONDS="0.2", MAIL_MAX_ATTEMPTS="50")
    sink = None
    try:
        site.start()
        volunteer = Volunteer(site.url, "mailer")
        volunteer.register()
        assert volunteer.server_errors == []
        taken = _register(site.url, "mailer2", "mailer@example.org")
        assert taken.status_code == 302 and taken.headers["Location"].endswith(f"/c/{SLUG}/instructions")
        known, known_time = _reset(site.url, "mailer@example.org")
        unknown, unknown_time = _reset(site.url, "nobody@example.org")
        assert (known.status_code, known.headers["Location"], known.text) == \
            (unknown.status_code, unknown.headers["Location"], unknown.text)
        assert known.status_code == 302
        print(f"reset with the mail server down: known {known_time * 1000:.1f} ms, "
              f"unknown {unknown_time * 1000:.1f} ms")
        assert site.query("SELECT count(*) FROM users WHERE email = 'mailer@example.org'") == [(1,)]

        # Confirmation, notice, reset: each tried and refused, the error kept and logged.
        _wait_for(lambda: site.query("SELECT count(*) FROM outbox_mails WHERE last_error IS NOT NULL") == [(3,)],
                  20, "three failed tries")
        assert "not sent (try 1)" in site.log() and "ConnectionRefusedError" in site.log()
        assert site.query("SELECT count(*) FROM outbox_mails WHERE status = 'sent'") == [(0,)]

        sink = SmtpSink(port).start()  # the mail server is back
        _wait_for(lambda: site.query("SELECT count(*) FROM outbox_mails WHERE status = 'sent'") == [(3,)],
                  60, "the retries to deliver")
        time.sleep(1)  # a few more passes of the sender: nothing is sent again
        subjects = sorted(message["Subject"] for _recipients, message in sink.messages)
        assert subjects == ["Confirm your email for Bozka", "Reset your Bozka password",
                            "Someone tried to register on Bozka with your email"]
        assert all(recipients == ["mailer@example.org"] for recipients, _message in sink.messages)
    finally:
        if sink is not None:
            sink.stop()
        site.remove()
