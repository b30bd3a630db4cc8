"""Outbound URL policy (docs/contract.md#url-policy): which destinations a session may reach.

Only ``http``/``https`` URLs without userinfo; and, unless private networks are allowed, no
address that is not globally reachable (:mod:`plasmate_nb.browser.addresses`). Two ways to
let a private destination through: ``allowed_hosts`` matches the URL's host name as written
(so a name that merely *resolves* to an allowed address stays refused: no rebinding onto an
allowed service), and ``allowed_networks`` (CIDR) matches the addresses themselves, however
they were reached. Reasons are the reference's texts (:mod:`plasmate_nb.errors`, which also
words the ``Outbound URL blocked: …`` refusal built from them).

This module only *decides*. The egress gate (:mod:`plasmate_nb.browser.egress`) enforces the
decision at connection time for every byte Chromium sends, resolving each name once and
connecting to exactly the address it checked.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from plasmate_nb.browser.addresses import IPAddress, is_blocked, parse_address
from plasmate_nb.errors import (
    URL_EMPTY_HOST,
    URL_HAS_CREDENTIALS,
    URL_INVALID_DOMAIN,
    URL_INVALID_IPV6,
    URL_INVALID_PORT,
    URL_RELATIVE_WITHOUT_BASE,
    address_not_routable,
    host_unresolvable,
    invalid_url,
    scheme_not_allowed,
)
from plasmate_nb.trace.origin import scheme

Resolver = Callable[[str], Awaitable[Sequence[str]]]
"""``async (host) -> [address, …]``: how the gate turns a name into addresses (injectable for tests)."""


class PolicyViolation(Exception):
    """``str()`` is the reason (without the ``Outbound URL blocked:`` prefix)."""


class Unresolvable(OSError):
    """A host name that has no address: refused, never retried elsewhere."""


async def system_resolver(host: str) -> list[str]:
    """The operating system's answer for ``host``, in its order, without duplicates."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def as_browser_reads(url: str) -> str:
    """``url`` with each backslash before its query and fragment written as a slash: the URL
    standard (and so Chromium) reads an http(s) URL that way, so ``http://a.test\\@b.test/``
    goes to a.test with a path, not to b.test with user info. The engine's own fetches send
    this form, so that what they fetch is what the policy checked."""
    end = min((i for i in (url.find("?"), url.find("#")) if i >= 0), default=len(url))
    return url[:end].replace("\\", "/") + url[end:]


@dataclass(frozen=True)
class UrlPolicy:
    allow_private_network: bool = True
    allowed_hosts: tuple[str, ...] = ()
    allowed_networks: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for network in self.allowed_networks:
            try:
                ipaddress.ip_network(network, strict=False)
            except ValueError:
                raise ValueError(
                    f"allowed network {network!r} is not a CIDR network such as 10.0.0.0/8"
                ) from None

    def check_form(self, url: str) -> str:
        """Scheme and userinfo rules; returns the host. Raises :class:`PolicyViolation`.

        A URL that does not parse is refused with the reference's parser error
        (docs/contract.md#url-policy): one without a scheme is relative, not of scheme ``''``."""
        if scheme(url) is None:  # as the URL standard reads it (trace/origin.py)
            raise PolicyViolation(invalid_url(URL_RELATIVE_WITHOUT_BASE))
        try:
            parts = urlsplit(as_browser_reads(url))
            host = parts.hostname
        except ValueError as exc:
            detail = URL_INVALID_IPV6 if "IPv6" in str(exc) else URL_INVALID_DOMAIN
            raise PolicyViolation(invalid_url(detail)) from exc
        named = parts.scheme.lower()
        if named not in ("http", "https"):
            raise PolicyViolation(scheme_not_allowed(named))
        if parts.username is not None or parts.password is not None:
            raise PolicyViolation(URL_HAS_CREDENTIALS)
        if not host:
            raise PolicyViolation(invalid_url(URL_EMPTY_HOST))
        try:
            parts.port  # noqa: B018 (read for its check: out of range or not a number)
        except ValueError as exc:
            raise PolicyViolation(invalid_url(URL_INVALID_PORT)) from exc
        return host

    async def addresses(self, host: str, resolver: Resolver = system_resolver) -> list[IPAddress]:
        """Every address ``host`` stands for, each one checked: the only addresses a connection
        may then use. Raises :class:`PolicyViolation` (a blocked address) or :class:`Unresolvable`."""
        literal = parse_address(host)
        if literal is not None:
            found = [literal]
        else:
            try:
                answer = await resolver(host.rstrip(".").lower())
            except (OSError, UnicodeError, ValueError) as exc:
                raise Unresolvable(host_unresolvable(host)) from exc
            found = [address for address in map(parse_address, answer) if address is not None]
            if not found:
                raise Unresolvable(host_unresolvable(host))
        if self.allow_private_network or self._name_allowed(host):
            return found
        for address in found:
            if is_blocked(address) and not self._address_allowed(address):
                raise PolicyViolation(address_not_routable(address))
        return found

    async def check(self, url: str, resolver: Resolver = system_resolver) -> None:
        """Every rule for ``url`` (a pre-check with a friendly message; the gate enforces)."""
        host = self.check_form(url)
        try:
            await self.addresses(host, resolver)
        except Unresolvable as exc:
            if not self.allow_private_network:
                raise PolicyViolation(str(exc)) from None

    def _name_allowed(self, host: str) -> bool:
        wanted = host.lower().strip("[]").rstrip(".")
        return any(wanted == entry.lower().strip("[]").rstrip(".") for entry in self.allowed_hosts)

    def _address_allowed(self, address: IPAddress) -> bool:
        return any(
            address in ipaddress.ip_network(network, strict=False) for network in self.allowed_networks
        )
