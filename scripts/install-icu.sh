#!/usr/bin/env bash
# ICU's headers, for PyICU (requirements.txt: lookalike usernames, Unicode
# TR39), which builds against the system's ICU. Debian: libicu-dev, pkg-config.
set -euo pipefail
if pkg-config --exists icu-i18n 2>/dev/null; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq libicu-dev pkg-config >/dev/null
