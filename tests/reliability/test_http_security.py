"""Security of the HTTP transport and of the URL policy: loopback binds only, a bearer token
compared in constant time, foreign Origins and Hosts refused, a body limit, private
destinations blocked (directly, through redirects and through DNS names) unless allowed,
and no session reading another's trace."""

from __future__ import annotations

import dataclasses
import inspect
import types
import uuid
from collections.abc import AsyncIterator

import httpx2
import pytest
import pytest_asyncio

import plasmate_nb.server.http as http_module
from plasmate_nb.server import HttpServer, ServerConfigError
from plasmate_nb.server.http import SecurityMiddleware
from tests.reliability.support import FAST, TOKEN, inprocess_server, last_event, remote

HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
INITIALIZE = (  # needs no MCP session
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
)


async def _post(url: str, headers: dict[str, str], body: bytes = PING) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=30) as client:
        return await client.post(url, content=body, headers={**HEADERS, **headers})


def _near_misses(token: str) -> list[str]:
    """Tokens of the same length that differ from ``token`` in one place (first, middle, last)."""
    flip = lambda ch: "A" if ch != "A" else "B"  # noqa: E731
    return [token[:i] + flip(token[i]) + token[i + 1 :] for i in (0, len(token) // 2, len(token) - 1)]


def test_non_loopback_binds_are_refused(fast_server) -> None:
    for host in ("0.0.0.0", "::", "10.0.0.1", "192.168.0.2", "169.254.169.254", "example.test"):
        with pytest.raises(ServerConfigError, match="refuses non-loopback bind host"):
            HttpServer(fast_server.dispatcher, host=host, token=TOKEN)


def test_the_token_check_uses_a_constant_time_compare() -> None:
    assert "hmac.compare_digest(" in inspect.getsource(SecurityMiddleware._refusal)


async def test_the_token_compare_really_runs_through_compare_digest(fast_server, monkeypatch) -> None:
    calls: list[tuple[bytes, bytes]] = []
    real = http_module.hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(http_module, "hmac", types.SimpleNamespace(compare_digest=spy))
    assert (
        await _post(fast_server.url, {"authorization": "Bearer " + _near_misses(TOKEN)[1]})
    ).status_code == 401
    assert calls and all(isinstance(a, bytes) and len(b) == len(f"Bearer {TOKEN}") for a, b in calls)


async def test_near_miss_tokens_of_equal_length_are_refused(fast_server) -> None:
    for near in [*_near_misses(TOKEN), TOKEN.upper(), TOKEN[::-1]]:
        assert len(near) == len(TOKEN)
        response = await _post(fast_server.url, {"authorization": f"Bearer {near}"})
        assert response.status_code == 401, near
    for header in (f"bearer {TOKEN}", f"Bearer  {TOKEN}", f"Bearer {TOKEN}x", TOKEN, f"Basic {TOKEN}"):
        assert (await _post(fast_server.url, {"authorization": header})).status_code == 401
    assert (await _post(fast_server.url, {"authorization": f"Bearer {TOKEN}"})).status_code != 401


async def test_dns_rebinding_style_requests_are_refused(fast_server) -> None:
    auth = {"authorization": f"Bearer {TOKEN}"}
    host = fast_server.url.split("/")[2]
    for origin in (
        "http://attacker.test",
        f"http://attacker.test:{fast_server.port}",
        "null",
        "http://localhost.attacker.test",
    ):
        response = await _post(fast_server.url, {**auth, "host": host, "origin": origin})
        assert response.status_code == 403 and response.json()["error"]["message"] == "Forbidden Origin"
    foreign_host = await _post(fast_server.url, {**auth, "host": f"attacker.test:{fast_server.port}"})
    assert foreign_host.status_code == 421  # a rebound name without Origin: the Host check refuses it


async def test_an_allowed_origin_is_allowed_in_any_case_and_with_a_trailing_slash() -> None:
    """As documented: compared lower-cased, without a trailing "/" (the SDK, which checks again by
    exact match, refused every spelling but the one given, with a plain-text 403)."""
    auth = {"authorization": f"Bearer {TOKEN}"}
    async with inprocess_server(allowed_origins=("http://Foo.Example:8080",)) as server:
        for origin in ("http://foo.example:8080", "http://Foo.Example:8080", "HTTP://FOO.EXAMPLE:8080/"):
            response = await _post(server.url, {**auth, "origin": origin}, INITIALIZE)
            assert response.status_code == 200 and "serverInfo" in response.json()["result"], origin
        refused = await _post(server.url, {**auth, "origin": "http://foo.example:8081"})
        assert refused.status_code == 403 and refused.json()["error"]["message"] == "Forbidden Origin"
        async with httpx2.AsyncClient(timeout=30) as client:  # two Origins: which would count?
            twice = await client.post(
                server.url,
                content=INITIALIZE,
                headers=[
                    *HEADERS.items(),
                    *auth.items(),
                    ("origin", "http://evil.test"),
                    ("origin", "http://foo.example:8080"),
                ],
            )
        assert twice.status_code == 403 and twice.json()["error"]["message"] == "Forbidden Origin"


async def test_connections_beyond_the_cap_are_closed_at_once_and_others_are_served(monkeypatch) -> None:
    """Connections anyone on the machine can open (no token needed) and leave silent must not use
    up the file descriptors: past the cap each is closed at once, and a client is still served."""
    import asyncio

    monkeypatch.setattr(http_module.DeadlineProtocol, "max_connections", 20)
    async with inprocess_server() as server:
        opened = [await asyncio.open_connection("127.0.0.1", server.port) for _ in range(30)]
        try:
            # The first 20 wait for their 30 s header deadline; the 10 past the cap end now.
            ended = await asyncio.wait_for(asyncio.gather(*(reader.read() for reader, _ in opened[20:])), 15)
            assert ended == [b""] * 10
            assert all(not reader.at_eof() for reader, _ in opened[:20])
        finally:
            for _, writer in opened:
                writer.close()
        response = await _post(server.url, {"authorization": f"Bearer {TOKEN}"}, INITIALIZE)
        assert response.status_code == 200 and "serverInfo" in response.json()["result"]


async def test_bodies_over_the_limit_are_refused_declared_or_streamed(fast_server) -> None:
    auth = {"authorization": f"Bearer {TOKEN}"}
    huge = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"x" * (1024 * 1024) + b'"}}'
    assert (await _post(fast_server.url, auth, huge)).status_code == 413

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(huge), 65536):
            yield huge[start : start + 65536]

    async with httpx2.AsyncClient(timeout=30) as client:
        streamed = await client.post(fast_server.url, content=chunks(), headers={**HEADERS, **auth})
    assert streamed.status_code == 413


@pytest_asyncio.fixture(scope="module")
async def restricted_server() -> AsyncIterator[HttpServer]:
    """The server as ``serve`` runs it by default (private network blocked), with 127.0.0.1 allowed."""
    config = dataclasses.replace(FAST, allow_private_network=False, allowed_hosts=("127.0.0.1",))
    async with inprocess_server(config) as server:
        yield server


BLOCKED_DESTINATIONS = [
    "http://169.254.169.254/latest/meta-data/",  # cloud metadata
    "http://169.254.10.1/",  # link-local
    "http://10.0.0.1/",
    "http://192.168.1.1/",
    "http://172.16.0.1/",  # private
    "http://127.0.0.2:{port}/",
    "http://[::1]:{port}/",
    "http://0.0.0.0:{port}/",  # loopback, unspecified
    "http://localhost:{port}/login.html",  # a DNS name that resolves to loopback
    "http://[fe80::1]/",
    "http://[::ffff:169.254.169.254]/",
]


@pytest.mark.parametrize("destination", BLOCKED_DESTINATIONS)
async def test_private_destinations_are_blocked_directly_and_through_redirects(
    restricted_server, demo, destination
) -> None:
    url = destination.format(port=demo.port if demo.port else demo.base_url.rsplit(":", 1)[1])
    async with remote(restricted_server.url) as client:
        assert "Outbound URL blocked" in await client.error("open_page", url=url)
        opened = await client.ok("open_page", url=demo.url("/login.html"), trace=True)
        sid = opened["session_id"]
        for target in (url, demo.url("/redirect?to=" + url)):
            message = await client.error("navigate_to", session_id=sid, url=target)
            assert "Outbound URL blocked" in message
            assert last_event(await client.ok("trace_export", session_id=sid))["error_class"] == "policy"
        assert (await client.ok("evaluate", session_id=sid, expression="location.pathname")) == {
            "result": "/login.html"
        }
        await client.ok("close_page", session_id=sid)


async def test_allowed_private_destinations_load(fast_server, demo) -> None:
    port = demo.base_url.rsplit(":", 1)[1]
    async with remote(fast_server.url) as client:
        opened = await client.ok("open_page", url=f"http://localhost:{port}/login.html")
        moved = await client.ok(
            "navigate_to",
            session_id=opened["session_id"],
            url=demo.url(f"/redirect?to=http://localhost:{port}/welcome.html"),
        )
        assert moved["title"] == "Welcome"
        await client.ok("close_page", session_id=opened["session_id"])


async def test_no_session_reads_another_sessions_trace(fast_server, demo) -> None:
    async with remote(fast_server.url) as client:
        opened = [await client.ok("open_page", url=demo.url("/login.html"), trace=True) for _ in range(3)]
        handles = []
        for page in opened:
            status = await client.ok("trace_status", session_id=page["session_id"])
            handles += [page["session_id"], status["trace_id"]]
        assert len(set(handles)) == len(handles)
        assert all(uuid.UUID(handle).version == 4 and str(uuid.UUID(handle)) == handle for handle in handles)
        (a, b, _) = (page["session_id"] for page in opened)
        trace_a = (await client.ok("trace_status", session_id=a))["trace_id"]
        refused = await client.ok(
            "replay_validate", session_id=b, trace_id=trace_a, sequence=1, confirmed=True
        )
        assert (refused["status"], refused["drift"]) == ("refused", "cross_session")
        assert "session_id" not in refused and "action" not in refused
        export_b = await client.ok("trace_export", session_id=b)
        assert all(event["sequence"] for event in export_b["events"]) and export_b["session_id"] == b
        assert "Session not found" in await client.error("trace_export", session_id=trace_a)
        for page in opened:
            await client.ok("close_page", session_id=page["session_id"])
