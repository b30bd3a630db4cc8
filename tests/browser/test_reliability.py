"""Hostile or broken pages never hang a call; the session stays usable (docs/contract.md#browser-engine)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import threading
from collections.abc import AsyncIterator

import psutil
import pytest
import pytest_asyncio

from plasmate_nb.browser import ActionError, Engine, EngineConfig, EngineError
from plasmate_nb.browser.temporary import CaptureFailed, temporary_page
from plasmate_nb.tools import Dispatcher
from tests.browser.conftest import eid
from tests.support import wait_until
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
    # The answer comes only after navigate_to has failed: the navigation was stopped (its request
    # fails), the session stays where it was, and the next action does not take the late page.
    release = threading.Event()
    stopped: list[str] = []

    def late(path: str) -> Answer:
        release.wait(30)
        return Answer(200, "<title>Late</title><p>Arrived after the timeout</p>")

    session = await engine.open(demo.url("/login.html"))
    session._page.on("requestfailed", lambda request: stopped.append(request.url))
    try:
        with scripted({"/late": late}) as server:
            with pytest.raises(ActionError, match=r"Timeout after 2000ms$"):
                await session.navigate(server.url("/late"))
            await wait_until(lambda: server.url("/late") in stopped, what="the late navigation stopped")
            release.set()
            await session.scroll()
            assert session.url == demo.url("/login.html")
            assert await session.evaluate("location.pathname") == "/login.html"
    finally:
        release.set()
        await engine.close_session(session.id)


GO_TO_AN_UNSAFE_PORT = (
    "<title>Start</title><button id=go onclick=\"location.href='http://127.0.0.1:9/x'\">Go</button>"
)


@pytest.mark.parametrize(
    ("later", "landed", "title"),
    [
        # Redirects now: the session reports the page it is on, with that page's SOM.
        (Answer(302, "", headers={"location": "/other"}), "/other", "Other"),
        # Sends the page to Chromium's error page: the last good state stays, no action succeeds there.
        (Answer(200, "<title>Gone</title><script>location.href = 'about:srcdoc'</script>"), "/app", "Start"),
    ],
    ids=["redirects", "leaves the web"],
)
async def test_going_back_to_a_last_good_url_that_now_answers_differently(engine, later, landed, title):
    hits = itertools.count()
    routes = {
        "/app": lambda path: Answer(200, GO_TO_AN_UNSAFE_PORT) if next(hits) == 0 else later,
        "/other": Answer(200, "<title>Other</title><p>Elsewhere</p>"),
    }
    with scripted(routes) as server:
        session = await engine.open(server.url("/app"))
        try:
            with pytest.raises(ActionError, match="ERR_UNSAFE_PORT"):
                await session.click(eid(session, "go"))
            assert (session.url, session.view()["title"]) == (server.url(landed), title)
            if landed == "/app":
                with pytest.raises(ActionError):
                    await session.scroll()
                assert session.url == server.url("/app")
            else:
                assert await session.evaluate("location.pathname") == landed
        finally:
            await engine.close_session(session.id)


async def test_a_page_that_failed_at_its_own_url_is_reloaded(engine):
    # A reload (a form posted to itself, say) answers 500: the URL is the same, the page is not.
    hits = itertools.count()
    form = "<title>Form</title><button id=again onclick='location.reload()'>Again</button>"

    def page(path: str) -> Answer:
        return Answer(500, "<title>Server error</title>") if next(hits) == 1 else Answer(200, form)

    with scripted({"/form": page}) as server:
        session = await engine.open(server.url("/form"))
        try:
            with pytest.raises(ActionError, match="HTTP error 500"):
                await session.click(eid(session, "again"))
            await session.scroll()
            assert session.view()["title"] == "Form"
            assert await session.evaluate("document.title") == "Form"
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


def _browser_process(engine: Engine) -> psutil.Process:
    """The engine's Chromium main process, the one Playwright's CDP connection talks to."""
    assert engine.gate is not None
    proxy = f"--proxy-server={engine.gate.server}"
    found = []
    for process in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):  # a renderer may end while we look
            line = process.cmdline()
            if proxy in line and not any(arg.startswith("--type=") for arg in line):
                found.append(process)
    assert len(found) == 1, found
    return found[0]


async def test_a_wedged_browser_fails_calls_within_their_bounds_and_recovers(demo):
    # The browser stops answering (SIGSTOP). Playwright gives new_context and new_page no deadline
    # of their own: without ours, open_page and every stateless tool would wait forever.
    engine = Engine(CONFIG)
    patient = engine.config
    try:
        await engine.open(demo.url("/login.html"))
        browser = _browser_process(engine)
        browser.suspend()
        engine.config = dataclasses.replace(patient, browser_timeout=1.0)  # only while it is stopped
        try:
            with pytest.raises(
                EngineError, match=r"^Failed to fetch http://127\.0\.0\.1:\d+/…: Timeout after 1000ms$"
            ):
                await asyncio.wait_for(engine.open(demo.url("/welcome.html")), 30)
            fetched = await asyncio.wait_for(
                Dispatcher(engine).call("fetch_page", {"url": demo.url("/welcome.html")}), 30
            )
            assert fetched.is_error
            assert fetched.text == f"Failed to fetch {demo.base_url.rstrip('/')}/…: Timeout after 1000ms"
        finally:
            browser.resume()
            engine.config = patient
        # The contexts the browser made after those calls gave up belong to no one: closed. (The
        # browser answers in order: once a new context has come, so have the late ones.)
        await (await engine._new_context()).close()
        assert engine._browser is not None
        await wait_until(lambda: len(engine._browser.contexts) == 1, what="the late contexts closed")
        async with temporary_page(engine, demo.url("/welcome.html")) as loaded:
            browser.suspend()
            try:
                with pytest.raises(CaptureFailed) as capture:
                    await asyncio.wait_for(loaded.screenshot("png", 1.0), 30)
                assert capture.value.timed_out
            finally:
                browser.resume()
        fresh = await engine.open(demo.url("/welcome.html"))
        assert fresh.view()["title"] == "Welcome"
    finally:
        await engine.aclose()
