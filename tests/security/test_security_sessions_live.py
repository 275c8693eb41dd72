"""Logout ends every copy of the session (issue 28, item 6), against a real
server run as ``make run`` runs it: a session cookie (and a remember-me
cookie) copied before logout opens no page and no Socket.IO connection
after it; a new password ends the copies too."""
import subprocess

import requests
import socketio as python_socketio

from e2e.conftest import ROOT, flask_command
from test_security_faults_live import PASSWORD, SLUG, Volunteer


def copy_of(session):
    """Another browser holding the same cookies (a stolen or copied cookie)."""
    thief = requests.Session()
    for cookie in session.cookies:
        thief.cookies.set(cookie.name, cookie.value, domain=cookie.domain, path=cookie.path)
    return thief


def logged_in(site, http):
    """True if the welcome page opens (a visitor is sent to the log-in page)."""
    answer = http.get(f"{site.url}/c/{SLUG}/welcome", allow_redirects=False, timeout=10)
    assert answer.status_code in (200, 302), answer.status_code
    return answer.status_code == 200


def socket_opens(site, http):
    """True if a Socket.IO connection with these cookies is accepted."""
    cookie = "; ".join(f"{cookie.name}={cookie.value}" for cookie in http.cookies)
    client = python_socketio.Client(reconnection=False)
    try:
        client.connect(site.url, headers={"Cookie": cookie}, transports=["websocket"], wait_timeout=10)
    except python_socketio.exceptions.ConnectionError:
        return False
    client.disconnect()
    return True


def log_in(site, volunteer, remember):
    page = volunteer.http.get(site.url + "/login", timeout=10).text
    token = volunteer.csrf_from(page)
    data = {"csrf_token": token, "email": f"{volunteer.name}@example.org", "password": PASSWORD}
    if remember:
        data["remember"] = "y"
    answer = volunteer.http.post(site.url + "/login", data=data, allow_redirects=False, timeout=10)
    assert answer.status_code == 302, answer.text[:300]


def log_out(site, volunteer):
    page = volunteer.http.get(f"{site.url}/c/{SLUG}/welcome", timeout=10).text
    answer = volunteer.http.post(site.url + "/logout", data={"csrf_token": volunteer.csrf_from(page)}, timeout=10)
    assert answer.status_code == 200


class Person(Volunteer):
    @staticmethod
    def csrf_from(page):
        import re

        return re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page).group(1)


def test_a_session_cookie_copied_before_logout_opens_nothing_after_it(live):
    ane = Person(live.url, "ane")
    ane.register()
    thief = copy_of(ane.http)
    assert logged_in(live, thief) and socket_opens(live, thief)  # the copy works while the session lasts

    log_out(live, ane)
    assert not logged_in(live, thief)
    assert not socket_opens(live, thief)
    assert not logged_in(live, ane.http)

    # Logging in again works, and a remember-me cookie copied then ends with the next logout too.
    log_in(live, ane, remember=True)
    assert "remember_token" in {cookie.name for cookie in ane.http.cookies}
    thief = copy_of(ane.http)
    assert logged_in(live, thief) and socket_opens(live, thief)
    log_out(live, ane)
    assert not logged_in(live, thief)
    assert not socket_opens(live, thief)
    remembered = requests.Session()  # the remember-me cookie alone, as after the browser closed
    remembered.cookies.set("remember_token", thief.cookies.get("remember_token"))
    assert not logged_in(live, remembered)
    assert "Traceback" not in live.log()


def test_a_new_password_ends_a_copied_session(live):
    jon = Person(live.url, "jon")
    jon.register()
    thief = copy_of(jon.http)
    assert logged_in(live, thief)
    done = subprocess.run(flask_command("user", "password", "jon@example.org", "--password", "a brand new horse 4"),
                          cwd=ROOT, env=live.env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not logged_in(live, thief)
    assert not socket_opens(live, thief)
