"""app/turns.py: judgments of one SQLite gevent worker, first come, first served."""
import gevent
import pytest

from app.turns import RECENT, Turns


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def _serve(turns, served, name, connection, inside=None):
    with turns.turn(connection):
        served.append(name)
        if inside is not None:
            inside()


def test_one_at_a_time_in_order_of_arrival():
    clock = Clock()
    turns = Turns(clock)
    # Three connections answered before, at different times: their next
    # requests can have arrived no earlier than that.
    for connection, at in (("c", 99.5), ("a", 99.7), ("b", 99.9)):
        clock.now = at
        with turns.turn(connection):
            pass
    clock.now = 100.0
    gevent.sleep(0.01)  # the last one has handed the turn back: it is free
    assert turns.waiting == 0 and not turns._taken
    served, running = [], []

    def inside():
        running.append(1)
        assert len(running) == 1, "two judgments at once"
        gevent.sleep(0.001)  # a round trip: the others must wait all the same
        running.pop()

    # Read by the event loop in another order (b, new, a, c).
    greenlets = [
        gevent.spawn(_serve, turns, served, name, name, inside) for name in ("b", "new", "a", "c")
    ]
    gevent.joinall(greenlets, timeout=5, raise_error=True)
    assert served == ["c", "a", "b", "new"]
    assert turns.waiting == 0


def test_a_request_that_arrives_while_another_runs_waits_its_turn():
    turns = Turns()
    served = []

    def first_inside():
        # Arrives while "first" runs: it queues, and runs only after.
        gevent.spawn(_serve, turns, served, "second", "y")
        gevent.sleep(0.005)
        served.append("first done")

    gevent.spawn(_serve, turns, served, "first", "x", first_inside).join(timeout=5)
    gevent.sleep(0.05)
    assert served == ["first", "first done", "second"]


def test_a_long_silent_connection_counts_as_arriving_now():
    clock = Clock()
    turns = Turns(clock)
    clock.now = 10.0
    with turns.turn("reader"):
        pass
    clock.now = 10.0 + RECENT + 5  # the volunteer read the page for a while
    assert turns.arrival("reader", clock.now) == clock.now
    clock.now = 50.0
    with turns.turn("quick"):
        pass
    assert turns.arrival("quick", 50.2) == 50.0


def test_a_waiting_request_stopped_before_its_turn_does_not_block_the_line():
    turns = Turns()
    served = []
    release = gevent.event.Event()
    holder = gevent.spawn(_serve, turns, served, "holder", "h", release.wait)
    gevent.sleep(0.01)
    stopped = gevent.spawn(_serve, turns, served, "stopped", "s")
    later = gevent.spawn(_serve, turns, served, "later", "l")
    gevent.sleep(0.01)
    stopped.kill()
    release.set()
    gevent.joinall([holder, later], timeout=5, raise_error=True)
    assert served == ["holder", "later"]


def test_a_request_stopped_as_its_turn_came_passes_it_on():
    turns = Turns()
    served = []
    holder = gevent.spawn(_serve, turns, served, "holder", "h", lambda: gevent.sleep(0.01))
    gevent.sleep(0)
    stopped = gevent.spawn(_serve, turns, served, "stopped", "s")
    later = gevent.spawn(_serve, turns, served, "later", "l")
    gevent.sleep(0)

    holder.join(timeout=5)
    # The holder has handed the turn over (or will at the next poll); stop
    # "stopped" whatever it is doing: "later" must still be served.
    stopped.kill()
    later.join(timeout=5)
    assert served[0] == "holder" and served[-1] == "later"


def test_an_error_inside_frees_the_turn():
    turns = Turns()
    with pytest.raises(RuntimeError):
        with turns.turn("x"):
            raise RuntimeError("boom")
    served = []
    gevent.spawn(_serve, turns, served, "next", "y").join(timeout=5)
    assert served == ["next"]
