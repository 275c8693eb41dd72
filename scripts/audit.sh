#!/usr/bin/env bash
# Vulnerability audit of every locked package (pip-audit, pinned in
# requirements-test.lock). Exit 1 if a known vulnerability is found; if the
# advisory data cannot be reached, say so plainly and exit 0: nothing was
# checked, and that is not a test failure. Extra arguments go to pip-audit,
# e.g. --vulnerability-service osv.
set -uo pipefail
cd "$(dirname "$0")/.."
PIP_AUDIT="${PIP_AUDIT:-.venv/bin/pip-audit}"
LOCKS=(requirements-build.lock requirements.lock requirements-test.lock)
args=()
for lock in "${LOCKS[@]}"; do args+=(-r "$lock"); done
# --strict: a package whose advisories cannot be fetched fails the run
# instead of being skipped under "No known vulnerabilities found".
out="$("$PIP_AUDIT" --strict --disable-pip --progress-spinner off "${args[@]}" "$@" 2>&1)"
rc=$?
if [ "$rc" -eq 0 ]; then
  echo "$out"
  echo "audit: done, no known vulnerabilities in ${LOCKS[*]}"
  exit 0
fi
if grep -qE 'Found [0-9]+ known vulnerabilit' <<<"$out"; then
  echo "$out"
  echo "audit: done, KNOWN VULNERABILITIES FOUND (above); update the package in requirements*.txt and run make lock"
  exit 1
fi
echo "audit: NOT RUN. The vulnerability data could not be reached, so nothing was checked."
echo "audit: pip-audit said: $(grep -m1 -E 'ERROR|Error|error' <<<"$out" || tail -n1 <<<"$out")"
echo "audit: run make audit again where PyPI's JSON API answers (or pass --vulnerability-service osv)."
exit 0
