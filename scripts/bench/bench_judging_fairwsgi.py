"""Bozka's WSGI app, yielding to the gevent hub after every request.

Used by ``bench_judging.py --fair-yield`` to show the effect of a proposed
change (not part of the app): under a gevent worker, a keep-alive
connection whose next request is already in its socket buffer is read
without yielding, so one busy connection can be served many times in a row
while the others wait. ``gevent.idle()`` after each request lets the hub
poll every connection first, which evens out latency.
"""
import gevent

from wsgi import app as _bozka


def app(environ, start_response):
    try:
        return _bozka(environ, start_response)
    finally:
        gevent.idle()
