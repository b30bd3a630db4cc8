"""The egress gate: every byte Chromium sends passes one connection-level URL policy.

Checking URLs in Playwright routes is not enough: routes never see redirect hops, WebSockets,
speculative prefetches or WebRTC, and a check that resolves a name once while Chromium resolves
it again can be rebound. So the engine launches Chromium with this gate as its only proxy (see
:func:`chromium_args` for the switches that leave no way around it) and the gate decides at
connection time:

* every plain-HTTP request (per request: Chromium reuses one proxy connection for many origins)
  and every ``CONNECT`` tunnel (HTTPS, ``ws://``, ``wss://``, TURN over TCP) has its host
  resolved **once**; every address is checked by :class:`UrlPolicy`, and the gate connects to
  exactly the addresses it checked — a second DNS answer is never used;
* a refusal is a ``403`` carrying :data:`MARKER` (plain HTTP) or a refused ``CONNECT``, and is
  remembered (:meth:`EgressGate.refusals`) so the engine can name it in the navigation's error;
* an unreachable destination is a ``502`` carrying the network error Chromium would have
  reported itself (``net::ERR_CONNECTION_REFUSED`` …), so errors read as before.

HTTP/1.1 is parsed by ``h11`` on both sides. Everything is bounded: header size, idle time,
concurrent connections and tunnels, pooled upstream connections (kept alive per checked
address and port, which keeps the gate's cost on a page with many subresources small).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import re
import time
from collections import deque
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

import h11

from plasmate_nb.browser.addresses import IPAddress
from plasmate_nb.browser.policy import (
    PolicyViolation,
    Resolver,
    Unresolvable,
    UrlPolicy,
    system_resolver,
)
from plasmate_nb.errors import BLOCKED_PREFIX

log = logging.getLogger("plasmate_nb.egress")

MARKER = "x-plasmate-egress"
"""Response header on every answer the gate makes itself: ``refused`` or ``unreachable``."""
REASON = "x-plasmate-egress-reason"
# Never relayed from a site: only the gate's own answers carry them (:func:`gate_answer`).
OWN_HEADERS = frozenset({MARKER.encode(), REASON.encode()})
HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-connection",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"te",
        b"trailer",
        b"upgrade",
    }
)
GATE_HOST = "127.0.0.1"
PROXY_BYPASS = "<-loopback>"
"""Chromium's proxy bypass list, given with the gate every time: "no implicit bypass". Without it
Chromium sends localhost, 127.0.0.0/8, [::1] and link-local destinations around any proxy.
Playwright adds it on its own only while ``PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK``
is unset in its environment (set, a page reached 127.0.0.1 straight), so it is never left to it."""
PROBE_HOST = "egress-probe.plasmate.invalid"
"""A host the gate answers itself (``200``, marked ``probe``), never resolved: the engine loads
``http://<PROBE_HOST>/<token>`` in a new browser to see its traffic really comes here."""
SWITCHES_MISSING = (
    "the browser at PLASMATE_NB_BROWSER_ENDPOINT was started without switches the egress gate "
    "relies on, so a page could reach the network around it (WebRTC, its own DNS); it is not used. "
    "Missing: "
)
SWITCHES_UNCHECKED = (
    "plasmate-nb: note: the browser at PLASMATE_NB_BROWSER_ENDPOINT does not say how it was started, "
    "so its switches were not checked; start it with --enable-automation too and the engine checks "
    "them at every start."
)
NOT_GATED = (
    "the browser does not send its traffic through the egress gate (a launch wrapper, flags file "
    "or managed policy may set another proxy mode, such as --no-proxy-server or a PAC script); it "
    "is not used"
)
T = TypeVar("T")
TASKS_CLOSE_SECONDS = 2.0  # how long aclose waits for its cancelled connections to end


@dataclass(frozen=True)
class GateLimits:
    """Bounds of the gate. Times are seconds."""

    max_header_bytes: int = 256 * 1024  # Chromium's own bound on response headers
    client_idle: float = 60.0  # a keep-alive connection from Chromium with no request
    upstream_connect: float = 10.0
    upstream_idle: float = 120.0  # no byte from the destination for this long ends the exchange
    tunnel_idle: float = 600.0  # WebSockets may sit quietly for minutes
    max_connections: int = 512
    max_tunnels: int = 256
    pooled_per_destination: int = 6
    pooled_total: int = 64
    pooled_idle: float = 30.0
    replayable_body_bytes: int = 64 * 1024  # larger request bodies are streamed, never sent twice
    remembered_refusals: int = 256


