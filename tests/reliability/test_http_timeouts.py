"""HTTP request deadlines and a bounded shutdown, with raw sockets against the real server.

uvicorn bounds only the idle time between requests, so a client that sent half its headers,
or its headers and half its body, held a connection (and a request task) forever, and the
server did not exit on SIGTERM while such a request was open. Each test gives the server
small deadlines and waits, with a bounded deadline of its own, for the 408 or the close.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest
import pytest_asyncio

from plasmate_nb.browser import EngineConfig
from plasmate_nb.cli import build_parser
from plasmate_nb.server import HttpServer, ServerConfigError
from plasmate_nb.server.cli import engine_config_from_args
from plasmate_nb.server.http import SecurityMiddleware
from tests.reliability.support import TOKEN, ServerProcess, bounded, inprocess_server

DEADLINE_S = 1.0
WAIT_S = 15.0  # the test's own bound on waiting for the server's answer
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {  # needs no session
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
).encode()


def _head(port: int, body_length: int, *extra: str) -> bytes:
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        f"Authorization: Bearer {TOKEN}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Content-Length: {body_length}",
        *extra,
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


@contextlib.asynccontextmanager
async def _connection(port: int) -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        yield reader, writer
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def _answer(reader: asyncio.StreamReader, seconds: float = WAIT_S) -> bytes:
    """Everything the server sends until it closes; fails if it neither answers nor closes in time."""
    try:
        return await asyncio.wait_for(reader.read(), seconds)
    except TimeoutError:
        pytest.fail(f"the server neither answered nor closed within {seconds} s")


async def _still_serves(url: str) -> None:
    async with httpx2.AsyncClient(timeout=30) as client:
        response = await client.post(
            url,
            content=INITIALIZE,
            headers={
                "authorization": f"Bearer {TOKEN}",
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
            },
        )
    assert response.status_code == 200


@pytest_asyncio.fixture(scope="module")
async def deadline_server() -> AsyncIterator[HttpServer]:
    """The real HTTP server with 1 s header and body deadlines."""
    async with inprocess_server(header_timeout=DEADLINE_S, body_timeout=DEADLINE_S) as server:
        yield server


async def test_half_sent_headers_get_408_and_a_close(deadline_server) -> None:
    async with _connection(deadline_server.port) as (reader, writer):
        writer.write(_head(deadline_server.port, len(INITIALIZE))[:40])
        await writer.drain()
        assert (await _answer(reader)).startswith(b"HTTP/1.1 408 ")
    await _still_serves(deadline_server.url)


async def test_headers_with_half_the_body_get_408_and_a_close(deadline_server) -> None:
    async with _connection(deadline_server.port) as (reader, writer):
        writer.write(_head(deadline_server.port, len(INITIALIZE)) + INITIALIZE[: len(INITIALIZE) // 2])
        await writer.drain()
        assert (await _answer(reader)).startswith(b"HTTP/1.1 408 ")
    await _still_serves(deadline_server.url)


async def test_a_slow_drip_does_not_reset_the_header_deadline(deadline_server) -> None:
    head, answer = _head(deadline_server.port, len(INITIALIZE)), b""
    async with _connection(deadline_server.port) as (reader, writer):
        for index in range(len(head) - 4):  # never the blank line that ends the headers
            writer.write(head[index : index + 1])
            await writer.drain()
            with contextlib.suppress(TimeoutError):  # a byte per 0.2 s unless the server answers
                answer = await asyncio.wait_for(reader.read(), 0.2)
                break
    assert answer.startswith(b"HTTP/1.1 408 ")


async def test_a_silent_connection_is_closed_without_an_answer(deadline_server) -> None:
    async with _connection(deadline_server.port) as (reader, _writer):
        assert await _answer(reader) == b""


async def test_a_complete_request_is_answered_within_the_deadlines(deadline_server) -> None:
    async with _connection(deadline_server.port) as (reader, writer):
        writer.write(_head(deadline_server.port, len(INITIALIZE), "Connection: close") + INITIALIZE)
        await writer.drain()
        answer = await _answer(reader)
    assert answer.startswith(b"HTTP/1.1 200 ") and b'"serverInfo"' in answer


async def test_a_request_whose_body_never_ended_is_never_run() -> None:
    """What arrived parses as a whole call (the body announced was longer, or a chunked body never
    ended), but the connection ended first: the client left, or the body deadline closed it with a
    408. The request was never sent whole, and a client told 408 may send it again: it must not
    reach the SDK, and nobody is answered."""
    call = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "open_page"}})
    arrived = [
        {"type": "http.request", "body": call.encode(), "more_body": True},
        {"type": "http.disconnect"},
    ]
    reached, sent = [], []

    async def app(scope, receive, send) -> None:
        reached.append(await receive())

    async def receive() -> dict:
        return arrived.pop(0)

    async def send(message: dict) -> None:
        sent.append(message)

    guard = SecurityMiddleware(app, TOKEN, frozenset(), max_body=2**20)
    scope = {"type": "http", "method": "POST", "headers": [(b"authorization", f"Bearer {TOKEN}".encode())]}
    await guard(scope, receive, send)
    assert (reached, sent, arrived) == ([], [], [])


def test_deadlines_are_configurable_and_must_be_positive(fast_server) -> None:
    for name in ("header_timeout", "body_timeout", "shutdown_timeout"):
        for bad in (0, -1, float("nan"), float("inf")):
            with pytest.raises(ServerConfigError, match=name.replace("_", " ")):
                HttpServer(fast_server.dispatcher, token=TOKEN, **{name: bad})
    args = build_parser().parse_args(
        [
            "serve",
            "--header-timeout",
            "2",
            "--body-timeout",
            "3",
            "--shutdown-timeout",
            "4",
            "--evaluate-result-limit",
            "5",
        ]
    )
    assert (args.header_timeout, args.body_timeout, args.shutdown_timeout) == (2.0, 3.0, 4.0)
    assert engine_config_from_args(args).evaluate_result_limit == 5
    defaults, server = build_parser().parse_args(["serve"]), HttpServer(fast_server.dispatcher, token=TOKEN)
    assert (defaults.header_timeout, defaults.body_timeout, defaults.shutdown_timeout) == (
        server.header_timeout,
        server.body_timeout,
        server.shutdown_timeout,
    )
    assert engine_config_from_args(defaults).evaluate_result_limit == EngineConfig().evaluate_result_limit
    for flag in ("--header-timeout", "--body-timeout", "--shutdown-timeout", "--evaluate-result-limit"):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["serve", flag, "0"])


async def test_stop_is_bounded_with_a_half_sent_body_open() -> None:
    """``HttpServer.stop()`` (the notebook's way out) returns while a request body is still due."""
    slow = inprocess_server(header_timeout=600, body_timeout=600, shutdown_timeout=1)
    async with slow as server, _connection(server.port) as (reader, writer):
        writer.write(_head(server.port, len(INITIALIZE), "Expect: 100-continue"))
        await writer.drain()
        assert (await asyncio.wait_for(reader.readline(), WAIT_S)).startswith(b"HTTP/1.1 100 ")
        writer.write(INITIALIZE[: len(INITIALIZE) // 2])
        await writer.drain()
        await bounded(server.stop(), WAIT_S, "stopping the server")
        assert b"HTTP/1.1 408 " in await _answer(reader)


async def test_sigterm_exits_in_bounded_time_with_half_sent_requests_open(tmp_path: Path) -> None:
    server = ServerProcess(
        tmp_path / "stderr.log", "--header-timeout", "600", "--body-timeout", "600", "--shutdown-timeout", "2"
    )
    try:
        async with (
            _connection(server.port) as (body_reader, body_writer),
            _connection(server.port) as (_, head_writer),
        ):
            # Expect: 100-continue proves the request is past its headers and its task waits on the body.
            body_writer.write(_head(server.port, len(INITIALIZE), "Expect: 100-continue"))
            await body_writer.drain()
            assert (await asyncio.wait_for(body_reader.readline(), WAIT_S)).startswith(b"HTTP/1.1 100 ")
            body_writer.write(INITIALIZE[: len(INITIALIZE) // 2])
            head_writer.write(_head(server.port, len(INITIALIZE))[:40])
            await asyncio.gather(body_writer.drain(), head_writer.drain())
            server.process.send_signal(signal.SIGTERM)
            try:
                returncode = await asyncio.to_thread(server.process.wait, 10)
            except subprocess.TimeoutExpired:
                pytest.fail("the server did not exit within 10 s of SIGTERM")
        assert returncode in (0, -signal.SIGTERM), f"returncode {returncode}: {server.stderr()[-2000:]}"
        assert "Traceback" not in server.stderr()
    finally:
        server.stop()
