"""Malformed JSON-RPC messages (bad JSON, truncated frames, wrong types, unknown methods,
wrong versions, params of the wrong shape, non-objects, huge bodies, deep nesting, lone
surrogate escapes) over stdio and HTTP: none is ever answered with success, none takes the
server down, and a valid call is answered after each one. Both transports answer every
malformed frame that is not a well-formed notification: with its id when it can be read, with
id null otherwise (``server/jsonrpc_guard.py``)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
import pytest_asyncio

from tests.reliability.malformed import Malformed, corpus
from tests.reliability.support import SIZED, TOKEN, Sizes, bounded, record_figures

STDIO_COMMAND = [sys.executable, "-m", "plasmate_nb", "serve", "--allow-private-network"]
PROTOCOL = "2025-11-25"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _is_error(response: Any) -> bool:
    return isinstance(response, dict) and (
        "error" in response or bool((response.get("result") or {}).get("isError"))
    )


class RawStdio:
    """The stdio server as a subprocess, spoken to in raw lines."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.probes = 0

    @classmethod
    async def start(cls) -> RawStdio:
        process = await asyncio.create_subprocess_exec(
            *STDIO_COMMAND,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=16 * 2**20,
        )
        raw = cls(process)
        await raw.send(json.dumps(INITIALIZE).encode())
        assert "result" in (await raw.until("init"))[-1]
        await raw.send(json.dumps(INITIALIZED).encode())
        return raw

    async def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        await bounded(self.process.stdin.drain(), 30, "writing to stdin")

    async def until(self, request_id: str) -> list[Any]:
        """Responses read up to and including the one with ``request_id``."""
        assert self.process.stdout is not None
        seen: list[Any] = []
        while True:
            line = await bounded(self.process.stdout.readline(), 30, f"the answer to {request_id}")
            assert line, "the stdio server exited"
            seen.append(json.loads(line))
            if seen[-1].get("id") == request_id:
                return seen

    async def exchange(self, message: Malformed) -> list[Any]:
        """Send ``message``, then a ping; the responses to anything but the ping."""
        self.probes += 1
        probe = f"probe{self.probes}"
        await self.send(message.body)
        await self.send(json.dumps({"jsonrpc": "2.0", "id": probe, "method": "ping"}).encode())
        *others, answer = await self.until(probe)
        assert answer.get("result") == {}, f"the server stopped answering after {message.category}"
        return others

    async def aclose(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 15)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


@pytest_asyncio.fixture(scope="module")
async def stdio() -> AsyncIterator[RawStdio]:
    raw = await RawStdio.start()
    try:
        yield raw
    finally:
        await raw.aclose()


