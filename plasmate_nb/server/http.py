"""Streamable HTTP transport: loopback binds only, bearer token, Origin allow-list, body limit.

The checks run for every request before the body is read, in the reference's order:
a present ``Origin`` that is not on the allow-list → 403, then a missing or wrong bearer
token → 401 (compared in constant time), then a declared body over the limit → 413 (the SDK
also counts streamed bodies). A POST body that is not a well-formed JSON-RPC frame is then
answered with 400 and a JSON-RPC error (the SDK would take a request with a bad ``id`` for a
notification). Logs go to stderr; nothing is written to stdout.

uvicorn bounds only the idle time between requests (``timeout_keep_alive``): a client that sent
half its headers, or its headers and half its body, held a connection (and, mid-body, the
request's task) forever, and SIGTERM waited on it. :class:`DeadlineProtocol` puts a deadline on
the headers and on the body of each request (408, or a plain close when nothing of a request
arrived); uvicorn's ``timeout_graceful_shutdown`` bounds the wait for open requests on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hmac
import ipaddress
import json
import logging
import os
import secrets
import socket
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import h11
import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from uvicorn.protocols.http.h11_impl import H11Protocol

from plasmate_nb._tracebacks import HintedError
from plasmate_nb.server.app import build_server
from plasmate_nb.server.jsonrpc_guard import error_bytes, malformed_frame_error
from plasmate_nb.tools import Dispatcher

TOKEN_ENV = "PLASMATE_NB_MCP_TOKEN"
MAX_BODY_BYTES = 1024 * 1024
HEADER_TIMEOUT_S = 30.0
BODY_TIMEOUT_S = 65.0
SHUTDOWN_TIMEOUT_S = 5.0
# Connections open at once; more are closed unanswered, far below any file limit (1,024 is common).
MAX_CONNECTIONS = 256
MIN_TOKEN_BYTES = 32
ENDPOINT_PATH = "/mcp"
LOOPBACK_NAMES = frozenset({"localhost"})

log = logging.getLogger("plasmate_nb.server")


class ServerConfigError(HintedError, ValueError):
    """A server option that must be fixed before the server can start.

    ``port_in_use`` is true when the port was taken (a notebook adds what to do about that as
    its ``hint``).

    >>> try:
    ...     server = pnb.serve(port=9272)
    ... except pnb.ServerConfigError as error:
    ...     error.port_in_use      # True: stop the server started before, or pick another port
    """

    port_in_use: bool = False


def cannot_listen_error(host: str, port: int, error: OSError) -> ServerConfigError:
    failure = ServerConfigError(cannot_listen(host, port, error))
    failure.port_in_use = error.errno == errno.EADDRINUSE
    return failure


def cannot_listen(host: str, port: int, error: OSError) -> str:
    """Why ``host:port`` cannot be served on, and what to do (0 is a free port)."""
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if isinstance(error, socket.gaierror) or not error.errno:  # a name that does not resolve
        return f"cannot listen on {where}: {error.strerror or error}"
    reason = os.strerror(error.errno)  # without the "(while attempting to bind …)" socket adds
    if error.errno in (errno.EADDRINUSE, errno.EACCES):
        return f"cannot listen on {where}: {reason}; choose another port (0 picks a free one)"
    return f"cannot listen on {where}: {reason}"


def _listening_socket(family: int, proto: int, address: str, port: int) -> socket.socket:
    """A listening TCP socket as asyncio makes its own. ``proto`` must be IPPROTO_TCP, as
    getaddrinfo gives it: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on such sockets,
    and with it on every small answer waited for the client's delayed ACK."""
    listening = socket.socket(family, socket.SOCK_STREAM, proto)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            listening.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        listening.bind((address, port))
        listening.listen()
    except OSError:
        listening.close()
        raise
    return listening


def check_loopback_host(host: str) -> str:
    bare = host.strip("[]")
    if bare.lower() in LOOPBACK_NAMES:
        return bare
    try:
        if ipaddress.ip_address(bare).is_loopback:
            return bare
    except ValueError:
        pass
    raise ServerConfigError(
        f"MCP HTTP refuses non-loopback bind host '{host}'; use 127.0.0.1, ::1, or localhost"
    )


