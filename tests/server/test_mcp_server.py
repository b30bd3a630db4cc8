"""The MCP server through the official SDK client: in-process, over stdio and over HTTP."""

from __future__ import annotations

import asyncio
import errno
import json
import socket
import subprocess
import sys
from collections.abc import AsyncIterator

import httpx2
import pytest
import pytest_asyncio
import uvicorn
from mcp import Client

from plasmate_nb.browser import Engine, EngineConfig
from plasmate_nb.client import HttpTransport, StdioTransport, ToolError
from plasmate_nb.server import SERVER_NAME, HttpServer, ServerConfigError, build_server
from plasmate_nb.server.http import cannot_listen
from plasmate_nb.tools import DEFAULT_TOOLS, Dispatcher
from tests.support import wait_until

TOKEN = "t" * 40
STDIO_COMMAND = [sys.executable, "-m", "plasmate_nb", "serve", "--allow-private-network"]


@pytest_asyncio.fixture(scope="module")
async def dispatcher() -> AsyncIterator[Dispatcher]:
    engine = Engine(EngineConfig(max_sessions=4))
    try:
        yield Dispatcher(engine)
    finally:
        await engine.aclose()


@pytest_asyncio.fixture(scope="module")
async def http_server(dispatcher: Dispatcher) -> AsyncIterator[HttpServer]:
    server = await HttpServer(dispatcher, port=0, token=TOKEN, allowed_origins=("http://good.test",)).start()
    try:
        yield server
    finally:
        await server.stop()


def _text(result) -> str:
    return "".join(block.text for block in result.content)


async def test_in_process_sdk_client_lists_tools_and_runs_a_traced_session(dispatcher, demo) -> None:
    async with Client(build_server(dispatcher)) as client:
        assert client.server_info.name == SERVER_NAME
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} == {tool.name for tool in DEFAULT_TOOLS}
        closed = {
            tool.name for tool in listed.tools if tool.input_schema.get("additionalProperties") is False
        }
        assert closed == {
            "trace_status",
            "trace_export",
            "trace_clear",
            "replay_validate",
            "ard_discover",
            "crawl_policy",
            "inspect_page",
        }
        opened = await client.call_tool("open_page", {"url": demo.url("/login.html"), "trace": True})
        assert not opened.is_error
        sid = json.loads(_text(opened))["session_id"]
        status = json.loads(_text(await client.call_tool("trace_status", {"session_id": sid})))
        assert status["enabled"] is True and status["retained_events"] == 1
        bad = await client.call_tool("click", {"session_id": sid, "element_id": "nope"})
        assert bad.is_error and _text(bad) == "Element not found: nope"
        closed_page = json.loads(_text(await client.call_tool("close_page", {"session_id": sid})))
        assert closed_page["final_trace"]["retained_events"] == 3


async def test_stdio_subprocess_speaks_mcp(demo) -> None:
    transport = StdioTransport(STDIO_COMMAND)
    try:
        tools = await transport.list_tools()
        assert len(tools) == len(DEFAULT_TOOLS)
        opened = await transport.call("open_page", {"url": demo.url("/login.html"), "trace": True})
        assert opened["title"] == "Sign in"
        with pytest.raises(ToolError, match="unknown field"):
            await transport.call("trace_status", {"session_id": opened["session_id"], "extra": 1})
        status = await transport.call("trace_status", {"session_id": opened["session_id"]})
        assert status["retained_events"] == 1  # trace tools are not traced, the failure left nothing
        closed = await transport.call("close_page", {"session_id": opened["session_id"]})
        assert closed["final_trace"]["events"][-1]["action"] == "close_page"
    finally:
        await transport.aclose()


async def test_stdio_server_blocks_private_destinations_by_default(demo) -> None:
    transport = StdioTransport([sys.executable, "-m", "plasmate_nb", "serve"])
    try:
        with pytest.raises(ToolError, match="Outbound URL blocked"):
            await transport.call("open_page", {"url": demo.url("/login.html")})
    finally:
        await transport.aclose()


async def test_http_transport_runs_a_session(http_server: HttpServer, demo) -> None:
    transport = HttpTransport(http_server.url, token=TOKEN)
    try:
        opened = await transport.call("open_page", {"url": demo.url("/login.html"), "trace": True})
        sid = opened["session_id"]
        with pytest.raises(ToolError, match="Session not found"):
            await transport.call("click", {"session_id": "missing", "element_id": "x"})
        export = await transport.call("trace_export", {"session_id": sid})
        assert export["retained_events"] == 1 and export["session_id"] == sid
        await transport.call("close_page", {"session_id": sid})
    finally:
        await transport.aclose()
    assert TOKEN not in repr(transport) and TOKEN not in repr(http_server)


async def _post(server: HttpServer, headers: dict[str, str], body: bytes = b"{}") -> httpx2.Response:
    base = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient() as client:
        return await client.post(server.url, content=body, headers={**base, **headers})


async def test_http_refuses_missing_or_wrong_tokens(http_server: HttpServer) -> None:
    assert (await _post(http_server, {})).status_code == 401
    wrong = await _post(http_server, {"authorization": "Bearer " + "x" * 40})
    assert wrong.status_code == 401 and wrong.json()["error"]["message"].startswith(
        "Missing or invalid bearer"
    )
    assert (await _post(http_server, {"authorization": f"bearer {TOKEN}"})).status_code == 401