@SIZED
async def test_stdio_survives_malformed_messages_and_never_answers_them_with_success(
    stdio, sizes: Sizes
) -> None:
    tally: Counter[str] = Counter()
    for message in corpus(sizes.malformed_messages // 2, seed=1):
        responses = await stdio.exchange(message)
        assert not [r for r in responses if not _is_error(r)], f"{message.category} was answered with success"
        answered = (
            any(r.get("id") == message.request_id for r in responses)
            if message.request_id
            else bool(responses)
        )
        tally[
            "answered" if answered else ("dropped_with_id" if message.request_id else "dropped_unparsable")
        ] += 1
    call = {
        "jsonrpc": "2.0",
        "id": "last",
        "method": "tools/call",
        "params": {"name": "session_status", "arguments": {}},
    }
    assert tally["dropped_with_id"] == 0, "a client waiting on that id would hang"
    await stdio.send(json.dumps(call).encode())
    assert json.loads((await stdio.until("last"))[-1]["result"]["content"][0]["text"])["active_sessions"] == 0
    record_figures(sizes, "malformed_stdio", messages=sizes.malformed_messages // 2, **tally)


STDIO_ID_BEARING = [
    b'{"jsonrpc":"1.0","id":"v","method":"ping"}',
    b'{"jsonrpc":"2.0","id":"p","method":"tools/call","params":[1,2]}',
    b'{"jsonrpc":"2.0","id":"m","method":42}',
]


@pytest.mark.parametrize("body", STDIO_ID_BEARING)
async def test_stdio_answers_every_malformed_request_whose_id_it_can_read(stdio, body: bytes) -> None:
    responses = await stdio.exchange(Malformed("id_bearing", body, json.loads(body)["id"]))
    assert [r for r in responses if r.get("id") == json.loads(body)["id"] and "error" in r]


async def test_stdio_answers_unparsable_frames_with_a_parse_error(stdio) -> None:
    responses = await stdio.exchange(Malformed("bad_json", b'{"jsonrpc":"2.0","id":', None))
    assert [r for r in responses if r.get("id") is None and r.get("error", {}).get("code") == -32700]


# ----- HTTP -------------------------------------------------------------------------------------------

TRANSPORT_FAULTS = (
    {"content-type": "text/plain"},
    {"accept": "text/html"},
    {"mcp-session-id": "unknown"},
    {"mcp-protocol-version": "1999-01-01"},
)


async def _http_session(client: httpx2.AsyncClient, url: str) -> dict[str, str]:
    base = {
        "authorization": f"Bearer {TOKEN}",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
    }
    started = await client.post(url, json=INITIALIZE, headers=base)
    assert started.status_code == 200
    headers = {**base, "mcp-session-id": started.headers["mcp-session-id"], "mcp-protocol-version": PROTOCOL}
    assert (await client.post(url, json=INITIALIZED, headers=headers)).status_code == 202
    return headers


@SIZED
async def test_http_answers_every_malformed_message_with_an_error(fast_server, sizes: Sizes) -> None:
    statuses: Counter[int] = Counter()
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0)) as client:
        headers = await _http_session(client, fast_server.url)
        for index, message in enumerate(corpus(sizes.malformed_messages // 2, seed=2)):
            fault = TRANSPORT_FAULTS[index % len(TRANSPORT_FAULTS)] if index % 10 == 0 else {}
            response = await bounded(
                client.post(fast_server.url, content=message.body, headers={**headers, **fault}),
                30,
                message.category,
            )
            statuses[response.status_code] += 1
            if response.status_code == 202:  # a well-formed notification needs no answer
                assert message.request_id is None and not response.content, message.body[:80]
            elif response.status_code < 400:
                assert response.status_code == 200 and _is_error(response.json()), (
                    f"{message.category} {message.body[:80]!r} → {response.status_code} {response.text[:200]}"
                )
            if index % 50 == 0:
                ping = await client.post(
                    fast_server.url, json={"jsonrpc": "2.0", "id": "ok", "method": "ping"}, headers=headers
                )
                assert ping.status_code == 200 and ping.json()["result"] == {}
        listed = await client.post(
            fast_server.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers
        )
        assert listed.status_code == 200 and len(listed.json()["result"]["tools"]) >= 19
    record_figures(
        sizes,
        "malformed_http",
        messages=sizes.malformed_messages // 2,
        statuses={str(k): v for k, v in sorted(statuses.items())},
    )


@pytest.mark.parametrize("request_id", [{"a": 1}, [1], 1.5, True])
async def test_http_refuses_requests_with_an_invalid_id(fast_server, request_id) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "session_status", "arguments": {}},
    }
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0)) as client:
        headers = await _http_session(client, fast_server.url)
        response = await client.post(fast_server.url, json=body, headers=headers)
    assert response.status_code == 400 or (response.status_code == 200 and _is_error(response.json()))


# ----- frames the SDK's own parser refuses: deep nesting, lone surrogate escapes ----------------------

