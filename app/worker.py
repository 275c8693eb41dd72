"""The gunicorn worker of ``make run`` and deploy/gunicorn.conf.py:
Flask-SocketIO's GeventWebSocketWorker with two bounds, so that one client
cannot take every connection the process has (docs/security.md, "One
hostile client"):

- at most ``BOZKA_CONNECTIONS_PER_ADDRESS`` open connections from one
  address; one more is closed as soon as it is accepted;
- a request's head (request line and headers) must arrive within
  ``BOZKA_HEAD_TIMEOUT`` seconds of the server starting to wait for it, the
  wait for a kept-alive connection's next request included; otherwise the
  connection is closed (slowloris, idle connections).

Once a head has arrived nothing is timed: Socket.IO's long-polling requests
and WebSockets stay open as long as they need. Built as the library builds
its own worker (``GeventWebSocketWorker`` is ``GeventPyWSGIWorker`` with
``wsgi_handler = WebSocketHandler``), on gevent's documented
``WSGIHandler`` methods.
"""
import collections
import resource
import time

import gevent
from geventwebsocket.gunicorn.workers import GeventWebSocketWorker
from geventwebsocket.handler import WebSocketHandler


class BoundedHandler(WebSocketHandler):
    """One connection: refused beyond the address's bound, its heads timed."""

    limit = 0  # connections per address; 0: no bound (set by BoundedWorker.run)
    head_timeout = None  # seconds; None: no bound
    open_connections = collections.Counter()  # address -> open connections, in this process
    head_deadline = None

    def handle(self):
        # One event loop per process: the counter needs no lock.
        address = self.client_address[0] if isinstance(self.client_address, tuple) else self.client_address
        if self.limit and self.open_connections[address] >= self.limit:
            self.rfile.close()
            self.socket.close()
            return
        self.open_connections[address] += 1
        try:
            super().handle()
        finally:
            self.open_connections[address] -= 1
            if not self.open_connections[address]:
                del self.open_connections[address]

    def read_requestline(self):
        if not self.head_timeout:
            return super().read_requestline()
        self.head_deadline = time.monotonic() + self.head_timeout
        with gevent.Timeout(self.head_timeout, False):  # False: the block ends silently
            return super().read_requestline()
        return ""  # no request line in time: the connection is closed, as when the client closes it

    def read_request(self, raw_requestline):
        if not self.head_timeout:
            return super().read_request(raw_requestline)
        with gevent.Timeout(max(0.001, self.head_deadline - time.monotonic()), False):
            return super().read_request(raw_requestline)
        # Documented: ValueError means an invalid request (400, one line in the log, closed).
        raise ValueError(f"request headers not complete within {self.head_timeout:g} s")


class BoundedWorker(GeventWebSocketWorker):
    wsgi_handler = BoundedHandler

    def run(self):
        # Read here, in the worker, after gevent's patching: the master imports nothing of the app.
        from .config import connection_bounds

        BoundedHandler.limit, BoundedHandler.head_timeout = connection_bounds()
        self.raise_open_files()
        self.log.info("at most %s connections per address; request heads within %s s",
                      BoundedHandler.limit or "any number of", BoundedHandler.head_timeout)
        super().run()

    def raise_open_files(self):
        """A descriptor per connection: the soft open-files limit (often 1,024)
        raised towards --worker-connections, as far as the hard limit allows."""
        wanted = self.worker_connections + 256  # and the database's, the logs' and the app's own files
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY or soft >= wanted:
            return
        new = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
        if new < wanted:
            self.log.warning("open files limited to %s (hard limit): fewer than %s connections can be open; "
                             "raise it (ulimit -Hn, systemd's LimitNOFILE)", new, self.worker_connections)
