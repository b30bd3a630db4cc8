"""replay_execute over the real transports: absent and refused unless the operator enabled it
(the behaviour itself is tested in tests/tools/test_replay_execute.py)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from plasmate_nb.browser import Engine, EngineConfig
from plasmate_nb.client import HttpTransport, StdioTransport, ToolError
from plasmate_nb.server import HttpServer
from plasmate_nb.tools import Dispatcher
from tests.support import element_id

TOKEN = "r" * 40
SERVE = [sys.executable, "-m", "plasmate_nb", "serve", "--allow-private-network"]


@pytest_asyncio.fixture(scope="module")
async def http_server() -> AsyncIterator[HttpServer]:
    engine = Engine(EngineConfig(max_sessions=2))
    server = await HttpServer(Dispatcher(engine), port=0, token=TOKEN).start()
    try:
        yield server
    finally:
        await server.stop()
        await engine.aclose()


async def _toggle_twice_then_replay(transport: StdioTransport | HttpTransport, demo) -> None:
    """Record a toggle, undo it, and ask for the replay of the first one."""
    opened = await transport.call("open_page", {"url": demo.url("/login.html"), "trace": True})
    sid = opened["session_id"]
    remember = element_id(opened, "checkbox", "Remember me")
    for _ in range(2):
        await transport.call("toggle", {"session_id": sid, "element_id": remember})
    status = await transport.call("trace_status", {"session_id": sid})
    arguments = {"session_id": sid, "trace_id": status["trace_id"], "sequence": 2, "confirmed": True}
    try:
        answer = await transport.call("replay_execute", arguments)
        assert answer["replayed_sequence"] == 2 and answer["sequence"] == 4
    finally:
        after = await transport.call("trace_status", {"session_id": sid})
        await transport.call("close_page", {"session_id": sid})
    assert after["retained_events"] == 4  # the replay, traced once as a toggle


async def test_stdio_default_lists_no_replay_execute_and_refuses_it(demo) -> None:
    transport = StdioTransport(SERVE)
    try:
        assert "replay_execute" not in {tool["name"] for tool in await transport.list_tools()}
        with pytest.raises(ToolError, match="--enable-replay-execution"):
            await _toggle_twice_then_replay(transport, demo)
    finally:
        await transport.aclose()


async def test_http_default_lists_no_replay_execute_and_refuses_it(http_server: HttpServer, demo) -> None:
    transport = HttpTransport(http_server.url, token=TOKEN)
    try:
        assert "replay_execute" not in {tool["name"] for tool in await transport.list_tools()}
        with pytest.raises(ToolError, match="--enable-replay-execution"):
            await _toggle_twice_then_replay(transport, demo)
    finally:
        await transport.aclose()


async def test_stdio_with_the_operator_flag_lists_and_executes(demo) -> None:
    transport = StdioTransport([*SERVE, "--enable-replay-execution"])
    try:
        assert "replay_execute" in {tool["name"] for tool in await transport.list_tools()}
        await _toggle_twice_then_replay(transport, demo)
    finally:
        await transport.aclose()
