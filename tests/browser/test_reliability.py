"""Hostile or broken pages never hang a call; the session stays usable (docs/contract.md#browser-engine)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from plasmate_nb.browser import ActionError, Engine, EngineConfig, EngineError
from tests.browser.conftest import eid

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
