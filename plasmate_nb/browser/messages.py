"""Safe reasons for Playwright failures, privacy first (the messages around them are worded
by :mod:`plasmate_nb.errors`).

Deviation from the reference, on purpose: messages never echo typed text or selected
values, and URLs are reduced to their origin plus ``/…`` (no userinfo, path, query or
fragment). Playwright's own error text can carry selectors, values and full URLs, so it is
never passed through raw: only a known net error code or a cleaned first line is kept.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from plasmate_nb.errors import DOWNLOAD_REFUSED, PAGE_CLOSED, timeout_after

_NET_ERROR = re.compile(r"net::ERR_[A-Z0-9_]+")
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>]*")
_CLOSED_MARKERS = ("has been closed", "Target closed", "Browser closed", "Connection closed")


def reduce_url(url: str | None) -> str:
    """``scheme://host[:port]/…`` of ``url``: enough to say where, nothing about what."""
    if not url:
        return "…"
    try:
        parts = urlsplit(url)
        host = parts.hostname
        port = parts.port
    except ValueError:
        return "…"
    if not parts.scheme:
        return "…"
    if not host:
        return f"{parts.scheme}:…"
    shown = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{shown}{f':{port}' if port is not None else ''}/…"


def is_timeout(error: BaseException) -> bool:
    return isinstance(error, PlaywrightTimeoutError | TimeoutError)


def is_closed(error: BaseException) -> bool:
    return isinstance(error, PlaywrightError) and any(marker in str(error) for marker in _CLOSED_MARKERS)


def describe(error: BaseException, timeout: float, redact: tuple[str, ...] = ()) -> str:
    """A short, safe reason for a Playwright (or asyncio) failure."""
    if is_timeout(error):
        return timeout_after(timeout)
    text = str(error)
    if "Download is starting" in text:
        return DOWNLOAD_REFUSED
    net = _NET_ERROR.search(text)
    if net:
        return net.group(0)
    if is_closed(error):
        return PAGE_CLOSED
    line = text.strip().splitlines()[0] if text.strip() else type(error).__name__
    line = line.split(": ", 1)[1] if re.match(r"^[A-Za-z]+\.[A-Za-z_]+: ", line) else line
    for secret in redact:
        if secret:
            line = line.replace(secret, "…")
    return _URL.sub(lambda match: reduce_url(match.group(0)), line)
