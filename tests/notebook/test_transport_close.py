"""Closing an MCP transport obeys its caller: a deadline or a cancellation around ``aclose()``
is never lost while the server is slow to go, and the server goes anyway: the connection is
left to the SDK's bounded shutdown (grace period, then the process tree killed), never cut short."""

from __future__ import annotations

import asyncio
import sys
import textwrap

import psutil
import pytest

from plasmate_nb.client.mcp import StdioTransport

# A real server behind a process that lingers after the server has gone, as a slow one would:
# the SDK waits for it to exit before it ends it.
SLOW_TO_EXIT = textwrap.dedent(
    """
    import subprocess, sys, time
    subprocess.run([sys.executable, "-m", "plasmate_nb", "serve"])
    time.sleep(60)
    """
)


async def _connected() -> tuple[StdioTransport, asyncio.Task[None], psutil.Process]:
    transport = StdioTransport([sys.executable, "-c", SLOW_TO_EXIT])
    assert await transport.list_tools()  # connected: the handshake and a call went through
    attempt = transport._attempt
    assert attempt is not None and attempt.task is not None
    (server,) = [p for p in psutil.Process().children() if SLOW_TO_EXIT in _cmdline(p)]
    return transport, attempt.task, server


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:  # another child of the test process ended meanwhile
        return []


async def _ends(connection: asyncio.Task[None], server: psutil.Process) -> None:
    await asyncio.wait({connection}, timeout=30)  # the SDK's shutdown takes a few seconds
    assert connection.done() and not connection.cancelled()  # ended by itself, not cut short
    assert not server.is_running() or server.status() == psutil.STATUS_ZOMBIE  # and the server went


async def test_a_deadline_around_aclose_is_kept_while_the_server_is_slow_to_exit() -> None:
    transport, connection, server = await _connected()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.3):
            await transport.aclose()
    assert asyncio.current_task().cancelling() == 0  # the deadline's cancellation was its own
    await _ends(connection, server)


async def test_a_cancelled_aclose_ends_cancelled_and_ends_the_connection() -> None:
    transport, connection, server = await _connected()
    closing = asyncio.create_task(transport.aclose())
    await asyncio.wait({closing}, timeout=0.3)
    assert not closing.done()  # still waiting for the server to go
    closing.cancel()
    await asyncio.wait({closing}, timeout=30)
    assert closing.cancelled()
    await _ends(connection, server)