def resolve_token(token: str | None) -> tuple[str, bool]:
    """The bearer token and whether it was generated here (then it is printed once to stderr)."""
    token = token or os.environ.get(TOKEN_ENV)
    if not token:
        return secrets.token_hex(32), True
    if len(token.encode()) < MIN_TOKEN_BYTES:
        raise ServerConfigError(f"invalid MCP HTTP token: must be at least {MIN_TOKEN_BYTES} bytes")
    if any(not 0x21 <= ord(ch) <= 0x7E for ch in token):
        raise ServerConfigError("invalid MCP HTTP token: only visible ASCII characters, no whitespace")
    return token, False


def normalise_origin(origin: str) -> str:
    """An exact http(s) origin for the allow-list (a trailing ``/`` is dropped)."""
    parts = urlsplit(origin)
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.username is not None
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
    ):
        raise ServerConfigError(f"invalid --allow-origin {origin!r}: expected scheme://host[:port]")
    return f"{parts.scheme}://{parts.netloc}".lower()


def _jsonrpc_error(status: int, message: str) -> tuple[int, bytes]:
    body = {"jsonrpc": "2.0", "error": {"code": -32600, "message": message}}
    return status, json.dumps(body).encode()


class SecurityMiddleware:
    """ASGI guard in front of the SDK's streamable HTTP app."""

    def __init__(self, app: Any, token: str, allowed_origins: frozenset[str], max_body: int) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()
        self.allowed_origins = allowed_origins
        self.max_body = max_body

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw = scope.get("headers") or []
        headers = dict(raw)
        refusal = self._refusal(headers)
        if refusal is None and sum(name == b"origin" for name, _ in raw) > 1:  # which one would count?
            refusal = _jsonrpc_error(403, "Forbidden Origin")
        if refusal is None and b"origin" in headers:
            # Allowed as compared (lower case, no trailing "/"): the SDK, which checks again by
            # exact match, sees it in that form.
            scope = {**scope, "headers": _with_origin(scope["headers"], _origin_of(headers[b"origin"]))}
        if refusal is None and scope.get("method") == "POST":
            try:
                body = await _read_body(receive, self.max_body)
            except _BodyCutShort:
                return  # nobody to answer, and half a request is never run
            if body is None:
                refusal = _jsonrpc_error(413, f"Request body exceeds {self.max_body} bytes")
            else:
                error = malformed_frame_error(body)
                refusal = (400, error_bytes(error)) if error is not None else None
                receive = _replay(body, receive)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        await _respond(send, *refusal)

    def _refusal(self, headers: dict[bytes, bytes]) -> tuple[int, bytes] | None:
        origin = headers.get(b"origin")
        if origin is not None and _origin_of(origin) not in self.allowed_origins:
            return _jsonrpc_error(403, "Forbidden Origin")
        if not hmac.compare_digest(headers.get(b"authorization", b""), self._expected):
            return _jsonrpc_error(401, "Missing or invalid bearer capability token")
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            return _jsonrpc_error(413, f"Request body exceeds {self.max_body} bytes")
        return None


def _origin_of(header: bytes) -> str:
    return header.decode("latin-1").rstrip("/").lower()


def _with_origin(headers: list[tuple[bytes, bytes]], origin: str) -> list[tuple[bytes, bytes]]:
    return [(name, origin.encode("latin-1") if name == b"origin" else value) for name, value in headers]


class _BodyCutShort(Exception):
    """The connection ended (the client left, or the body deadline closed it) before the body did."""


