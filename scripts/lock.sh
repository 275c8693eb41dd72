#!/usr/bin/env bash
# Regenerate the lock files (every installed package pinned, with the hashes
# of its files on PyPI) from the direct lists: requirements.txt (runtime),
# requirements-build.txt (pip, setuptools, wheel), requirements-test.txt.
# Usage: scripts/lock.sh [PIP_COMPILE]  (`make lock` passes the venv's one.)
# Extra arguments go to pip-compile, e.g. --upgrade-package flask.
set -euo pipefail
cd "$(dirname "$0")/.."
PIP_COMPILE="${1:-.venv/bin/pip-compile}"
shift || true
# This machine's pip configuration (local indexes, wheel folders, constraints)
# is ignored: the hashes must be those of PyPI's files, which any clean
# machine downloads.
export PIP_CONFIG_FILE=/dev/null
unset PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_CONSTRAINT PIP_NO_INDEX || true
export CUSTOM_COMPILE_COMMAND="make lock"
compile() {
  "$PIP_COMPILE" --quiet --generate-hashes --allow-unsafe --strip-extras \
    --no-emit-index-url --no-emit-find-links --index-url https://pypi.org/simple \
    --output-file "$2" "$1" "${@:3}"
}
# Order matters: each later lock is constrained by the earlier ones.
compile requirements.txt requirements.lock "$@"
compile requirements-build.txt requirements-build.lock "$@"
compile requirements-test.txt requirements-test.lock "$@"
