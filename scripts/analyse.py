#!/usr/bin/env python3
"""Analyse pairwise MT judgments: agreement, winners, significance, ordering.

    python scripts/analyse.py INPUT [--format bozka|wmt] [--json FILE]
        [--csv DIR] [--plots DIR] [--judges ID,...] [--alpha 0.05] ...

Direct Assessment scores (a Bozka da-judgments export or a WMT DA file,
``--format wmt-da|bozka-da``, detected when omitted) get their own analysis.

The statistics live in the Flask-free package ``app.stats``; this file only
puts the repository root on ``sys.path`` and calls its command line.  See
docs/analysis.md and ``--help``.
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from app.stats.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
