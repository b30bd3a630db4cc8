#!/usr/bin/env bash
# Installs a Chromium for Playwright to drive. Debian's package when apt-get is usable
# (Playwright's own download needs internet access a locked-down machine may not have).
set -euo pipefail
py="${1:-python3}"
apt_chromium() {
  command -v apt-get >/dev/null 2>&1 || return 1
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || return 1
    sudo="sudo -n"  # never waits for a password: without one, Playwright's download is next
  fi
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
}
# Where the package is missing or apt cannot be used (no root, a snap-only Chromium), Playwright's own.
if ! apt_chromium; then
  echo "install-chromium: no Chromium from apt-get; using Playwright's download" >&2
  "$py" -m playwright install chromium
fi