# Off, so WebRTC neither hands out nor looks up mDNS (.local) names: multicast the gate never sees.
MDNS_FEATURE = "WebRtcHideLocalIpsWithMdns"


def missing_switches(arguments: list[str]) -> list[str]:
    """What of :func:`chromium_args` a browser started with ``arguments`` lacks (its command
    line, as ``Browser.getBrowserCommandLine`` gives it), in words. Chromium keeps the last of a
    repeated switch, so that is the one compared; of ``--disable-features`` only the gate's
    feature is needed."""
    missing = []
    for switch in chromium_args():
        name, equals, value = switch.partition("=")
        last = next((a for a in reversed(arguments) if a == name or a.startswith(name + "=")), None)
        given = None if last is None else last.partition("=")[2]
        if name == "--disable-features":
            if MDNS_FEATURE not in (given or "").split(","):
                missing.append(f"{MDNS_FEATURE} in its last --disable-features")
        elif last is None or (equals and given != value):
            missing.append(switch)
    return missing


class BrowserNotGated(RuntimeError):
    """The browser's traffic does not reach the gate (:data:`NOT_GATED`)."""


@dataclass(frozen=True)
class Refusal:
    """One destination the gate refused: enough to name it in an error, nothing more."""

    host: str
    port: int
    reason: str
    serial: int


