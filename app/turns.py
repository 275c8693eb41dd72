"""Judgments of a gevent worker on SQLite served first come, first served.

On SQLite a request's database work never yields to the gevent hub, so a
worker serves one judgment at a time. Which waiting volunteer goes next is
left to the event loop, which is not fair: it wakes the connections that
became readable in one poll in an order of its own (libev's is roughly
the reverse of arrival), so a volunteer served early in one round is
served late in the next. Measured at 32 volunteers: between two answers
to one connection the worker served anything from 12 to 50 others (31 is
the fair share), and p95 latency was nearly twice the median.

``Turns`` puts the judgments that have arrived into one line, ordered by
when each one can have arrived at the earliest: a keep-alive connection's
next request comes after its last response was sent. The judgment that
ends hands the worker over after the loop's next poll (a timer of the
lowest priority runs after every I/O wake-up of that pass), so the
requests that arrived meanwhile have joined the line, and to the head of
the line directly, so nobody slips in between. Measured the same way with
``Turns``: exactly 31 others between two answers to one connection (3,488
times of 3,489); p95 went from 1.9 to 1.5-1.7 times the median
(docs/benchmarks.md, "Fifth round").

Only for one SQLite worker under gevent (app/factory.py): on PostgreSQL a
request yields at every round trip and many run at once.
"""
import heapq
import itertools
import time
from collections import OrderedDict

# Set in a request's WSGI environ once it has had its turn: the worker
# need not yield after it as well (factory.YieldAfterRequest).
TURN_TAKEN = "bozka.turn_taken"

# A connection's last response counts as its next request's arrival time
# only this soon after it was sent (a volunteer who read the page for a
# while has just sent theirs; a client that answered at once, a moment
# after the response).
RECENT = 1.0
CONNECTIONS = 4096  # connections remembered, the most recently served
HAND_OVER_PRIORITY = -2  # libev's lowest (EV_MINPRI)


class Turns:
    """A first-come, first-served turn for gevent greenlets::

        with turns.turn(connection_key):
            ...
    """

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._taken = False
        self._line = []  # heap of _Waiting
        self._order = itertools.count()
        self._last_served = OrderedDict()  # connection -> when its last turn ended

    def arrival(self, connection, now):
        """The earliest time this connection's request can have arrived."""
        last = self._last_served.get(connection)
        return last if last is not None and now - last < RECENT else now

    def turn(self, connection):
        return _Turn(self, connection)

    @property
    def waiting(self):
        return sum(1 for waiting in self._line if not waiting.cancelled)

    def _enter(self, connection):
        import gevent
        from gevent.event import Event

        waiting = _Waiting(self.arrival(connection, self._clock()), next(self._order), Event())
        heapq.heappush(self._line, waiting)
        try:
            if not self._taken:
                gevent.sleep(0)  # the others read in this pass of the loop join the line first
                if not self._taken:
                    self._taken = True
                    self._pass()
            waiting.ready.wait()
        except BaseException:
            if waiting.ready.is_set():
                self._leave(connection)  # the turn was handed over as this greenlet was stopped
            else:
                waiting.cancelled = True
            raise

    def _leave(self, connection):
        self._last_served[connection] = self._clock()
        self._last_served.move_to_end(connection)
        if len(self._last_served) > CONNECTIONS:
            self._last_served.popitem(last=False)
        # Hand over after the loop's next poll, once the connections that
        # became readable meanwhile have joined the line: a timer of the
        # lowest priority runs after every I/O wake-up of that pass.
        import gevent

        timer = gevent.get_hub().loop.timer(0.0, priority=HAND_OVER_PRIORITY)
        timer.start(self._hand_over, timer)

    def _hand_over(self, timer):
        timer.close()
        self._pass()

    def _pass(self):
        """Hand the (taken) turn to the head of the line, or free it."""
        while self._line:
            waiting = heapq.heappop(self._line)
            if not waiting.cancelled:
                waiting.ready.set()
                return
        self._taken = False


class _Waiting:
    __slots__ = ("arrival", "order", "ready", "cancelled")

    def __init__(self, arrival, order, ready):
        self.arrival, self.order, self.ready, self.cancelled = arrival, order, ready, False

    def __lt__(self, other):
        return (self.arrival, self.order) < (other.arrival, other.order)


class _Turn:
    __slots__ = ("turns", "connection")

    def __init__(self, turns, connection):
        self.turns, self.connection = turns, connection

    def __enter__(self):
        self.turns._enter(self.connection)
        return self

    def __exit__(self, *_exc):
        self.turns._leave(self.connection)