async def _read_body(receive: Any, limit: int) -> bytes | None:
    """The whole request body, or ``None`` as soon as it grows past ``limit``; ``_BodyCutShort``
    when the connection ends first: what arrived may parse as a request (a shorter JSON value
    than announced), but it was never sent whole, and a client told 408 may send it again."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise _BodyCutShort
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Any) -> Any:
    """An ASGI ``receive`` that hands the already-read body to the app, then the real stream
    (so the app still hears the client disconnect)."""
    sent = False

    async def replayed() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def _respond(send: Any, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


_REQUEST_TIMEOUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 16\r\nconnection: close\r\n\r\nRequest Timeout\n"
)


class DeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on each request's headers, then on its body.

    The header clock starts when the server is ready for a request (connection made, or the
    previous response sent); the body clock when the headers are in. Data arriving does not
    reset either (a slow drip is no escape). Subclassed per server by :func:`deadline_protocol`.
    """

    header_timeout: float = HEADER_TIMEOUT_S
    body_timeout: float = BODY_TIMEOUT_S
    shutdown_grace: float = SHUTDOWN_TIMEOUT_S / 2
    max_connections: int = MAX_CONNECTIONS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._phase: type[h11.IDLE] | type[h11.SEND_BODY] | None = None
        self._deadline: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        if len(self.server_state.connections) > self.max_connections:
            # Closed at once, unanswered: connections held open (no token needed to open one) must
            # not use up the process's file descriptors, after which nobody could connect.
            self.transport.close()
            return
        self._watch()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._phase = None
        self._cancel()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        """On exit, a body still arriving gets ``shutdown_grace`` at most: its request then ends
        (408) before uvicorn cancels the task at the full shutdown bound."""
        super().shutdown()
        remaining = self._deadline.when() - self.loop.time() if self._deadline is not None else 0.0
        if self._phase is h11.SEND_BODY and remaining > self.shutdown_grace:
            self._cancel()
            self._deadline = self.loop.call_later(self.shutdown_grace, self._expire)

    def _watch(self) -> None:
        """(Re)arm the deadline when the request phase changes: awaiting headers, body, or neither."""
        state = self.conn.their_state
        phase = state if state in (h11.IDLE, h11.SEND_BODY) else None
        if phase is self._phase:
            return
        self._cancel()
        self._phase = phase
        if phase is not None and not self.transport.is_closing():
            limit = self.header_timeout if phase is h11.IDLE else self.body_timeout
            self._deadline = self.loop.call_later(limit, self._expire)

    def _cancel(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self._phase is h11.IDLE:
            started = bool(self.conn.trailing_data[0])  # part of a request's headers is buffered
        else:
            started = self.cycle is not None and not self.cycle.response_started
        if started:
            self.transport.write(_REQUEST_TIMEOUT)
        self.transport.close()  # connection_lost tells a waiting app the client is gone


def deadline_protocol(
    header_timeout: float, body_timeout: float, shutdown_timeout: float
) -> type[DeadlineProtocol]:
    return type(
        "DeadlineProtocol",
        (DeadlineProtocol,),
        {
            "header_timeout": header_timeout,
            "body_timeout": body_timeout,
            "shutdown_grace": shutdown_timeout / 2,
        },
    )


@dataclass
class HttpServer:
    """The MCP server on streamable HTTP, runnable in any event loop (CLI or a notebook's)."""

    dispatcher: Dispatcher
    host: str = "127.0.0.1"
    port: int = 9272
    token: str | None = None
    allowed_origins: tuple[str, ...] = ()
    max_body: int = MAX_BODY_BYTES
    header_timeout: float = HEADER_TIMEOUT_S  # seconds to receive a request's headers
    body_timeout: float = BODY_TIMEOUT_S  # seconds to receive its body, once the headers are in
    shutdown_timeout: float = SHUTDOWN_TIMEOUT_S  # seconds open requests get to finish on exit
    generated_token: bool = field(init=False, default=False)
    _server: uvicorn.Server | None = field(init=False, default=None, repr=False)
    _task: asyncio.Task[None] | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        self.host = check_loopback_host(self.host)
        self.token, self.generated_token = resolve_token(self.token)
        self.allowed_origins = tuple(normalise_origin(origin) for origin in self.allowed_origins)
        for name in ("header_timeout", "body_timeout", "shutdown_timeout"):
            if not 0 < getattr(self, name) < float("inf"):
                raise ServerConfigError(
                    f"invalid {name.replace('_', ' ')}: must be a positive number of seconds"
                )

    def __repr__(self) -> str:  # the token is a credential: never in a repr
        return f"HttpServer(url={self.url!r})"

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{ENDPOINT_PATH}"

    def asgi_app(self) -> Any:
        loopback_hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=loopback_hosts,
            allowed_origins=list(self.allowed_origins),
        )
        app = build_server(self.dispatcher).streamable_http_app(
            streamable_http_path=ENDPOINT_PATH,
            json_response=True,
            max_request_body_size=self.max_body,
            transport_security=security,
            host=self.host,
        )
        assert self.token is not None  # resolved in __post_init__
        return SecurityMiddleware(app, self.token, frozenset(self.allowed_origins), self.max_body)

    async def start(self) -> HttpServer:
        """Start serving on the running loop; returns once the socket listens (port 0 → a free port)."""
        config = uvicorn.Config(
            self.asgi_app(),
            host=self.host,
            port=self.port,
            log_level="warning",
            access_log=False,
            lifespan="on",
            http=deadline_protocol(self.header_timeout, self.body_timeout, self.shutdown_timeout),
            timeout_graceful_shutdown=self.shutdown_timeout,  # type: ignore[arg-type]  # a float works
        )
        listening = self._listen()
        server = uvicorn.Server(config)
        task = asyncio.create_task(self._serve(server, listening))
        try:
            while not server.started:
                if task.done():
                    task.result()  # re-raise the start-up failure
                    raise ServerConfigError("MCP HTTP server stopped during start-up")
                await asyncio.sleep(0.01)
        except asyncio.CancelledError:  # given up on (an interrupted pnb.serve): nothing may stay behind
            await self._abandon(server, task)
            raise
        self._server, self._task = server, task
        self.port = listening[0].getsockname()[1]
        return self

    async def _abandon(self, server: uvicorn.Server, task: asyncio.Task[None]) -> None:
        """Stop a server whose start was given up on: in order when it can (uvicorn shuts down
        what it started, app included, once its start-up ends), cancelled past shutdown_timeout."""
        server.should_exit = True
        done, _ = await asyncio.wait({task}, timeout=self.shutdown_timeout)
        if not done:
            task.cancel()
            await asyncio.wait({task}, timeout=self.shutdown_timeout)

    def _listen(self) -> list[socket.socket]:
        """The listening sockets, bound here (uvicorn would end the whole process on a port in
        use): one per address the host names, ``localhost`` on IPv4 and IPv6 as before, all on
        one port (for port 0, the first one's)."""
        try:
            found = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        except OSError as error:
            raise cannot_listen_error(self.host, self.port, error) from None
        listening: list[socket.socket] = []
        port = self.port
        try:
            for family, proto, address in dict.fromkeys(
                (info[0], info[2], str(info[4][0])) for info in found
            ):
                listening.append(_listening_socket(family, proto, address, port))
                port = listening[0].getsockname()[1]
        except OSError as error:
            for bound in listening:
                bound.close()
            raise cannot_listen_error(self.host, port, error) from None
        return listening

    @staticmethod
    async def _serve(server: uvicorn.Server, listening: list[socket.socket]) -> None:
        try:
            await server.serve(sockets=listening)
        except SystemExit:  # uvicorn's way to fail a start-up; raised in a library it ends the loop
            raise ServerConfigError("MCP HTTP server stopped during start-up") from None
        finally:  # uvicorn's own servers first: the loop must stop watching a socket before it closes
            for running in getattr(server, "servers", ()):  # made by its start-up
                running.close()
            for bound in listening:
                bound.close()

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            # Open requests get shutdown_timeout, the app's own shutdown as long again; past
            # that the serving task is cancelled: stopped either way.
            try:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(2 * self.shutdown_timeout):
                        await self._task
            finally:
                self._server = self._task = None

    async def wait_closed(self) -> None:
        """Serve until stopped (by :meth:`stop` or a signal)."""
        if self._task is not None:
            await self._task