class _Upstream:
    """One kept-alive HTTP/1.1 connection to a checked address."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        limits: GateLimits,
        live: set[_Upstream],
    ) -> None:
        self.reader = reader
        self.writer = writer
        self._live = live  # the gate's open upstream connections, in use or pooled: it closes them all
        live.add(self)
        self.idle = limits.upstream_idle
        self.http = h11.Connection(h11.CLIENT, max_incomplete_event_size=limits.max_header_bytes)
        peer = writer.get_extra_info("peername") or ("", 0)
        self.key: tuple[str, int] = (str(peer[0]), int(peer[1]))
        self.released_at = 0.0
        self.reused = False

    async def send(self, event: h11.Event) -> None:
        self.writer.write(self.http.send(event) or b"")
        await asyncio.wait_for(self.writer.drain(), self.idle)  # a destination that stops reading

    def usable(self, now: float, idle: float) -> bool:
        return not self.reader.at_eof() and not self.writer.is_closing() and now - self.released_at < idle

    def close(self) -> None:
        self.writer.close()
        self._live.discard(self)


class EgressGate:
    """An HTTP/1.1 forward proxy on 127.0.0.1 that enforces a :class:`UrlPolicy`."""

    def __init__(
        self, policy: UrlPolicy, *, resolver: Resolver | None = None, limits: GateLimits | None = None
    ) -> None:
        self.policy = policy
        self.limits = limits or GateLimits()
        self._resolver = resolver or system_resolver
        self._server: asyncio.Server | None = None
        self._port = 0
        self._connections = asyncio.Semaphore(self.limits.max_connections)
        self._tunnels = asyncio.Semaphore(self.limits.max_tunnels)
        self._pool: dict[tuple[str, int], deque[_Upstream]] = {}
        self._upstreams: set[_Upstream] = set()  # every open one, pooled or in use
        self._refusals: deque[Refusal] = deque(maxlen=self.limits.remembered_refusals)
        self._probes: deque[str] = deque(maxlen=16)  # the paths of probe requests received
        self._serial = itertools.count(1)
        self._tasks: dict[asyncio.Task[None], asyncio.StreamWriter] = {}  # connections from Chromium

    def __repr__(self) -> str:
        return f"EgressGate(server={self.server!r}, refusals={len(self._refusals)})"

    # ----- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        if self._server is not None:
            return
        self._server = await asyncio.start_server(
            self._accept, GATE_HOST, 0, limit=self.limits.max_header_bytes
        )
        self._port = self._server.sockets[0].getsockname()[1]

    @property
    def server(self) -> str:
        """``http://127.0.0.1:<port>``: the proxy address given to Chromium."""
        return f"http://{GATE_HOST}:{self._port}" if self._server is not None else ""

    async def aclose(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
        tasks = list(self._tasks)
        for task, writer in self._tasks.items():
            task.cancel()
            # Also its socket: a connection whose cancellation got lost (3.11's wait_for) then reads
            # the end of its client at once instead of waiting out the idle bound.
            writer.close()
        try:  # bounded: a task whose cancellation got lost (3.11's wait_for) must not hold the close
            if tasks:
                ended, _ = await asyncio.wait(tasks, timeout=TASKS_CLOSE_SECONDS)
                for task in ended:  # read each end, so none is reported as never retrieved
                    if not task.cancelled():
                        task.exception()
        finally:
            # In use too: an exchange whose wait for its destination lost its cancellation then
            # reads the end of that connection at once.
            for upstream in list(self._upstreams):
                upstream.close()
            self._pool.clear()

    # ----- what the engine asks ----------------------------------------------------------------

    def mark(self) -> int:
        """A point in time for :meth:`refusal_for` (``since=``)."""
        return next(self._serial)

    @staticmethod
    def probe_url(token: str) -> str:
        """A URL only the gate answers (:data:`PROBE_HOST`); :meth:`probed` says whether it came."""
        return f"http://{PROBE_HOST}/{token}"

    def probed(self, token: str) -> bool:
        return f"/{token}" in self._probes

    def refusals(self) -> list[Refusal]:
        """The most recent refusals, oldest first (bounded)."""
        return list(self._refusals)

    def refusal_for(self, url: str, since: int = 0) -> Refusal | None:
        """The latest refusal of ``url``'s host and port recorded after ``since``."""
        try:
            parts = urlsplit(url)
            host, port = parts.hostname, parts.port or (443 if parts.scheme in ("https", "wss") else 80)
        except ValueError:
            return None
        for refusal in reversed(self._refusals):
            if refusal.serial > since and refusal.host == host and refusal.port == port:
                return refusal
        return None

    # ----- connections from Chromium -----------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks[task] = writer
        try:
            async with self._connections:
                await self._serve(reader, writer)
        except (OSError, h11.ProtocolError, asyncio.IncompleteReadError, TimeoutError):
            pass  # the peer went away or broke the protocol: nothing is owed to it
        except asyncio.CancelledError:
            pass  # aclose() ends every connection; the task is ours, so the cancellation ends here
        except Exception as error:  # a surprise must end this connection only, never the gate
            log.warning("egress gate: connection ended by %s", type(error).__name__)
        finally:
            self._tasks.pop(task, None)
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        client = h11.Connection(h11.SERVER, max_incomplete_event_size=self.limits.max_header_bytes)
        while True:
            try:
                event = await _next_event(client, reader, self.limits.client_idle)
            except h11.RemoteProtocolError:
                with contextlib.suppress(h11.ProtocolError):
                    writer.write(_own_answer(client, 400, "unreachable", "malformed request"))
                return
            if not isinstance(event, h11.Request):
                return  # closed (or idle too long) between requests
            if event.method == b"CONNECT":
                await self._tunnel(client, event, reader, writer)
                return
            await self._forward(client, event, reader, writer)
            if client.our_state is not h11.DONE or client.their_state is not h11.DONE:
                return
            client.start_next_cycle()

    async def _destination(self, host: str, port: int) -> list[IPAddress]:
        """Checked addresses, or a remembered refusal (:class:`PolicyViolation`)."""
        try:
            return await self.policy.addresses(host, self._resolver)
        except PolicyViolation as violation:
            self._refusals.append(Refusal(host, port, str(violation), next(self._serial)))
            raise

    # ----- plain HTTP: one request at a time, each checked ---------------------------------------

    async def _forward(
        self,
        client: h11.Connection,
        request: h11.Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        parts = urlsplit(request.target.decode("ascii", "replace"))
        try:
            host, port = parts.hostname, parts.port or 80
        except ValueError:
            host, port = None, 0
        if parts.scheme != "http" or not host:
            await _drain_body(client, reader, self.limits.client_idle)
            writer.write(
                _own_answer(client, 400, "unreachable", "a proxy request needs an absolute http URL")
            )
            return
        if host == PROBE_HOST:
            await _drain_body(client, reader, self.limits.client_idle)
            self._probes.append(parts.path)
            writer.write(_own_answer(client, 200, "probe", "the egress gate"))
            return
        try:
            addresses = await self._destination(host, port)
        except PolicyViolation as violation:
            await _drain_body(client, reader, self.limits.client_idle)
            writer.write(_own_answer(client, 403, "refused", BLOCKED_PREFIX + str(violation)))
            return
        except Unresolvable as unresolvable:
            await _drain_body(client, reader, self.limits.client_idle)
            writer.write(_own_answer(client, 502, "unreachable", _net_error(unresolvable)))
            return
        head = h11.Request(
            method=request.method,
            target=((parts.path or "/") + (f"?{parts.query}" if parts.query else "")).encode(
                "ascii", "replace"
            ),
            headers=_end_to_end(request.headers),
        )
        body = _Body(client, reader, self.limits)
        await body.read_ahead()
        try:
            upstream, first = await self._exchange(addresses, port, head, body)
            relay = self._relay_response(client, upstream, first, writer)
            await _unless_client_leaves(client, reader, upstream, relay, self.limits.max_header_bytes)
        except _ClientLeft:
            return  # what it waited on has been let go of; closing is all that is left
        except OSError as error:
            if client.their_state is h11.SEND_BODY:
                return  # the request itself is incomplete: closing is the only honest answer
            writer.write(_own_answer(client, 502, "unreachable", _net_error(error)))

    async def _exchange(
        self, addresses: list[IPAddress], port: int, head: h11.Request, body: _Body
    ) -> tuple[_Upstream, h11.Response]:
        """Send the request and read the response head. A kept-alive connection the destination
        closed meanwhile is replaced once by a fresh one (as browsers do), if the body allows."""
        upstream = self._pooled(addresses, port)
        while True:
            if upstream is None:
                upstream = _Upstream(*await self._open(addresses, port), self.limits, self._upstreams)
            try:
                await upstream.send(head)
                await body.send_to(upstream)  # the request is whole from here: its sender can be watched
                head_read = _response_head(upstream, self.limits.upstream_idle)
                limit = self.limits.max_header_bytes
                return upstream, await _unless_client_leaves(
                    body.client, body.reader, upstream, head_read, limit
                )
            except OSError:
                upstream.close()
                if not (upstream.reused and body.replayable):
                    raise
                upstream = None
            except BaseException:  # the client left, the gate is closing: this connection is done with
                upstream.close()
                raise

    async def _relay_response(
        self, client: h11.Connection, upstream: _Upstream, first: h11.Response, writer: asyncio.StreamWriter
    ) -> None:
        reusable = False
        try:
            event: h11.Event = h11.Response(
                status_code=first.status_code, reason=first.reason, headers=_end_to_end(first.headers)
            )
            while True:
                writer.write(client.send(event) or b"")
                await asyncio.wait_for(writer.drain(), self.limits.client_idle)  # Chromium stopped reading
                if isinstance(event, h11.EndOfMessage):
                    reusable = upstream.http.our_state is h11.DONE and upstream.http.their_state is h11.DONE
                    return
                event = await _next_event(upstream.http, upstream.reader, self.limits.upstream_idle)
                if event is None or isinstance(event, h11.ConnectionClosed):
                    return  # cut short: closing tells Chromium the body is incomplete
        except h11.RemoteProtocolError:
            return
        finally:
            if reusable:
                self._release(upstream)
            else:
                upstream.close()

    def _pooled(self, addresses: list[IPAddress], port: int) -> _Upstream | None:
        now = time.monotonic()
        for address in addresses:
            pooled = self._pool.get((str(address), port))
            while pooled:
                upstream = pooled.pop()
                if upstream.usable(now, self.limits.pooled_idle):
                    upstream.reused = True
                    return upstream
                upstream.close()
        return None

    def _release(self, upstream: _Upstream) -> None:
        if self._server is None:  # closed meanwhile: the pool has been emptied for good
            upstream.close()
            return
        upstream.http.start_next_cycle()
        upstream.released_at = time.monotonic()
        pooled = self._pool.setdefault(upstream.key, deque())
        total = sum(len(queue) for queue in self._pool.values())
        if len(pooled) >= self.limits.pooled_per_destination or total >= self.limits.pooled_total:
            upstream.close()
            return
        pooled.append(upstream)

    async def _open(
        self, addresses: list[IPAddress], port: int
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Connect to the first of the checked addresses that answers (never to any other)."""
        last: OSError = ConnectionRefusedError("no address")
        for address in addresses:
            try:
                return await asyncio.wait_for(
                    asyncio.open_connection(str(address), port), self.limits.upstream_connect
                )
            except TimeoutError:
                last = TimeoutError("connect timed out")
            except OSError as error:
                last = error
        raise last

    # ----- CONNECT: one check per tunnel -----------------------------------------------------------

    async def _tunnel(
        self,
        client: h11.Connection,
        request: h11.Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        host, port = _authority(request.target.decode("ascii", "replace"))
        await _drain_body(client, reader, self.limits.client_idle)  # a CONNECT has none; h11 wants its end
        if host is None:
            writer.write(_own_answer(client, 400, "unreachable", "a CONNECT target is host:port"))
            return
        # The slot is taken before the name is resolved: a CONNECT waiting for one holds no
        # upstream socket, and the destination sees nothing until the tunnel can carry bytes.
        async with self._tunnels:
            try:
                addresses = await self._destination(host, port)
                upstream_reader, upstream_writer = await self._open(addresses, port)
            except PolicyViolation as violation:
                writer.write(_own_answer(client, 403, "refused", BLOCKED_PREFIX + str(violation)))
                return
            except OSError as error:
                writer.write(_own_answer(client, 502, "unreachable", _net_error(error)))
                return
            writer.write(client.send(h11.Response(status_code=200, headers=[])) or b"")
            leftover, _closed = client.trailing_data
            if leftover:
                upstream_writer.write(leftover)
            try:
                await _splice(reader, writer, upstream_reader, upstream_writer, self.limits.tunnel_idle)
            finally:
                upstream_writer.close()


# ----- helpers ---------------------------------------------------------------------------------------


async def _next_event(
    connection: h11.Connection, reader: asyncio.StreamReader, idle: float, received: list[int] | None = None
):
    """The next h11 event, reading as needed; ``None`` when the peer stays silent for ``idle``.
    ``received`` (a one-item counter) adds up the bytes read."""
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            try:
                data = await asyncio.wait_for(reader.read(65536), idle)
            except TimeoutError:
                return None
            if received is not None:
                received[0] += len(data)
            connection.receive_data(data)
            continue
        if event is h11.PAUSED:
            return None
        return event


class _Body:
    """A request body on its way upstream: read ahead (bounded) so a request can be sent again
    on a fresh connection, streamed when larger."""

    def __init__(self, client: h11.Connection, reader: asyncio.StreamReader, limits: GateLimits) -> None:
        self.client = client
        self.reader = reader
        self._limits = limits
        self._chunks: list[bytes] = []
        self._complete = False

    @property
    def replayable(self) -> bool:
        return self._complete

    async def read_ahead(self) -> None:
        size = 0
        while size <= self._limits.replayable_body_bytes:
            chunk = await self._next()
            if chunk is None:
                self._complete = True
                return
            self._chunks.append(chunk)
            size += len(chunk)

    async def send_to(self, upstream: _Upstream) -> None:
        for chunk in self._chunks:
            await upstream.send(h11.Data(data=chunk))
        if not self._complete:
            self._chunks = []  # streamed from here on: not replayable
            while (more := await self._next()) is not None:
                await upstream.send(h11.Data(data=more))
        await upstream.send(h11.EndOfMessage())

    async def _next(self) -> bytes | None:
        while True:
            event = await _next_event(self.client, self.reader, self._limits.client_idle)
            if event is None or isinstance(event, h11.ConnectionClosed):
                raise ConnectionResetError("the request body was cut short")
            if isinstance(event, h11.EndOfMessage):
                return None
            if isinstance(event, h11.Data):
                return bytes(event.data)


class _ClientLeft(Exception):
    """Chromium closed its side of the connection while the gate waited for it."""


async def _unless_client_leaves(
    client: h11.Connection, reader: asyncio.StreamReader, upstream: _Upstream, work: Awaitable[T], limit: int
) -> T:
    """``work``'s result, or :class:`_ClientLeft` when the client closes its side first.

    A browser ends a proxied request it no longer wants (a stopped load, a closed context) only by
    closing the connection; ``upstream``, the destination's connection, then goes with it instead
    of waiting out the idle bound, and ``work`` is cancelled. An end of input is taken as leaving,
    as common proxies take it: a half-closed connection reads the same as a closed one (Chromium
    never half-closes). Bytes the client sends meanwhile go to h11 for its next request, up to
    ``limit`` (Chromium sends none: it never pipelines); past that the watch ends and the rest
    waits in the socket. Only for a request read whole: nothing else reads ``reader`` meanwhile.
    """
    working = asyncio.ensure_future(work)
    watching = asyncio.ensure_future(_until_closed(client, reader, limit))
    try:
        done, _ = await asyncio.wait({working, watching}, return_when=asyncio.FIRST_COMPLETED)
        if watching in done and not working.done() and watching.result():
            raise _ClientLeft("the client closed its connection")
        return await working
    finally:
        if not working.done():  # the client left, or the gate is closing
            upstream.close()  # first: work whose cancellation gets lost still ends, reading its end
        for task in (working, watching):
            task.cancel()
        await asyncio.wait({working, watching})
        for task in (working, watching):  # what ended otherwise than cancelled is read: never "unretrieved"
            if not task.cancelled():
                task.exception()


async def _until_closed(client: h11.Connection, reader: asyncio.StreamReader, limit: int) -> bool:
    """True when the client's side ends; False when ``limit`` bytes came first (all kept)."""
    received = 0
    try:
        while received < limit:
            data = await reader.read(min(65536, limit - received))
            if not data:
                return True
            received += len(data)
            client.receive_data(data)
    except OSError:
        return True
    return False


async def _response_head(upstream: _Upstream, idle: float) -> h11.Response:
    """The final response head (1xx answers are hop-by-hop: Chromium never asked for them)."""
    received = [0]
    while True:
        try:
            event = await _next_event(upstream.http, upstream.reader, idle, received)
        except (ConnectionResetError, h11.RemoteProtocolError) as error:
            # h11 reports a close before any response as a protocol error; tell the two apart.
            if received[0] == 0:
                raise _EmptyResponse("closed before a response") from error
            raise _InvalidResponse("not an HTTP/1.1 response") from error
        if event is None:
            raise _NoResponse("no response")
        if isinstance(event, h11.ConnectionClosed):
            raise _EmptyResponse("closed before a response")
        if isinstance(event, h11.Response):
            return event


async def _drain_body(client: h11.Connection, reader: asyncio.StreamReader, idle: float) -> None:
    while client.their_state is h11.SEND_BODY:
        event = await _next_event(client, reader, idle)
        if event is None or isinstance(event, h11.ConnectionClosed):
            return


def _own_answer(client: h11.Connection, status: int, kind: str, text: str) -> bytes:
    """A complete answer the gate makes itself, marked so the engine can tell it from the site's."""
    body = (text + "\n").encode()
    headers = [
        ("content-type", "text/plain; charset=utf-8"),
        ("content-length", str(len(body))),
        ("cache-control", "no-store"),
        (MARKER, kind),
        (REASON, _header_safe(text)),
    ]
    if client.their_state is not h11.DONE:
        headers.append(("connection", "close"))
    return b"".join(
        part or b""
        for part in (
            client.send(h11.Response(status_code=status, headers=headers)),
            client.send(h11.Data(data=body)),
            client.send(h11.EndOfMessage()),
        )
    )


def _end_to_end(headers) -> list[tuple[bytes, bytes]]:
    listed = {
        token.strip().lower()
        for name, value in headers
        if name == b"connection"
        for token in value.split(b",")
    }
    return [
        (name, value)
        for name, value in headers
        if name not in HOP_BY_HOP and name not in listed and name not in OWN_HEADERS
    ]


def gate_answer(url: str, headers: Mapping[str, str], *, gated: bool) -> tuple[str | None, str]:
    """``(kind, reason)`` of an answer the gate made itself (``refused`` / ``unreachable``), or
    ``(None, "")``. Only a gate's answers are believed (``gated``: the browser goes through one),
    and only on plain HTTP: the gate drops those headers from what it relays, and an HTTPS answer
    passes it encrypted, so marker headers on one are the site's."""
    if not gated or url.partition(":")[0].lower() != "http":
        return None, ""
    return headers.get(MARKER), headers.get(REASON, "")


def _authority(target: str) -> tuple[str | None, int]:
    match = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:(\d{1,5})|([^:\[\]/]+):(\d{1,5})", target)
    if match is None:
        return None, 0
    host = match.group(1) or match.group(3)
    port = int(match.group(2) or match.group(4))
    return (host, port) if 0 < port < 65536 else (None, 0)


class _NoResponse(TimeoutError):
    """Connected, but the destination sent no response in time."""


class _EmptyResponse(ConnectionResetError):
    """Connected, but the destination closed without a response."""


class _InvalidResponse(ConnectionError):
    """Connected, but what came back is not HTTP/1.1."""


def _net_error(error: OSError) -> str:
    if isinstance(error, _NoResponse):
        return "net::ERR_TIMED_OUT"
    if isinstance(error, _EmptyResponse):
        return "net::ERR_EMPTY_RESPONSE"
    if isinstance(error, _InvalidResponse):
        return "net::ERR_INVALID_HTTP_RESPONSE"
    if isinstance(error, ConnectionRefusedError):
        return "net::ERR_CONNECTION_REFUSED"
    if isinstance(error, TimeoutError):
        return "net::ERR_CONNECTION_TIMED_OUT"
    if isinstance(error, Unresolvable):
        return "net::ERR_NAME_NOT_RESOLVED"
    return "net::ERR_CONNECTION_FAILED"


def _header_safe(text: str) -> str:
    return "".join(ch if " " <= ch <= "~" else "?" for ch in text)[:300]


async def _splice(
    client_reader: asyncio.StreamReader,
    client_writer: asyncio.StreamWriter,
    upstream_reader: asyncio.StreamReader,
    upstream_writer: asyncio.StreamWriter,
    idle: float,
) -> None:
    """Copy bytes both ways until either side closes or both stay silent for ``idle``."""
    last = [time.monotonic()]

    async def pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        while True:
            data = await source.read(65536)
            if not data:
                with contextlib.suppress(OSError):
                    if sink.can_write_eof():
                        sink.write_eof()
                return
            last[0] = time.monotonic()
            sink.write(data)
            await sink.drain()

    tasks = [
        asyncio.ensure_future(pump(client_reader, upstream_writer)),
        asyncio.ensure_future(pump(upstream_reader, client_writer)),
    ]
    try:
        pending = set(tasks)
        while pending:
            done, pending = await asyncio.wait(pending, timeout=idle)
            if any(task.exception() for task in done if not task.cancelled()):
                return
            if not done and time.monotonic() - last[0] >= idle:
                return
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task


# ----- the Chromium side -------------------------------------------------------------------------------


def chromium_args() -> list[str]:
    """Launch switches that leave Chromium no route around the gate.

    Chromium resolves no name itself (the gate does), speaks no QUIC (UDP the gate cannot see),
    and sends WebRTC UDP only through a proxy — that is, never. The ``--disable-features`` list
    is merged with Playwright's own, because Chromium keeps only the last such switch.
    """
    features = [*playwright_disabled_features(), MDNS_FEATURE]
    return [
        f"--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE {GATE_HOST}",
        "--disable-quic",
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--disable-features=" + ",".join(dict.fromkeys(features)),
    ]


@functools.cache  # a 3.6 MB driver bundle, read once: every engine start and check asks again
def playwright_disabled_features() -> tuple[str, ...]:
    """The ``--disable-features`` list Playwright passes to Chromium, read from its driver."""
    import playwright

    root = Path(playwright.__file__).parent / "driver" / "package" / "lib"
    for source in (root / "coreBundle.js", root / "server" / "chromium" / "chromiumSwitches.js"):
        try:
            text = source.read_text(encoding="utf-8")
        except OSError:
            continue
        match = re.search(r"disabledFeatures\s*=\s*\[(.*?)\]", text, re.DOTALL)
        if match:
            body = re.sub(r"//[^\n]*", "", match.group(1))
            return tuple(re.findall(r"[\"']([A-Za-z0-9_]+)[\"']", body))
    return ()
