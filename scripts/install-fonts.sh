#!/usr/bin/env bash
# Fonts for the end-to-end screenshots: Debian's Noto fonts, so that Chromium
# draws Urdu (and other scripts) as volunteers' phones do. The site itself
# uses no web fonts: it names the system fonts phones and desktops have.
set -euo pipefail
if fc-list :lang=ur family 2>/dev/null | grep -q .; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq fonts-noto-core >/dev/null
fc-list :lang=ur family | head -3
