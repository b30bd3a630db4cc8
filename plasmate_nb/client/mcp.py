"""Backends that reach an MCP server through the official SDK client: stdio and streamable HTTP.

The SDK's ``Client`` is an async context manager whose cancel scopes must be entered and left
by the same task, so each connection lives in a task of its own; calls from any task on the
same loop go through its session.

A connection that fails says why in a user's words: a refused token (HTTP 401), a URL that is
not an MCP endpoint (404, often a missing ``/mcp``), nothing listening, a command not found. The
SDK turns HTTP statuses into JSON-RPC errors, so the HTTP client records the status it saw.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
from mcp import Client, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from plasmate_nb import errors
from plasmate_nb._http_logs import quiet_http_logs
from plasmate_nb._tracebacks import HintedError
from plasmate_nb.client._payload import payload_or_raise
from plasmate_nb.client.base import CallListener, CallListeners, ToolError, session_id_of
from plasmate_nb.trace.compact import not_text_at

CALL_TIMEOUT_S = 120.0
#: How long a server may take to answer ``initialize``: it starts no browser for that, so a
#: server still silent after this is stuck (an SDK client would wait for it forever).
CONNECT_TIMEOUT_S = 60.0
# Connections closing in the background, after their aclose() gave up waiting (the loop keeps
# only weak references to tasks).
_closing: set[asyncio.Task[None]] = set()
# Records of the SDK's HTTP client that quote a whole JSON-RPC message (see _WithoutMessages).
SDK_HTTP_LOGGER = "mcp.client.streamable_http"
MESSAGE_RECORDS = ("Sending client message", "SSE message")
ENDPOINT_PATH = "/mcp"
UNPARSEABLE_URL = "an unparseable URL"


class ServerConnectionError(HintedError, ConnectionError):
    """The MCP server could not be reached or refused the connection: the message says why, ``hint`` what to do.

    >>> try:
    ...     Session.connect("http://127.0.0.1:9272/mcp", token="wrong").open(url)
    ... except ConnectionError as error:
    ...     print(error, error.hint)        # ... refused the token (HTTP 401)  pass the token ...
    """


class _WithoutMessages(logging.Filter):
    """Drops the SDK HTTP client's DEBUG records that quote a whole message: a call's arguments
    (typed text, whole URLs) or an answer (page text) would otherwise reach any log a notebook
    turns on at DEBUG. Its other records pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (isinstance(record.msg, str) and record.msg.startswith(MESSAGE_RECORDS))


def _quiet_sdk_messages() -> None:
    logger = logging.getLogger(SDK_HTTP_LOGGER)
    if not any(isinstance(f, _WithoutMessages) for f in logger.filters):
        logger.addFilter(_WithoutMessages())


_quiet_sdk_messages()
quiet_http_logs()  # the endpoint's query (it may hold a credential) never reaches a log


def _unsendable(arguments: Any) -> str | None:
    """The argument (dotted path) whose text holds a lone UTF-16 surrogate, or None. The SDK
    cannot write one as JSON, and its writer closes the connection trying: every later call of
    the session would fail. (In process, where nothing is written, such text is typed as is.)"""
    path = not_text_at(arguments)
    return None if path is None else ".".join(map(str, path)) or "the arguments"


def _leaves(error: BaseException) -> Iterator[BaseException]:
    """The exceptions inside ``error``'s (nested) exception groups, or ``error`` itself."""
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error


def _reason(error: BaseException) -> str:
    leaf = next(_leaves(error))
    return f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__


@dataclass(eq=False)
class _Attempt:
    """One connection: the task holding the SDK client, whether it connected (``ready``), and
    the signal that closes it. A call only ever touches its own attempt's objects: an attempt
    given up on may still be ending (its process stopping) while the next one begins."""

    ready: asyncio.Future[None]
    closing: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    client: Client | None = None