DEEP_FRAMES = [  # (frame, the id a server can read back)
    pytest.param(b"[" * 10_000, None, id="unclosed-brackets"),
    pytest.param(
        b'{"jsonrpc":"2.0","id":"deep","method":"ping","params":' + b"[" * 10_000 + b"]" * 10_000 + b"}",
        "deep",
        id="deeper-than-python-json",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","method":"ping","params":{"x":'
        + b"[" * 10_000
        + b"]" * 10_000
        + b'},"id":"late"}',
        "late",
        id="id-after-the-deep-member",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":"mid","method":"ping","params":{"x":' + b"[" * 500 + b"]" * 500 + b"}}",
        "mid",
        id="deeper-than-the-sdk-parser",
    ),
]
# Frames whose id no answer could carry, or whose id cannot be read fast enough to matter.
HOSTILE_FRAMES = [
    pytest.param(  # a string that never closes, of escaped quotes: each quote once started a rescan
        b'{"jsonrpc":"2.0","id":"q","method":"ping","params":{"a":' + b"[" * 3_000 + b'"' + b'\\"' * 400_000,
        None,
        id="deep-with-an-unclosed-string-of-escaped-quotes",
    ),
    pytest.param(b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}', None, id="lone-surrogate-id"),
    pytest.param(
        b'{"jsonrpc":"2.0","id":"\\udc00","method":"ping","params":' + b"[" * 10_000 + b"]" * 10_000 + b"}",
        None,
        id="lone-surrogate-id-of-a-deep-frame",
    ),
]
LONE_SURROGATE = (
    b'{"jsonrpc":"2.0","id":7,"method":"tools/call",'
    b'"params":{"name":"fetch_page","arguments":{"url":"\\ud800"}}}'
)


@pytest.mark.parametrize(("body", "request_id"), [*DEEP_FRAMES, *HOSTILE_FRAMES])
async def test_stdio_answers_deeply_nested_frames_and_keeps_serving(stdio, body: bytes, request_id) -> None:
    responses = await stdio.exchange(Malformed("deep", body, request_id))
    assert [r for r in responses if r.get("id") == request_id and r["error"]["code"] == -32700], responses


async def test_stdio_answers_a_lone_surrogate_escape_with_its_id(stdio) -> None:
    responses = await stdio.exchange(Malformed("lone_surrogate", LONE_SURROGATE, 7))
    assert [r for r in responses if r.get("id") == 7 and "error" in r], responses


async def test_stdio_keeps_serving_after_a_result_holding_a_lone_surrogate(stdio, demo) -> None:
    """A page value the SDK cannot encode as UTF-8 (it killed the stdio writer) arrives as its JSON escape."""

    def call(request_id: str, tool: str, **arguments: Any) -> bytes:
        return json.dumps(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            }
        ).encode()

    await stdio.send(call("open", "open_page", url=demo.url("/login.html")))
    sid = json.loads((await stdio.until("open"))[-1]["result"]["content"][0]["text"])["session_id"]
    await stdio.send(
        call("lone", "evaluate", session_id=sid, expression="'a' + String.fromCharCode(0xd800) + 'b'")
    )
    answer = (await stdio.until("lone"))[-1]
    assert json.loads(answer["result"]["content"][0]["text"]) == {"result": "a\ud800b"}
    await stdio.send(call("closed", "close_page", session_id=sid))
    assert not (await stdio.until("closed"))[-1]["result"].get("isError")


@pytest.mark.parametrize(
    ("body", "request_id"),
    [*DEEP_FRAMES, *HOSTILE_FRAMES, pytest.param(LONE_SURROGATE, 7, id="lone-surrogate")],
)
async def test_http_answers_deeply_nested_and_lone_surrogate_frames(
    fast_server, body: bytes, request_id
) -> None:
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0)) as client:
        headers = await _http_session(client, fast_server.url)
        response = await bounded(client.post(fast_server.url, content=body, headers=headers), 30, "the frame")
        assert response.status_code == 400, response.text[:200]
        assert response.json()["id"] == request_id and response.json()["error"]["code"] == -32700
        ping = await client.post(
            fast_server.url, json={"jsonrpc": "2.0", "id": "ok", "method": "ping"}, headers=headers
        )
        assert ping.status_code == 200 and ping.json()["result"] == {}
