"""Outbound URL policy (SPEC §3): which destinations a session may load.

Only ``http``/``https``; no userinfo; and, unless private networks are allowed or the host
is on the allow-list, no destination that is not globally routable (private, loopback,
link-local, unspecified, multicast, reserved, cloud metadata), whether written as an IP
literal or a DNS name that resolves to one. Reasons are the reference's texts.

:class:`PolicyGuard` enforces it for everything a page requests (link clicks, script
navigations, sub-resources, redirects) through Playwright routing. Playwright does not
route the hops of a redirect, so the guard fetches each request itself without following
redirects and checks every ``Location`` hop before handing the first response to Chromium.
Limits, documented: Chromium re-requests the hops it was told about (they were checked), and
DNS is resolved once by us and once by Chromium (a rebinding race is not closed). WebSocket
connections are not routed.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from playwright.async_api import BrowserContext, Route

BLOCKED_PREFIX = "Outbound URL blocked: "
METADATA_ADDRESSES = frozenset({ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")})
MAX_REDIRECT_HOPS = 20  # Chromium's own limit
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


class PolicyViolation(Exception):
    """``str()`` is the reason (without the ``Outbound URL blocked:`` prefix)."""


def _blocked_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return (
        address in METADATA_ADDRESSES
        or not address.is_global
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
    )


@dataclass(frozen=True)
class UrlPolicy:
    allow_private_network: bool = True
    allowed_hosts: tuple[str, ...] = ()

    @property
    def restricts_network(self) -> bool:
        """False for the notebook default: then no route is installed at all (speed)."""
        return not self.allow_private_network

    def check_form(self, url: str) -> str:
        """Scheme and userinfo rules; returns the host. Raises :class:`PolicyViolation`."""
        try:
            parts = urlsplit(url)
            host = parts.hostname
        except ValueError as exc:
            raise PolicyViolation("the URL cannot be parsed") from exc
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise PolicyViolation(
                f"outbound URL scheme '{scheme}' is not allowed; only http and https are permitted"
            )
        if parts.username is not None or parts.password is not None:
            raise PolicyViolation("outbound URLs containing credentials are not allowed")
        if not host:
            raise PolicyViolation("the URL has no host")
        return host

    def _host_allowed(self, host: str) -> bool:
        return self.allow_private_network or host.lower() in {h.lower().strip("[]") for h in self.allowed_hosts}

    async def check(self, url: str) -> None:
        """Every rule, resolving DNS names when the network is restricted."""
        host = self.check_form(url)
        if self._host_allowed(host):
            return
        try:
            literal = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        if literal is not None:
            addresses = [literal]
        else:
            addresses = await _resolve(host)
        for address in addresses:
            if _blocked_address(address):
                raise PolicyViolation(f"address {address} is not globally routable")


async def _resolve(host: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise PolicyViolation(f"host {host} could not be resolved") from exc
    return [ipaddress.ip_address(info[4][0].split("%", 1)[0]) for info in infos]


class PolicyGuard:
    """Routes one context's requests through a :class:`UrlPolicy`.

    Blocked main-frame navigations are remembered (``take_blocked``) so the action that
    caused them can fail with ``Navigation failed: Outbound URL blocked: <reason>``.
    """

    def __init__(self, policy: UrlPolicy, fetch_timeout: float) -> None:
        self._policy = policy
        self._fetch_timeout_ms = fetch_timeout * 1000
        self._blocked: list[str] = []
        self._pending = 0
        self._idle = asyncio.Event()
        self._idle.set()

    async def install(self, context: BrowserContext) -> None:
        await context.route("**/*", self._handle)

    def take_blocked(self) -> str | None:
        """The first navigation blocked since the last call, and forget them all."""
        first = self._blocked[0] if self._blocked else None
        self._blocked.clear()
        return first

    async def drain(self, timeout: float) -> None:
        """Wait (bounded) until navigation checks in progress are decided."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), timeout)

    async def _handle(self, route: Route) -> None:
        request = route.request
        navigation = request.is_navigation_request() and request.frame.parent_frame is None
        if navigation:
            self._pending += 1
            self._idle.clear()
        try:
            await self._decide(route, navigation)
        except Exception:  # the page or context went away mid-request: nothing left to answer
            with contextlib.suppress(Exception):
                await route.abort("failed")
        finally:
            if navigation:
                self._pending -= 1
                if self._pending == 0:
                    self._idle.set()

    async def _decide(self, route: Route, navigation: bool) -> None:
        request = route.request
        try:
            await self._policy.check(request.url)
            first = await route.fetch(max_redirects=0, timeout=self._fetch_timeout_ms)
            await self._check_redirect_chain(route, request.url, request.method, first)
        except PolicyViolation as violation:
            if navigation:
                self._blocked.append(str(violation))
            await route.abort("blockedbyclient")
            return
        await route.fulfill(response=first)  # a fetch failure propagates: _handle aborts the request

    async def _check_redirect_chain(self, route: Route, url: str, method: str, response) -> None:
        for _ in range(MAX_REDIRECT_HOPS):
            location = response.headers.get("location")
            if response.status not in REDIRECT_STATUSES or not location:
                return
            url = urljoin(url, location)
            await self._policy.check(url)
            if response.status in (301, 302, 303):
                method = "GET"
            response = await route.fetch(url=url, method=method, max_redirects=0, timeout=self._fetch_timeout_ms)
