"""Where the Chromium executable comes from (docs/contract.md#browser-engine), in a fixed order.

1. ``PLASMATE_NB_CHROMIUM``: an explicit path, which must exist;
2. the browser Playwright manages (``playwright install chromium``);
3. a system ``chromium``, ``chromium-browser`` or ``google-chrome`` on ``PATH``.

``PLASMATE_NB_BROWSER_ENDPOINT`` bypasses all of this: the engine connects instead.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

ENV_EXECUTABLE = "PLASMATE_NB_CHROMIUM"
ENV_ENDPOINT = "PLASMATE_NB_BROWSER_ENDPOINT"
SYSTEM_NAMES = ("chromium", "chromium-browser", "google-chrome")
# Headless on a locked-down machine: no sandbox as root, no GPU, and no background
# connections (component updates, sync) that a closed network would refuse over and over.
LAUNCH_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)

INSTALL_HINT = (
    "No Chromium found. Install one with `apt-get install -y chromium` (Debian/Ubuntu) or "
    "`python -m playwright install chromium`, or set PLASMATE_NB_CHROMIUM to a Chromium executable, "
    "or PLASMATE_NB_BROWSER_ENDPOINT to a running browser (ws:// Playwright server or http:// CDP)."
)


class BrowserNotFound(RuntimeError):
    """No usable Chromium; the message says how to get one."""


@dataclass(frozen=True)
class BrowserLocation:
    executable: str | None  # None means: let Playwright use the browser it manages
    source: str  # "env", "playwright" or "system"


def _playwright_managed() -> str | None:
    """Path of the Chromium Playwright downloaded, if it is actually there."""
    cache = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or Path.home() / ".cache" / "ms-playwright")
    if not cache.is_dir():
        return None
    patterns = ("chromium_headless_shell-*/chrome-*/headless_shell", "chromium-*/chrome-linux*/chrome")
    for pattern in patterns:
        for candidate in sorted(cache.glob(pattern), reverse=True):
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    return None


def find_chromium() -> BrowserLocation:
    """The first Chromium in discovery order, or :class:`BrowserNotFound`."""
    explicit = os.environ.get(ENV_EXECUTABLE)
    if explicit:
        if Path(explicit).is_file() and os.access(explicit, os.X_OK):
            return BrowserLocation(explicit, "env")
        raise BrowserNotFound(f"{ENV_EXECUTABLE}={explicit!r} is not an executable file. {INSTALL_HINT}")
    managed = _playwright_managed()
    if managed:
        return BrowserLocation(None, "playwright")
    for name in SYSTEM_NAMES:
        found = shutil.which(name)
        if found:
            return BrowserLocation(found, "system")
    raise BrowserNotFound(INSTALL_HINT)
