"""Engine bookkeeping: capacity, lookup, status payload, fetch_page, idle reaper (docs/contract.md#browser-engine)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from plasmate_nb.browser import Engine, EngineConfig, EngineError
from plasmate_nb.browser.session import BrowserSession
from plasmate_nb.tools import Dispatcher

CONFIG = EngineConfig(navigation_timeout=10, action_timeout=3, evaluate_timeout=3, settle_timeout=1)
SESSION_KEYS = [
    "session_id",
    "url",
    "title",
    "age_ms",
    "idle_ms",
    "has_page",
    "has_structured_data",
    "has_effective_html",
    "node_count",
    "html_bytes",
    "effective_html_bytes",
    "som_bytes",
    "element_count",
    "interactive_count",
]


@pytest_asyncio.fixture(scope="module")
async def engine() -> AsyncIterator[Engine]:
    async with Engine(CONFIG) as running:
        yield running


async def test_capacity_limit_and_release(engine, demo):
    opened = [await engine.open(demo.url("/welcome.html")) for _ in range(10)]
    try:
        with pytest.raises(EngineError) as info:
            await engine.open(demo.url("/welcome.html"))
        assert str(info.value) == "Maximum sessions (10) reached. Close a session first."
        await engine.close_session(opened.pop().id)
        opened.append(await engine.open(demo.url("/welcome.html")))
        assert len(engine.sessions()) == 10
    finally:
        for session in opened:
            await engine.close_session(session.id)
    assert engine.sessions() == []


async def test_configured_capacity_in_the_message(demo):
    async with Engine(EngineConfig(max_sessions=1)) as small:
        await small.open(demo.url("/index.html"))
        with pytest.raises(EngineError, match=r"^Maximum sessions \(1\) reached\. Close a session first\.$"):
            await small.open(demo.url("/index.html"))


async def test_ids_trace_and_lookup(engine, demo):
    session = await engine.open(demo.url("/index.html"), trace=True)
    try:
        assert uuid.UUID(session.id).version == 4
        assert uuid.UUID(session.trace.trace_id).version == 4 and session.trace.trace_id != session.id
        assert session.trace.enabled is True
        assert isinstance(session.lock, asyncio.Lock)
        idle_before = session.idle_ms
        await asyncio.sleep(0.05)
        assert engine.get(session.id) is session
        assert session.idle_ms <= idle_before + 10  # get() refreshed the last access
        assert "index" not in repr(session)  # no URL in a repr
        await engine.close_session(session.id)
        with pytest.raises(EngineError, match="Session not found"):
            engine.get(session.id)
    finally:
        if session in engine.sessions():
            await engine.close_session(session.id)


async def test_status_payload_shape(engine, demo):
    empty = engine.status()
    assert list(empty) == [
        "active_sessions",
        "max_sessions",
        "available_sessions",
        "oldest_session_age_ms",
        "longest_idle_ms",
        "sessions",
    ]
    assert empty["sessions"] == [] and empty["available_sessions"] == 10
    sessions = [await engine.open(demo.url("/login.html")), await engine.open(demo.url("/index.html"))]
    try:
        status = engine.status()
        assert (
            status["active_sessions"] == 2
            and status["max_sessions"] == 10
            and status["available_sessions"] == 8
        )
        rows = status["sessions"]
        assert [row["session_id"] for row in rows] == sorted(s.id for s in sessions)
        for row in rows:
            assert list(row) == SESSION_KEYS
            assert row["has_page"] is True and row["element_count"] > 0
            assert row["interactive_count"] <= row["element_count"]
            assert row["som_bytes"] == len(engine.get(row["session_id"]).som.text.encode())
        assert {row["title"] for row in rows} == {"Sign in", "plasmate_nb demo site"}
        assert status["oldest_session_age_ms"] >= max(row["age_ms"] for row in rows) - 1
    finally:
        for session in sessions:
            await engine.close_session(session.id)


async def test_fetch_page_leaves_no_session(engine, demo):
    dispatcher = Dispatcher(engine)
    fetched = await dispatcher.call("fetch_page", {"url": demo.url("/dynamic.html")})
    assert not fetched.is_error and json.loads(fetched.text)["title"] == "Dynamic content"
    assert "Rendered gizmo" in fetched.text
    assert engine.sessions() == []
    refused = await dispatcher.call("fetch_page", {"url": "http://127.0.0.1:9/"})
    assert refused.is_error and refused.text.startswith("Failed to fetch")


async def test_failed_open_leaves_no_session(engine, demo):
    with pytest.raises(EngineError, match="HTTP error 500"):
        await engine.open(demo.url("/faults/500"))
    assert engine.sessions() == []


async def test_closing_the_engine_ends_a_reaper_whose_cancellation_was_lost(demo, monkeypatch):
    # Python 3.11's wait_for returns the result and drops a cancellation that arrives just as the
    # call it awaits completes, as a session's close can. The reaper then went on forever, and
    # aclose waited for it forever (a CI run hung here). This close loses every cancellation.
    closing = asyncio.Event()
    original_close = BrowserSession.close

    async def close_losing_the_cancellation(self: BrowserSession) -> None:
        await original_close(self)
        closing.set()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(1)

    monkeypatch.setattr(BrowserSession, "close", close_losing_the_cancellation)
    engine = Engine(EngineConfig(idle_timeout=0.3))
    await engine.open(demo.url("/index.html"))
    await asyncio.wait_for(closing.wait(), 30)  # the reaper is inside the session's close
    closing_engine = asyncio.ensure_future(engine.aclose())
    done, _ = await asyncio.wait({closing_engine}, timeout=30)  # no wait_for: it would cancel aclose
    closing_engine.cancel()
    assert done, "aclose is still waiting for the reaper"


async def test_idle_sessions_are_reaped(demo):
    async with Engine(EngineConfig(idle_timeout=0.3)) as reaping:
        session = await reaping.open(demo.url("/index.html"))
        for _ in range(40):
            if not reaping.sessions():
                break
            await asyncio.sleep(0.1)
        assert reaping.sessions() == []
        with pytest.raises(EngineError, match="Session not found"):
            reaping.get(session.id)
