"""Hostile or broken pages never hang a call; the session stays usable (docs/contract.md#browser-engine)."""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from plasmate_nb.browser import ActionError, Engine, EngineConfig, EngineError
from tests.browser.conftest import eid
from tests.tools.local_http import Answer, scripted

CONFIG = EngineConfig(navigation_timeout=2, action_timeout=1, evaluate_timeout=1, settle_timeout=0.5)


@pytest_asyncio.fixture(scope="module")
async def engine() -> AsyncIterator[Engine]:
    async with Engine(CONFIG) as running:
        yield running


async def test_hanging_click_is_bounded_and_the_session_recovers(engine, demo):
    session = await engine.open(demo.url("/faults/hang.html"))
    try:
        await session.set_cookies([{"name": "kept", "value": "1", "url": demo.base_url}])
        with pytest.raises(ActionError) as info:
            await session.click(eid(session, "hang"))
        assert "Timeout" in str(info.value) and str(info.value).startswith("Click failed: ")
        assert session.url == demo.url("/faults/hang.html")
        assert await session.evaluate("1 + 1") == 2  # a fresh page answers
        assert await session.evaluate("document.cookie") == "kept=1"  # same context
        await session.navigate(demo.url("/welcome.html"))
        assert session.view()["title"] == "Welcome"
    finally:
        await engine.close_session(session.id)


async def test_endless_evaluate_is_bounded(engine, demo):
    session = await engine.open(demo.url("/drift.html"))
    try:
        with pytest.raises(ActionError, match=r"^Evaluate failed: Timeout after 1000ms$"):
            await session.evaluate("(() => { for (;;) {} })()")
        await session.click(eid(session, "increment"))
        assert await session.evaluate("document.getElementById('count').textContent") == 1
    finally:
        await engine.close_session(session.id)


async def test_never_loading_page_times_out_and_leaves_no_session(engine, demo):
    with pytest.raises(
        EngineError, match=r"^Failed to fetch http://127\.0\.0\.1:\d+/…: Timeout after 2000ms$"
    ):
        await engine.open(demo.url("/faults/slow"))
    assert engine.sessions() == []


async def test_a_navigation_that_timed_out_never_lands_later(engine, demo):
    # The answer comes only after navigate_to has failed: the session stays where it was, and the
    # next action does not take the late page for its own.
    release, answered = threading.Event(), threading.Event()

    def late(path: str) -> Answer:
        release.wait(30)
        answered.set()
        return Answer(200, "<title>Late</title><p>Arrived after the timeout</p>")

    session = await engine.open(demo.url("/login.html"))
    try:
        with scripted({"/late": late}) as server:
            with pytest.raises(ActionError, match=r"Timeout after 2000ms$"):
                await session.navigate(server.url("/late"))
            release.set()
            await asyncio.to_thread(answered.wait, 30)
            await session.scroll()
            assert session.url == demo.url("/login.html")
            assert await session.evaluate("location.pathname") == "/login.html"
    finally:
        release.set()
        await engine.close_session(session.id)


async def test_a_last_good_page_that_now_redirects_is_reported_where_it_landed(engine):
    # After a failed action the session goes back to its last good URL; when that URL now
    # redirects elsewhere, the session reports the page it is on, with that page's SOM.
    hits = itertools.count()
    button = "<title>Once</title><button id=go onclick=\"location.href='http://127.0.0.1:9/x'\">Go</button>"

    def once(path: str) -> Answer:
        if next(hits) == 0:
            return Answer(200, button)
        return Answer(302, "", headers={"location": "/other"})

    with scripted({"/once": once, "/other": Answer(200, "<title>Other</title><p>Elsewhere</p>")}) as server:
        session = await engine.open(server.url("/once"))
        try:
            with pytest.raises(ActionError, match="ERR_UNSAFE_PORT"):
                await session.click(eid(session, "go"))
            assert session.url == server.url("/other")
            assert session.view()["title"] == "Other"
            assert await session.evaluate("location.pathname") == "/other"
        finally:
            await engine.close_session(session.id)


async def test_browser_loss_fails_fast_and_the_next_open_relaunches(demo):
    engine = Engine(CONFIG)
    try:
        session = await engine.open(demo.url("/login.html"))
        await engine._browser.close()  # the browser process goes away under the session
        with pytest.raises(ActionError, match=r"^Browser connection lost"):
            await session.click(eid(session, "submit"))
        with pytest.raises(ActionError, match=r"^Browser connection lost"):
            await session.get_cookies()
        assert engine.get(session.id) is session  # still registered: its trace stays readable
        assert session.page_state().url == demo.url("/login.html")
        fresh = await engine.open(demo.url("/welcome.html"))
        assert fresh.view()["title"] == "Welcome"
    finally:
        await engine.aclose()
