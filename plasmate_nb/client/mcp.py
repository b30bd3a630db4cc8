"""Backends that reach an MCP server through the official SDK client: stdio and streamable HTTP.

The SDK's ``Client`` is an async context manager whose cancel scopes must be entered and left
by the same task, so each connection lives in a task of its own; calls from any task on the
same loop go through its session.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters, types
from mcp.client.streamable_http import streamable_http_client

from plasmate_nb.client._payload import payload_or_raise
from plasmate_nb.client.base import CallListener, CallListeners, session_id_of

CALL_TIMEOUT_S = 120.0


class _SdkTransport:
    """One SDK client connection, opened lazily and kept for the transport's lifetime."""

    #: A remote server pushes no notifications: subscribers hear only this client's calls.
    observes_all_clients = False

    def __init__(self) -> None:
        self._listeners = CallListeners()
        self._client: Client | None = None
        self._owner: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._closing: asyncio.Event | None = None

    def _target(self) -> Any:
        raise NotImplementedError

    async def _connected(self) -> Client:
        if self._client is None:
            if self._owner is None:
                loop = asyncio.get_running_loop()
                self._ready, self._closing = loop.create_future(), asyncio.Event()
                self._owner = asyncio.create_task(self._hold())
            assert self._ready is not None
            await asyncio.shield(self._ready)
        assert self._client is not None
        return self._client

    async def _hold(self) -> None:
        assert self._ready is not None and self._closing is not None
        try:
            async with Client(self._target()) as client:
                self._client = client
                self._ready.set_result(None)
                await self._closing.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(ConnectionError(f"could not connect to the MCP server: {exc}"))
            elif not isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._client = None

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Call ``tool`` on the server (connecting on first use); returns the payload or raises ``ToolError``.

        >>> await transport.call("trace_status", {"session_id": session_id})
        """
        client = await self._connected()
        try:
            result = await asyncio.wait_for(client.call_tool(tool, arguments), CALL_TIMEOUT_S)
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
        if self._owner is None:
            return
        assert self._closing is not None
        self._closing.set()
        with contextlib.suppress(Exception):
            await self._owner
        self._owner = None


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
        return StdioServerParameters(command=self.command[0], args=self.command[1:], env=self.env)


class HttpTransport(_SdkTransport):
    """An MCP server on streamable HTTP at ``url``, authenticated with a bearer ``token``.

    >>> s = Session(HttpTransport("http://127.0.0.1:9272/mcp", token="..."))   # or Session.connect(url, token=...)
    """

    def __init__(self, url: str, token: str | None = None) -> None:
        super().__init__()
        self.url = url
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}

    def __repr__(self) -> str:  # the token is a credential: never in a repr
        return f"HttpTransport(url={self.url!r})"

    def _target(self) -> Any:
        http = httpx2.AsyncClient(headers=self._headers, timeout=httpx2.Timeout(30.0, read=CALL_TIMEOUT_S))
        return streamable_http_client(self.url, http_client=http)
