"""Small documents (robots.txt, AI catalogs) fetched through the egress gate
(docs/contract.md#small-document-fetches).

``crawl_policy`` and ``ard_discover`` read a few small files, not pages, so they do not need a
browser tab; but their requests must obey the same URL policy as everything Chromium sends. So
they use an HTTP client whose only proxy is the engine's egress gate: the gate resolves and
checks every destination (and records its refusals, :meth:`EgressGate.refusals`) exactly as for
Chromium. Streaming lets the byte caps hold while reading (a huge body is never buffered), and
redirects are followed here, hop by hop, so a caller can check each hop's origin before it is
requested. One deadline covers every hop and the body.

With a browser on another machine (which cannot use this machine's gate, see
docs/contract.md#the-egress-gate) these fetches still go through a gate of the engine's own
(:meth:`Engine.fetch_gate`): they leave from this machine, and only a gate resolves a name once and
connects to exactly the address it checked (a check before the request could be rebound).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

import httpx2

from plasmate_nb._http_logs import quiet_http_logs
from plasmate_nb.browser.egress import gate_answer
from plasmate_nb.browser.navigation import FAILED
from plasmate_nb.browser.policy import PolicyViolation, as_browser_reads
from plasmate_nb.errors import (
    BLOCKED_PREFIX,
    body_exceeds_limit,
    http_error,
    navigation_failed,
    outbound_blocked,
    timeout_after,
    too_many_redirects,
)

if TYPE_CHECKING:
    from plasmate_nb.browser.engine import Engine

quiet_http_logs()  # a fetched URL's path and query never reach a log

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
CHUNK = 16 * 1024


class DocumentError(Exception):
    """A failed fetch. ``kind``: ``blocked`` (the URL policy refused a destination), ``timeout``,
    ``too_large``, ``redirects`` (too many, or a bad ``Location``), ``cross_origin`` (a redirect the
    caller's rule refused), ``network`` or ``http`` (status ≥ 400, when asked to fail on it).
    ``str()`` is the reason text (``Outbound URL blocked: …``, ``Timeout after 1000ms`` …).
    ``url`` is the final URL when a final answer was received (``http``, ``too_large``), so a
    caller can check its origin as it would a document's."""

    def __init__(self, kind: str, message: str, status: int | None = None, url: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.url = url


@dataclass(frozen=True)
class Document:
    url: str  # the final URL
    status: int
    content_type: str | None
    body: bytes


def origin_of(url: str) -> tuple[str, str, int]:
    """``(scheme, lower-cased host, effective port)``; ValueError for a URL without one."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if not host:
        raise ValueError("no host")
    port = parts.port or {"http": 80, "https": 443}.get(scheme, 0)
    return scheme, host, port


async def fetch_document(
    engine: Engine,
    url: str,
    *,
    max_bytes: int,
    max_redirects: int,
    deadline: float,
    user_agent: str,
    accept: str = "*/*",
    fail_on_http_error: bool = True,
    redirect_check: Callable[[str], str | None] | None = None,
) -> Document:
    """GET ``url`` through the egress gate before ``deadline`` (the event loop's clock).

    ``redirect_check(next_url)`` is asked before each redirect hop is requested; a string answer
    refuses it (``DocumentError('cross_origin', answer)``)."""
    loop = asyncio.get_running_loop()
    remaining = deadline - loop.time()
    if remaining <= 0:
        raise DocumentError("timeout", timeout_after(0))
    try:
        async with asyncio.timeout(remaining):
            return await _fetch(
                engine, url, max_bytes, max_redirects, user_agent, accept, fail_on_http_error, redirect_check
            )
    except TimeoutError:
        raise DocumentError("timeout", timeout_after(remaining)) from None


async def _fetch(
    engine: Engine,
    url: str,
    max_bytes: int,
    max_redirects: int,
    user_agent: str,
    accept: str,
    fail_on_http_error: bool,
    redirect_check: Callable[[str], str | None] | None,
) -> Document:
    gate = await engine.fetch_gate()
    headers = {"User-Agent": user_agent, "Accept": accept, "Accept-Encoding": "gzip, deflate"}
    async with httpx2.AsyncClient(
        proxy=gate.server,
        trust_env=False,
        follow_redirects=False,
        headers=headers,
        verify=ssl.create_default_context(),
        timeout=None,
    ) as client:
        current = as_browser_reads(url)  # fetched as checked (and as a browser would)
        hops = 0
        while True:
            _check(engine, current)
            mark = gate.mark()
            try:
                async with client.stream("GET", current) as response:
                    _refused(response)
                    location = response.headers.get("location")
                    if response.status_code in REDIRECT_STATUSES and location is not None:
                        hops += 1
                        if hops > max_redirects:
                            raise DocumentError("redirects", too_many_redirects(max_redirects))
                        try:
                            # Both sides already read as a browser reads them: so is the join.
                            current = urljoin(current, as_browser_reads(location.strip()))
                            origin_of(current)
                        except ValueError:
                            raise DocumentError(
                                "redirects", navigation_failed("redirect response missing a valid Location")
                            ) from None
                        refusal = redirect_check(current) if redirect_check is not None else None
                        if refusal is not None:
                            raise DocumentError("cross_origin", refusal)
                        continue
                    final = str(response.url)
                    if fail_on_http_error and response.status_code >= 400:
                        raise DocumentError(
                            "http", http_error(response.status_code, final), response.status_code, final
                        )
                    body = await _read(response, max_bytes, final)
                    return Document(final, response.status_code, response.headers.get("content-type"), body)
            except httpx2.HTTPError as error:
                refused = gate.refusal_for(current, since=mark)
                if refused is not None:
                    raise DocumentError("blocked", outbound_blocked(refused.reason)) from None
                raise DocumentError("network", navigation_failed(_net_code(error))) from None


def _check(engine: Engine, url: str) -> None:
    """The URL policy's form rules (its destination rule is the gate's)."""
    try:
        engine.policy.check_form(url)
    except PolicyViolation as violation:
        raise DocumentError("blocked", outbound_blocked(str(violation))) from None


def _refused(response: httpx2.Response) -> None:
    kind, reason = gate_answer(str(response.url), response.headers, gated=True)
    if kind == "refused":
        raise DocumentError("blocked", outbound_blocked(reason.removeprefix(BLOCKED_PREFIX)))
    if kind == "unreachable":
        raise DocumentError("network", navigation_failed(reason or FAILED))


async def _read(response: httpx2.Response, max_bytes: int, final: str) -> bytes:
    declared = response.headers.get("content-length")
    if (
        declared is not None
        and declared.isdigit()
        and int(declared) > max_bytes
        and not response.headers.get("content-encoding")
    ):
        raise DocumentError("too_large", body_exceeds_limit(max_bytes), url=final)
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes(CHUNK):
        size += len(chunk)
        if size > max_bytes:
            raise DocumentError("too_large", body_exceeds_limit(max_bytes), url=final)
        chunks.append(chunk)
    return b"".join(chunks)


def _net_code(error: BaseException) -> str:
    if isinstance(error, httpx2.ProxyError):
        return "net::ERR_TUNNEL_CONNECTION_FAILED"
    if isinstance(error, httpx2.ConnectError):
        return "net::ERR_CONNECTION_FAILED"
    if isinstance(error, httpx2.DecodingError):
        return "net::ERR_CONTENT_DECODING_FAILED"
    return "net::ERR_FAILED"
