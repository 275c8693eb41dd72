"""WSGI entry point: ``gunicorn wsgi:app`` or ``flask --app wsgi run``."""
import gc

from app import create_app

app = create_app()
# The loaded application's objects live as long as the process: keep them
# out of the cyclic garbage collector's full passes, which otherwise walk
# all of them (about 60 ms with every request of the worker waiting,
# measured with gc.callbacks in scripts/bench/profile_judging.py's setup).
gc.freeze()
