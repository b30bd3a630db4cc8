"""A client that gives up on a call: the call's browser context is still closed.

The MCP SDK cancels a tool call's handler when the client sends ``notifications/cancelled``
(the SDK client does so when its caller cancels the call, or its read timeout passes). The
cancellation is anyio's: every wait inside the cancelled call is cancelled again, clean-up included. A page the call was still
loading must not outlive it: the test's origin holds the page's response and watches the
browser's connection, which closes only when the page's context does.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.support import wait_until

STDIO = StdioServerParameters(
    command=sys.executable, args=["-m", "plasmate_nb", "serve", "--allow-private-network"]
)


@dataclass
class HeldOrigin:
    """Answers nothing: counts the connections that asked for a page and those that went away."""

    asked: int = 0
    gone: int = 0
    writers: list[asyncio.StreamWriter] = field(default_factory=list)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        try:
            await reader.readuntil(b"\r\n\r\n")
            self.asked += 1
            await reader.read()  # until the browser's side closes
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        self.gone += 1


@asynccontextmanager
async def held_origin() -> AsyncIterator[tuple[HeldOrigin, str]]:
    origin = HeldOrigin()
    server = await asyncio.start_server(origin.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield origin, f"http://127.0.0.1:{port}/held"
    finally:
        for writer in origin.writers:
            writer.close()
        server.close()


@pytest.mark.parametrize("tool", ["open_page", "fetch_page", "screenshot_page"])
async def test_a_call_the_client_gave_up_on_closes_what_it_opened(tool) -> None:
    async with held_origin() as (origin, url), Client(stdio_client(STDIO)) as client:
        async with anyio.create_task_group() as calls:
            calls.start_soon(client.call_tool, tool, {"url": url})
            await wait_until(lambda: origin.asked, timeout=60, what="the page to be asked for")
            calls.cancel_scope.cancel()  # the client gives up: the SDK tells the server
        # The context goes, and with it the page's connection (through the egress gate).
        await wait_until(
            lambda: origin.gone == origin.asked, timeout=15, what="the page's connection to close"
        )
        # The server is still serving.
        status = await client.call_tool("session_status", {})
        assert not status.is_error
