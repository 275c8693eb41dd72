"""Logging out, or a new password set by ``flask user password``, closes the
account's sockets in every server process, server-side (issue 21, item 5):
the test's client ignores the "bye" that the site's own pages obey, as a
hostile client would, and is connected to the other process than the one
that handles the logout."""
import time

import requests

from clients import Listener, register
from conftest import INTERVAL


def test_logout_through_one_process_closes_the_sockets_in_the_other(cluster):
    a, b = cluster.urls
    cookie, csrf = register(cluster.url, "dee", "127.0.4.1")
    other_cookie, _csrf = register(cluster.url, "eli", "127.0.5.1")
    time.sleep(3 * INTERVAL)
    on_b = [Listener(b, cookie).start(), Listener(b, cookie).start()]
    bystander = Listener(b, other_cookie).start()
    try:
        response = requests.post(f"{a}/logout", data={"csrf_token": csrf}, headers={"Cookie": cookie},
                                 allow_redirects=False, timeout=30)
        assert response.status_code == 200 and "<title>Goodbye" in response.text, response.text[:300]
        assert all(listener.disconnected(timeout=10) for listener in on_b), [l.events[-3:] for l in on_b]
        assert not bystander.disconnected(timeout=2 * INTERVAL)  # another account's socket stays
        assert bystander.error is None
    finally:
        for listener in on_b + [bystander]:
            listener.close()


def test_a_new_password_from_the_command_line_closes_the_sockets_everywhere(cluster):
    a, b = cluster.urls
    cookie, _csrf = register(cluster.url, "fio", "127.0.6.1")
    sockets = [Listener(a, cookie).start(), Listener(b, cookie).start()]
    try:
        cluster.flask("user", "password", "fio@example.org", "--password", "a brand new passphrase 9")
        assert all(listener.disconnected(timeout=10) for listener in sockets), [l.events[-3:] for l in sockets]
    finally:
        for listener in sockets:
            listener.close()
