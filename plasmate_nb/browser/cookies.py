"""The session's real context cookie jar in the reference's shapes (docs/contract.md#answers).

Accepted ``set_cookies`` items: ``name`` and ``value`` strings plus a ``domain`` or a
parseable ``url`` host. The domain gets a leading ``.`` unless it is an IP address
(Chromium refuses domain cookies on IP addresses); ``path`` defaults to ``/``; ``sameSite``
is matched case-insensitively, anything else becomes ``Lax``. Invalid items (not an object, a
missing or non-string ``name``/``value``, neither a ``domain`` nor a ``url`` with a host), and
items the browser itself refuses or drops, are skipped: only the returned count shows it. The
argument checker lets them through (tools/arguments.py checks nothing inside array items).
"""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import BrowserContext
from playwright.async_api import Error as PlaywrightError

SAME_SITE = {"strict": "Strict", "lax": "Lax", "none": "None"}


def _public_shape(cookie: dict[str, Any]) -> dict[str, Any]:
    expires = cookie.get("expires")
    return {
        "domain": cookie.get("domain", ""),
        "expires": None if expires is None or expires < 0 else expires,
        "httpOnly": bool(cookie.get("httpOnly")),
        "name": cookie.get("name", ""),
        "path": cookie.get("path", "/"),
        "sameSite": cookie.get("sameSite", "Lax"),
        "secure": bool(cookie.get("secure")),
        "size": len(cookie.get("name", "")) + len(cookie.get("value", "")),
        "value": cookie.get("value", ""),
    }


async def get(context: BrowserContext, url: str | None) -> list[dict[str, Any]]:
    cookies = await context.cookies([url] if url else [])
    return [_public_shape(dict(cookie)) for cookie in cookies]


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def _host_of(url: Any) -> str | None:
    if not isinstance(url, str):
        return None
    try:
        return urlsplit(url).hostname
    except ValueError:
        return None


def to_playwright(item: Any) -> dict[str, Any] | None:
    """The Playwright cookie for one ``set_cookies`` item, or None when it is not acceptable."""
    if (
        not isinstance(item, dict)
        or not isinstance(item.get("name"), str)
        or not isinstance(item.get("value"), str)
    ):
        return None
    domain = (
        item.get("domain")
        if isinstance(item.get("domain"), str) and item.get("domain")
        else _host_of(item.get("url"))
    )
    if not domain:
        return None
    if not domain.startswith(".") and not _is_ip(domain):
        domain = "." + domain
    path = item.get("path") if isinstance(item.get("path"), str) and item.get("path") else "/"
    same_site = item.get("sameSite")
    cookie: dict[str, Any] = {
        "name": item["name"],
        "value": item["value"],
        "domain": domain,
        "path": path,
        "sameSite": SAME_SITE.get(same_site.lower(), "Lax") if isinstance(same_site, str) else "Lax",
        "httpOnly": item.get("httpOnly") is True,
        "secure": item.get("secure") is True,
    }
    expires = item.get("expires")
    if isinstance(expires, int | float) and not isinstance(expires, bool):
        cookie["expires"] = float(expires)
    return cookie


async def set_many(context: BrowserContext, items: list[Any]) -> int:
    accepted = 0
    for item in items if isinstance(items, list) else []:
        cookie = to_playwright(item)
        if cookie is None:
            continue
        try:
            await context.add_cookies([cookie])  # type: ignore[list-item]  # checked by to_playwright; one by one: a refused cookie must not sink the rest
        except PlaywrightError:
            continue
        if await _in_jar(context, cookie):
            accepted += 1
    return accepted


async def _in_jar(context: BrowserContext, cookie: dict[str, Any]) -> bool:
    """Whether the jar now holds ``cookie``. Chromium drops some cookies without an error
    (``SameSite=None`` without ``secure``, an expiry in the past), and stores a domain such as
    ``.localhost`` without its dot: only what is really there is counted."""
    wanted = _jar_key(cookie)
    return any(_jar_key(dict(entry)) == wanted for entry in await context.cookies())


def _jar_key(cookie: dict[str, Any]) -> tuple[Any, ...]:
    domain = str(cookie.get("domain", "")).lstrip(".").lower()
    return cookie.get("name"), cookie.get("value"), cookie.get("path"), domain


def _domains_overlap(cookie_domain: str, wanted: str) -> bool:
    a, b = cookie_domain.lstrip(".").lower(), wanted.lstrip(".").lower()
    return a in b or b in a


def _matches_url(cookie: dict[str, Any], url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    host = (parts.hostname or "").lower()
    domain = str(cookie.get("domain", "")).lstrip(".").lower()
    path = parts.path or "/"
    cookie_path = str(cookie.get("path") or "/")
    return (host == domain or host.endswith("." + domain)) and path.startswith(cookie_path.rstrip("/") or "/")


async def clear(context: BrowserContext, name: str | None, domain: str | None, url: str | None) -> int:
    """Remove the matching cookies; returns how many went."""
    cookies = [dict(cookie) for cookie in await context.cookies()]
    if name is None and domain is None and url is None:
        await context.clear_cookies()
        return len(cookies)
    doomed = [
        cookie
        for cookie in cookies
        if (name is None or cookie.get("name") == name)
        and (domain is None or _domains_overlap(str(cookie.get("domain", "")), domain))
        and (url is None or _matches_url(cookie, url))
    ]
    for cookie in doomed:
        await context.clear_cookies(
            name=str(cookie["name"]), domain=str(cookie["domain"]), path=str(cookie["path"])
        )
    return len(doomed)
