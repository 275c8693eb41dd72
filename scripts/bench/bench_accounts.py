"""Many accounts per person (issue 28, item 4): what a script gets from the
registration form of a site served as ``make run`` serves it, with the
rate limits on (the defaults of app/config.py).

    .venv/bin/python scripts/bench/bench_accounts.py [--attempts 60]

Linux routes all of 127/8 to loopback, so a client may send from any
127.x.y.z address. Three bursts, each of ``--attempts`` registrations sent
as fast as the server answers, from 10 addresses in turn:

- one mailbox: 10 addresses of 10 networks, ``bot+N@`` of one mailbox;
- one network: 10 addresses of one /24, a new mailbox each time;
- ten networks: 10 addresses of 10 /24s, a new mailbox each time (what
  the limits leave: many networks, many mailboxes).

Prints the accounts made and the refusals (429) of each.
"""
import argparse
import sqlite3
import time

import requests
from requests.adapters import HTTPAdapter

from harness import PASSWORD, SLUG, Server, bozka_instance, csrf_from, log, scratch, table


class FromAddress(HTTPAdapter):
    """Connections from a chosen local address (urllib3's ``source_address``)."""

    def __init__(self, address):
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, source_address=(self.address, 0), **kwargs)


def attempt(base, address, email, username):
    session = requests.Session()
    session.mount("http://", FromAddress(address))
    page = session.get(f"{base}/c/{SLUG}/register", timeout=30)
    answer = session.post(f"{base}/c/{SLUG}/register", allow_redirects=False, timeout=30, data={
        "csrf_token": csrf_from(page.text), "username": username, "email": email, "password": PASSWORD,
        "password2": PASSWORD, "age_group": "26-35", "studies_level": "university", "studies_field": "language",
        "source_level": "C1-C2", "target_level": "C1-C2", "consent": "y"})
    return answer.status_code


def accounts(database):
    with sqlite3.connect(database) as connection:
        return connection.execute("SELECT count(*) FROM users WHERE role = 'volunteer'").fetchone()[0]


def burst(base, database, name, address_of, email_of, attempts):
    before, statuses, started = accounts(database), [], time.monotonic()
    for n in range(attempts):
        statuses.append(attempt(base, address_of(n % 10), email_of(n), f"{name}{n:03d}"))
    return [name, attempts, accounts(database) - before, statuses.count(429),
            f"{time.monotonic() - started:.1f}"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--attempts", type=int, default=60)
    args = parser.parse_args()
    rows = []
    with scratch() as workdir:
        env, database = bozka_instance(workdir, sentences=20, RATELIMIT_ENABLED="1")
        with Server(env, workdir) as server:
            log("registering")
            rows.append(burst(server.url, database, "mailbox", lambda i: f"127.1.{i}.1",
                              lambda n: f"bot+{n}@bench.example.org", args.attempts))
            rows.append(burst(server.url, database, "network", lambda i: f"127.2.0.{i + 1}",
                              lambda n: f"net{n}@bench.example.org", args.attempts))
            rows.append(burst(server.url, database, "networks", lambda i: f"127.3.{i}.1",
                              lambda n: f"nets{n}@bench.example.org", args.attempts))
    table(["burst", "attempts", "accounts made", "refused (429)", "seconds"], rows)


if __name__ == "__main__":
    main()
