"""Every network-reaching stateless tool obeys the engine's URL policy through the egress gate
(docs/contract.md#stateless-page-tools): with private networks blocked, a loopback destination is
refused with ``Outbound URL blocked`` and the gate records the refusal."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from plasmate_nb.browser import Engine, EngineConfig
from plasmate_nb.tools import Dispatcher
from tests.tools.local_http import Answer, ScriptedServer, scripted, self_signed

BLOCKED = "Outbound URL blocked: address 127.0.0.1 is not globally routable"


@pytest_asyncio.fixture(scope="module")
async def restricted() -> AsyncIterator[Dispatcher]:
    engine = Engine(EngineConfig(allow_private_network=False, action_timeout=5.0, settle_timeout=1.0))
    try:
        yield Dispatcher(engine)
    finally:
        await engine.aclose()


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    robots = Answer(200, "User-agent: *\nDisallow: /\n", "text/plain")
    with scripted({"/": Answer(200, "<title>T</title><a href='/x'>x</a>"), "/robots.txt": robots}) as running:
        yield running


def refused(dispatcher: Dispatcher, port: int, since: int) -> bool:
    gate = dispatcher.engine.gate
    assert gate is not None
    return any(
        r.port == port and r.serial > since and r.reason.startswith("address 127.0.0.1")
        for r in gate.refusals()
    )


async def mark(dispatcher: Dispatcher) -> int:
    await dispatcher.engine.start()
    assert dispatcher.engine.gate is not None
    return dispatcher.engine.gate.mark()


@pytest.mark.parametrize("tool", ["fetch_page", "extract_text", "extract_links", "screenshot_page"])
async def test_page_tools_are_refused(restricted: Dispatcher, server: ScriptedServer, tool: str) -> None:
    since = await mark(restricted)
    result = await restricted.call(tool, {"url": server.url("/")})
    assert result.is_error
    assert result.text.startswith(f"Failed to fetch http://127.0.0.1:{server.port}/…: {BLOCKED}")
    assert refused(restricted, server.port, since) and server.seen == []


async def test_inspect_page_is_refused(restricted: Dispatcher, server: ScriptedServer) -> None:
    since = await mark(restricted)
    result = await restricted.call("inspect_page", {"url": server.url("/")})
    assert result.is_error and result.text.startswith(f"Failed to fetch page: {BLOCKED}")
    assert refused(restricted, server.port, since) and server.seen == []


async def test_crawl_policy_reports_a_blocked_destination(
    restricted: Dispatcher, server: ScriptedServer
) -> None:
    since = await mark(restricted)
    result = await restricted.call("crawl_policy", {"url": server.url("/page")})
    report = json.loads(result.text)
    assert report["source"]["classification"] == "blocked_redirect_or_destination"
    assert report["decision"]["allowed"] is False and report["decision"]["reason"] == "robots_unreachable"
    assert refused(restricted, server.port, since) and server.seen == []


async def test_ard_discover_refuses_a_literal_and_reports_a_named_blocked_host(
    restricted: Dispatcher, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    literal = await restricted.call("ard_discover", {"url": "https://127.0.0.1/"})
    assert literal.is_error
    assert literal.text.startswith("ARD discovery failed: address 127.0.0.1 is not globally routable")
    cert, key = self_signed(tmp_path)
    monkeypatch.setitem(os.environ, "SSL_CERT_FILE", str(cert))
    with scripted({"/": Answer(200, "<p>x</p>")}, tls=(cert, key)) as tls_server:
        since = await mark(restricted)
        report = json.loads(
            (await restricted.call("ard_discover", {"url": tls_server.url("/", host="localhost")})).text
        )
        assert tls_server.seen == []
    html, robots = report["sources"][1], report["sources"][2]
    assert html["status"] == robots["status"] == "failed"
    assert html["failures"][0].startswith(BLOCKED)
    assert report["catalogs"][0]["error"].startswith(BLOCKED)
    assert refused(restricted, tls_server.port, since)


async def test_cache_status_reaches_nothing(restricted: Dispatcher) -> None:
    result = await restricted.call("cache_status", {})
    assert not result.is_error and json.loads(result.text)["max_hot_entries"] == 1000


@pytest_asyncio.fixture(scope="module")
async def loopback_only() -> AsyncIterator[Dispatcher]:
    config = EngineConfig(
        allow_private_network=False,
        allowed_networks=("127.0.0.1/32",),
        action_timeout=5.0,
        settle_timeout=2.0,
    )
    engine = Engine(config)
    try:
        yield Dispatcher(engine)
    finally:
        await engine.aclose()


def _refresh_to(url: str) -> Answer:
    return Answer(
        200, f"<title>Loaded</title><meta http-equiv=refresh content='0;url={url}'><p>first page</p>"
    )


@pytest.mark.parametrize(
    "tool", ["fetch_page", "extract_text", "extract_links", "screenshot_page", "inspect_page"]
)
async def test_a_page_that_goes_on_after_its_load_is_answered_as_where_it_went(
    loopback_only: Dispatcher, tool: str
) -> None:
    # The first page is allowed; its meta refresh goes where the gate refuses, or to a 500. The
    # tools answered with the gate's refusal page (or the error page's body) as the page's content.
    with scripted({"/error": Answer(500, "<p>SECRET_TOKEN_123</p>")}) as server:
        server.routes["/blocked"] = _refresh_to(f"http://127.0.0.2:{server.port}/meta-data?token=SECRET")
        server.routes["/failing"] = _refresh_to("/error")
        blocked = await loopback_only.call(tool, {"url": server.url("/blocked")})
        failing = await loopback_only.call(tool, {"url": server.url("/failing")})
        assert [seen.path for seen in server.seen].count("/error") == 1
    start = (
        "Failed to fetch page: "
        if tool == "inspect_page"
        else f"Failed to fetch http://127.0.0.1:{server.port}/…: "
    )
    assert blocked.is_error and blocked.text.startswith(start + "Outbound URL blocked: address 127.0.0.2")
    assert failing.is_error and failing.text.startswith(start + "HTTP error 500: ")
    assert "SECRET" not in blocked.text + failing.text