async def test_http_refuses_foreign_origins_before_anything_else(http_server: HttpServer) -> None:
    auth = {"authorization": f"Bearer {TOKEN}"}
    for origin in ("http://evil.test", "null", "http://127.0.0.1:1"):
        response = await _post(http_server, {**auth, "origin": origin})
        assert response.status_code == 403 and response.json()["error"]["message"] == "Forbidden Origin"
    assert (await _post(http_server, {"origin": "http://evil.test"})).status_code == 403  # before the token


async def test_http_refuses_oversized_bodies(http_server: HttpServer) -> None:
    response = await _post(http_server, {"authorization": f"Bearer {TOKEN}"}, b"x" * (1024 * 1024 + 1))
    assert response.status_code == 413


async def test_http_keeps_serving_after_malformed_messages(http_server: HttpServer, demo) -> None:
    auth = {"authorization": f"Bearer {TOKEN}"}
    for body in (b"not json", b"[1,2", b'{"jsonrpc":"1.0"}', b'{"jsonrpc":"2.0","method":42,"id":1}'):
        response = await _post(http_server, auth, body)
        assert 400 <= response.status_code < 500
    allowed = await _post(http_server, {**auth, "origin": "http://good.test"}, b"not json")
    assert allowed.status_code == 400  # an allowed Origin reaches the MCP layer
    transport = HttpTransport(http_server.url, token=TOKEN)
    try:
        assert (await transport.call("session_status", {}))["max_sessions"] == 4
    finally:
        await transport.aclose()


def test_non_loopback_binds_are_refused(dispatcher) -> None:
    for host in ("0.0.0.0", "192.168.1.10", "example.com", "::"):
        with pytest.raises(ServerConfigError, match="refuses non-loopback bind host"):
            HttpServer(dispatcher, host=host, token=TOKEN)
    for host in ("127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"):
        HttpServer(dispatcher, host=host, token=TOKEN)
    with pytest.raises(ServerConfigError, match="invalid MCP HTTP token"):
        HttpServer(dispatcher, token="short")


async def test_every_loopback_host_serves_and_a_taken_port_is_named(dispatcher) -> None:
    for host in ("127.0.0.1", "localhost", "::1"):
        first = await HttpServer(dispatcher, host=host, port=0, token=TOKEN).start()
        try:
            assert first.port != 0
            with pytest.raises(ServerConfigError) as caught:
                await HttpServer(dispatcher, host=host, port=first.port, token=TOKEN).start()
            where = f"[{host}]:{first.port}" if ":" in host else f"{host}:{first.port}"
            assert str(caught.value) == (
                f"cannot listen on {where}: Address already in use; choose another port (0 picks a free one)"
            )
        finally:
            await first.stop()


@pytest.mark.parametrize("hang", ["before its servers exist", "once they listen"])
async def test_a_start_cancelled_before_the_server_is_up_leaves_nothing_listening(
    dispatcher, monkeypatch, hang
) -> None:
    # A notebook interrupted during pnb.serve() cancels the start; a server left running would
    # hold the port with nothing able to stop it, and one half stopped would leave the loop
    # watching sockets that are closed (their numbers are soon another socket's).
    starting = asyncio.Event()
    started: list[uvicorn.Server] = []
    real_startup = uvicorn.Server.startup

    async def hanging_startup(self, sockets=None) -> None:  # the start-up never ends
        if hang == "once they listen":
            await real_startup(self, sockets)
            self.started = False
        started.append(self)
        starting.set()
        await asyncio.Event().wait()

    monkeypatch.setattr(uvicorn.Server, "startup", hanging_startup)
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    start = asyncio.create_task(HttpServer(dispatcher, port=port, token=TOKEN, shutdown_timeout=0.5).start())
    await asyncio.wait_for(starting.wait(), 30)
    start.cancel()
    with pytest.raises(asyncio.CancelledError):
        await start

    def port_is_free() -> bool:
        try:
            socket.create_server(("127.0.0.1", port)).close()
        except OSError:
            return False
        return True

    await wait_until(port_is_free, what="the cancelled server to let its port go")
    assert not any(listening.is_serving() for listening in getattr(started[0], "servers", []))


async def test_answers_go_out_without_waiting_for_the_clients_ack(dispatcher) -> None:
    # The server binds its own sockets; asyncio sets TCP_NODELAY only on sockets it recognises as
    # TCP. Without it every small answer waited for the client's delayed ACK (about 40 ms).
    server = await HttpServer(dispatcher, port=0, token=TOKEN).start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        await writer.drain()
        await asyncio.wait_for(reader.readline(), 30)  # the connection is accepted and answered
        assert server._server is not None
        accepted = [c.transport.get_extra_info("socket") for c in server._server.server_state.connections]
        assert accepted and all(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for s in accepted)
        writer.close()
    finally:
        await server.stop()


@pytest.mark.parametrize(
    ("error", "says"),
    [
        (OSError(errno.EADDRNOTAVAIL, "Cannot assign requested address (while attempting to bind…)"),
         "cannot listen on 127.0.0.1:9272: Cannot assign requested address"),
        (socket.gaierror(socket.EAI_NONAME, "Name or service not known"),
         "cannot listen on 127.0.0.1:9272: Name or service not known"),
    ],
)  # fmt: skip
def test_only_a_taken_or_forbidden_port_suggests_another(error: OSError, says: str) -> None:
    assert cannot_listen("127.0.0.1", 9272, error) == says


def test_cli_refuses_non_loopback_bind_and_writes_nothing_to_stdout() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "plasmate_nb", "serve", "--transport", "http", "--host", "0.0.0.0"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "refuses non-loopback bind host '0.0.0.0'" in done.stderr and done.stdout == ""
