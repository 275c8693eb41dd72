"""A package, so this folder's conftest is imported as e2e.conftest and never
shadows tests/conftest.py, which the top-level tests import as ``conftest``."""
