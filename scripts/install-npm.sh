#!/usr/bin/env bash
# Install Debian's npm (and Node.js) for the test-only npm packages, if missing.
set -euo pipefail
if command -v npm >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq npm >/dev/null
npm --version
