#!/usr/bin/env bash
# Installs a Chromium for Playwright to drive. Debian's package when apt-get is usable
# (Playwright's own download needs internet access a locked-down machine may not have).
set -euo pipefail
py="${1:-python3}"
if command -v apt-get >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
else
  "$py" -m playwright install chromium
fi
