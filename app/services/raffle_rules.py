"""The raffle's arithmetic and its checks, free of Flask and the database.

They live in ``scripts/verify_raffle.py``, the standard-library-only script
anyone downloads from a raffle page to check a draw (``SCRIPT``, served by
``volunteer.verify_script``): the site loads that very file, so the code that
draws the winners and the code that checks them are one.
"""
import importlib.util
import os

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts",
                      "verify_raffle.py")

_spec = importlib.util.spec_from_file_location("bozka_verify_raffle", SCRIPT)
verifier = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(verifier)

sha256_hex = verifier.sha256_hex
tickets_digest = verifier.tickets_digest
normal_beacon = verifier.normal_beacon
draw_winners = verifier.draw_winners
iso = verifier.iso
check_draw = verifier.check_draw