class _SdkTransport:
    """One SDK client connection, opened lazily and kept for the transport's lifetime."""

    #: A remote server pushes no notifications: subscribers hear only this client's calls.
    observes_all_clients = False
    connect_timeout = CONNECT_TIMEOUT_S

    def __init__(self) -> None:
        self._listeners = CallListeners()
        self._attempt: _Attempt | None = None

    def _target(self) -> Any:
        raise NotImplementedError

    async def _connected(self) -> Client:
        attempt = self._attempt
        if attempt is None or (attempt.task is not None and attempt.task.done()):  # none yet, or lost
            attempt = self._attempt = _Attempt(asyncio.get_running_loop().create_future())
            attempt.task = asyncio.create_task(self._hold(attempt))
        try:
            try:
                async with asyncio.timeout(self.connect_timeout):
                    await asyncio.shield(attempt.ready)
            except TimeoutError:
                self._give_up(attempt)
                await attempt.ready  # raises the error every waiting call now gets
        except ServerConnectionError:
            if self._attempt is attempt:
                self._attempt = None  # the next call tries again: the server may be up by then
            raise
        if attempt.client is None:  # connected, then lost before this call got to it
            raise ServerConnectionError(errors.connect_failed(self._where(), "the connection closed"))
        return attempt.client

    def _give_up(self, attempt: _Attempt) -> None:
        """The server never answered: fail the attempt for every waiting call and end it (a stdio
        server's process ends with it)."""
        if attempt.ready.done():  # another waiting call gave up first
            return
        try:
            where = self._where()
        except ValueError:
            where = UNPARSEABLE_URL
        silent = errors.connect_failed(where, errors.no_answer_within(self.connect_timeout))
        attempt.ready.set_exception(ServerConnectionError(silent))
        assert attempt.task is not None
        attempt.task.cancel()

    async def _hold(self, attempt: _Attempt) -> None:
        try:
            async with Client(self._target()) as client:
                if attempt.ready.done():  # given up on (_give_up); its cancellation is on the way
                    return
                attempt.client = client
                attempt.ready.set_result(None)
                await attempt.closing.wait()
        except BaseException as exc:
            if not attempt.ready.done():
                attempt.ready.set_exception(self._described(exc))
            elif not isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            attempt.client = None

    def _described(self, error: BaseException) -> ServerConnectionError:
        """``_failure``, or for a URL too malformed to take apart, its exception type only: the
        waiting call must get an error either way (an exception here would leave it waiting forever)."""
        try:
            return self._failure(error)
        except ValueError:
            leaf = type(next(_leaves(error))).__name__  # not its text, which may quote the URL
            return ServerConnectionError(errors.connect_failed(UNPARSEABLE_URL, leaf))

    def _failure(self, error: BaseException) -> ServerConnectionError:
        """Why connecting failed, in a user's words (the subclasses know their transport's causes)."""
        return ServerConnectionError(errors.connect_failed(self._where(), _reason(error)))

    def _where(self) -> str:
        raise NotImplementedError

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Call ``tool`` on the server (connecting on first use); returns the payload or raises ``ToolError``.

        >>> await transport.call("trace_status", {"session_id": session_id})
        """
        unsendable = _unsendable(arguments)
        if unsendable is not None:
            raise ToolError(tool, errors.unsendable_text(unsendable))
        client = await self._connected()
        try:
            async with asyncio.timeout(CALL_TIMEOUT_S):
                result = await client.call_tool(tool, arguments)
        finally:
            self._listeners.notify(session_id_of(arguments), tool)
        texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
        images = [
            (block.data, block.mime_type) for block in result.content if isinstance(block, types.ImageContent)
        ]
        return payload_or_raise(tool, "".join(texts), bool(result.is_error), images, bool(texts))

    async def list_tools(self) -> list[dict[str, Any]]:
        """The server's ``tools/list``, one dict per tool (name, title, description, inputSchema, ...).

        >>> [tool["name"] for tool in await transport.list_tools()]
        """
        client = await self._connected()
        async with asyncio.timeout(CALL_TIMEOUT_S):
            listed = await client.list_tools()
        return [tool.model_dump(by_alias=True, exclude_none=True) for tool in listed.tools]

    def subscribe(self, callback: CallListener) -> Callable[[], None]:
        """Hear the calls made through this transport (others' calls need polling).

        >>> unsubscribe = transport.subscribe(lambda session_id, tool: print(tool))
        """
        return self._listeners.add(callback)

    async def aclose(self) -> None:
        """Close the connection (a stdio server's process exits with it); a later call reconnects.

        >>> await transport.aclose()
        """
        attempt, self._attempt = self._attempt, None
        if attempt is None or attempt.task is None:
            return
        attempt.closing.set()
        task = attempt.task
        # Waited for, never cancelled, even when our caller gives up: once closing, the SDK's own
        # shutdown is bounded (stdin closed, a grace period, then the process tree killed), and a
        # cancellation would cut it short and leave the server running. asyncio.wait, because
        # awaiting the task would hand it our caller's cancellation.
        _closing.add(task)
        task.add_done_callback(_closed)
        await asyncio.wait({task}, timeout=CONNECT_TIMEOUT_S)
        if attempt.ready.done() and not attempt.ready.cancelled():
            attempt.ready.exception()  # read: a failure no call waited for is not worth a warning


def _closed(task: asyncio.Task[None]) -> None:
    """A closing connection ended: let it go, and read how it ended (not any caller's error, and
    never a "Task exception was never retrieved" when nobody waited for it to the end)."""
    _closing.discard(task)
    if not task.cancelled():
        task.exception()


def _server_log() -> Any:
    """Where a stdio server's stderr goes: ours, or the process's own when ours is no file.

    A Jupyter kernel's ``sys.stderr`` streams to the notebook and has no file descriptor for a
    subprocess to inherit; the kernel process's real stderr (the terminal running Jupyter) has.
    """
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return sys.__stderr__ if sys.__stderr__ is not None else subprocess.DEVNULL
    return sys.stderr


class StdioTransport(_SdkTransport):
    """An MCP server started as a subprocess speaking stdio, e.g. ``["plasmate-nb", "serve"]``.

    >>> s = Session(StdioTransport(["plasmate-nb", "serve"]))   # or Session.connect(command=[...])
    """

    def __init__(self, command: Sequence[str], env: dict[str, str] | None = None) -> None:
        super().__init__()
        if not command:
            raise ValueError("StdioTransport needs a command line, e.g. ['plasmate-nb', 'serve']")
        self.command = list(command)
        self.env = env

    def __repr__(self) -> str:
        return f"StdioTransport(command={self.command[:1]!r}...)"

    def _target(self) -> Any:
        command = resolve_command(self.command[0])
        server = StdioServerParameters(command=command, args=self.command[1:], env=self.env)
        return stdio_client(server, errlog=_server_log())

    def _where(self) -> str:
        return repr(self.command[0])

    def _failure(self, error: BaseException) -> ServerConnectionError:
        if any(isinstance(leaf, FileNotFoundError) for leaf in _leaves(error)):
            message = errors.command_not_found(self.command[0], str(Path(sys.executable).parent))
            return ServerConnectionError(message).with_hint(errors.COMMAND_HINT)
        return super()._failure(error)


def resolve_command(name: str) -> str:
    """``name`` as given when it is a path or on PATH, else the executable of that name beside this Python.

    A Jupyter kernel started from a virtual environment often lacks the environment's ``bin`` on
    its PATH, so ``plasmate-nb`` (or ``python``) installed there would not be found.

    >>> resolve_command("plasmate-nb")     # e.g. '/home/me/project/.venv/bin/plasmate-nb'
    """
    if os.sep in name or shutil.which(name) is not None:
        return name
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else name


class HttpTransport(_SdkTransport):
    """An MCP server on streamable HTTP at ``url``, authenticated with a bearer ``token``.

    >>> s = Session(HttpTransport("http://127.0.0.1:9272/mcp", token="..."))   # or Session.connect(url, token=...)
    """

    def __init__(self, url: str, token: str | None = None) -> None:
        super().__init__()
        self.url = url
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._refused_status: int | None = None

    def __repr__(self) -> str:  # the token is a credential, and so may be the URL's user info or query
        try:
            where = self._where()
        except ValueError:
            where = UNPARSEABLE_URL
        return f"HttpTransport(url={where!r})"

    def _target(self) -> Any:
        self._refused_status = None
        http = httpx2.AsyncClient(
            headers=self._headers,
            timeout=httpx2.Timeout(30.0, read=CALL_TIMEOUT_S),
            event_hooks={"response": [self._saw_response]},
        )
        return streamable_http_client(self.url, http_client=http)

    async def _saw_response(self, response: httpx2.Response) -> None:
        if response.status_code >= 400 and self._refused_status is None:
            self._refused_status = response.status_code

    def _origin(self) -> str:
        parts = urlsplit(self.url)  # no user info, query or fragment: they may hold credentials
        return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"  # the port as written, even if invalid

    def _where(self) -> str:
        return self._origin() + urlsplit(self.url).path

    def _failure(self, error: BaseException) -> ServerConnectionError:
        parts = urlsplit(self.url)
        origin, endpoint = self._origin(), self._where()
        status = self._refused_status
        if status == 401:
            reason, hint = errors.token_refused(bool(self._headers)), errors.TOKEN_HINT
        elif status in (404, 405):
            reason = errors.not_an_mcp_endpoint(status)
            on_path = parts.path.rstrip("/").endswith(ENDPOINT_PATH)
            hint = errors.NOT_MCP_HINT if on_path else errors.mcp_path_hint(origin + ENDPOINT_PATH)
        elif any(isinstance(leaf, httpx2.ConnectError) for leaf in _leaves(error)):
            port = None
            with contextlib.suppress(ValueError):  # a port out of range names no server to start
                port = parts.port
            reason, hint = errors.NOTHING_LISTENS, errors.start_server_hint(port)
        else:
            return super()._failure(error)
        return ServerConnectionError(errors.connect_failed(endpoint, reason)).with_hint(hint)
