"""Fixtures for the analysis tests (app.stats is Flask-free)."""

import pytest

from stats_helpers import write_bozka_csv


@pytest.fixture
def bozka_csv(tmp_path):
    """Factory: write Bozka export rows (tuples or dicts) to a CSV file."""
    def make(rows, name="judgments.csv"):
        return write_bozka_csv(tmp_path / name, rows)
    return make
