"""A session's page that crashed is never acted on blind (docs/contract.md#browser-engine).

What its caller typed or changed went with the crash, so a click on the reloaded page could submit
an emptied form. The next action reloads the page and refuses, once; when the page cannot be
loaded again, actions are refused until a navigation lands. Replay execution's proof never counts
a crashed page as unchanged, and replaces nothing. Crashes are real: CDP ``Page.crash``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Error as PlaywrightError

from plasmate_nb.analysis import audit
from plasmate_nb.browser import ActionError, BrowserSession, Engine, EngineConfig
from plasmate_nb.client import InProcessTransport
from plasmate_nb.client.base import ToolError
from plasmate_nb.notebook import AsyncSession
from plasmate_nb.som import crashed_at
from plasmate_nb.tools import Dispatcher
from tests.browser.conftest import attrs, eid
from tests.support import wait_until
from tests.tools.local_http import Answer, scripted

CONFIG = EngineConfig(navigation_timeout=2, action_timeout=1, evaluate_timeout=2, settle_timeout=0.5)
RELOADED = (
    "Pipeline error: the page crashed; it was reloaded at its last good URL, so what was typed or changed "
    "on it is gone: read the page again (page_som) before acting on it"
)
NOT_RELOADED = (
    "Pipeline error: the page crashed; its last good URL did not load again, so there is no page to act on: "
    "navigate_to one"
)
TYPED = "analyst@example.test"


@pytest_asyncio.fixture(scope="module")
async def engine() -> AsyncIterator[Engine]:
    async with Engine(CONFIG) as running:
        yield running


@contextlib.asynccontextmanager
async def opened(engine: Engine, url: str) -> AsyncIterator[BrowserSession]:
    """A session of ``engine`` at ``url``, closed after."""
    session = await engine.open(url)
    try:
        yield session
    finally:
        await engine.close_session(session.id)


async def crash(session: BrowserSession) -> None:
    """Crash the session's renderer as Chromium would, and wait until the crash is seen."""
    page = session._page
    assert page is not None
    crasher = await page.context.new_cdp_session(page)
    with contextlib.suppress(PlaywrightError, TimeoutError):  # a crashed renderer never answers
        await asyncio.wait_for(crasher.send("Page.crash"), 2)
    await wait_until(lambda: crashed_at(page) is not None, 10, "the page's crash")


async def waiting_on_the_page(session: BrowserSession, call: Awaitable[Any]) -> asyncio.Future[Any]:
    """``call`` (an evaluate that sets ``window.waiting`` and never settles), once it waits on the page."""
    page = session._page
    assert page is not None
    running = asyncio.ensure_future(call)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while not await page.evaluate("window.waiting === true"):
        assert loop.time() < deadline and not running.done(), "the call never reached the page"
        await asyncio.sleep(0.02)
    return running


WAIT_FOREVER = "new Promise(() => { window.waiting = true; })"


def element_id(payload: dict, html_id: str) -> str:
    return next(e["id"] for r in payload["regions"] for e in r["elements"] if e.get("html_id") == html_id)


async def ok(dispatcher: Dispatcher, tool: str, **arguments: Any) -> Any:
    result = await dispatcher.call(tool, arguments)
    assert not result.is_error, result.text
    return json.loads(result.text)


ACTIONS: dict[str, Callable[[BrowserSession], Awaitable[Any]]] = {
    "click": lambda s: s.click(eid(s, "submit")),
    "type_text": lambda s: s.type_text(eid(s, "email"), "x", append=True),
    "select_option": lambda s: s.select_option(eid(s, "plan"), "team"),
    "toggle": lambda s: s.toggle(eid(s, "remember")),
    "clear": lambda s: s.clear(eid(s, "email")),
    "scroll_to_element": lambda s: s.scroll(element_id=eid(s, "submit")),
    "scroll": lambda s: s.scroll(),
    "evaluate": lambda s: s.evaluate("document.title"),
}


@pytest.mark.parametrize("action", sorted(ACTIONS))
async def test_the_next_action_reloads_the_page_and_refuses_once(engine, demo, action):
    async with opened(engine, demo.url("/login.html")) as session:
        await session.type_text(eid(session, "email"), TYPED)
        assert attrs(session, "email")["value"] == TYPED
        await crash(session)
        with pytest.raises(ActionError) as refused:
            await ACTIONS[action](session)
        assert str(refused.value) == RELOADED and refused.value.args[0].error_class == "operation"
        # The session holds the reloaded page: the typed text is gone from it, as from the page.
        assert "value" not in attrs(session, "email")
        assert await session.evaluate("document.querySelector('#email').value.length") == 0
        await ACTIONS[action](session)  # once: the caller has been told


async def test_a_crash_a_failing_call_reported_is_refused_by_the_next_action_too(engine, demo):
    """The call the crash cut short fails with the crash; it cannot say what the next call finds
    (the reload), so the next action refuses as after any crash."""
    async with opened(engine, demo.url("/login.html")) as session:
        await session.type_text(eid(session, "email"), TYPED)
        waiting = await waiting_on_the_page(session, session.evaluate(WAIT_FOREVER))
        await crash(session)
        with pytest.raises(ActionError) as cut_short:
            await waiting
        assert str(cut_short.value).startswith("Evaluate failed: ") and "reloaded" not in str(cut_short.value)
        with pytest.raises(ActionError, match=r"^Pipeline error: the page crashed; it was reloaded"):
            await session.click(eid(session, "submit"))
        await session.click(eid(session, "submit"))


async def test_a_navigation_after_a_crash_goes_ahead(engine, demo):
    async with opened(engine, demo.url("/login.html")) as session:
        await crash(session)
        await session.navigate(demo.url("/index.html"))  # a new page: nothing of the lost one is acted on
        assert await session.evaluate("location.pathname") == "/index.html"


async def test_a_failed_navigation_after_a_crash_leaves_the_refusal_to_the_next_action(engine, demo):
    async with opened(engine, demo.url("/login.html")) as session:
        await crash(session)
        with pytest.raises(ActionError, match="ERR_UNSAFE_PORT"):
            await session.navigate("http://127.0.0.1:9/x")
        with pytest.raises(ActionError) as refused:
            await session.click(eid(session, "submit"))
        assert str(refused.value) == RELOADED


@pytest.mark.parametrize(
    "later",
    [Answer(500, "<title>Server error</title><p>down</p>"), Answer(200, "<title>Form</title>", delay=4)],
)
async def test_a_page_that_does_not_load_again_is_refused_until_a_navigation_lands(engine, demo, later):
    hits = itertools.count()
    form = "<title>Form</title><input id=name><button id=go>Go</button>"
    with scripted({"/form": lambda path: Answer(200, form) if next(hits) == 0 else later}) as server:
        async with opened(engine, server.url("/form")) as session:
            await crash(session)
            for _ in range(2):  # not once: there is no page to act on
                with pytest.raises(ActionError) as refused:
                    await session.click(eid(session, "go"))
                assert str(refused.value) == NOT_RELOADED
            await session.navigate(demo.url("/index.html"))
            assert await session.evaluate("location.pathname") == "/index.html"


async def test_two_crashes_in_a_row_are_each_told(engine, demo):
    async with opened(engine, demo.url("/login.html")) as session:
        for _ in range(2):
            await crash(session)
            with pytest.raises(ActionError, match=r"^Pipeline error: the page crashed; it was reloaded"):
                await session.evaluate("1")
        assert await session.evaluate("1") == 1


async def test_a_crash_in_one_session_leaves_the_other_alone(engine, demo):
    async with (
        opened(engine, demo.url("/login.html")) as crashed,
        opened(engine, demo.url("/login.html")) as other,
    ):
        await other.type_text(eid(other, "email"), TYPED)
        await crash(crashed)
        await other.type_text(eid(other, "email"), "+more", append=True)
        assert await other.evaluate("document.querySelector('#email').value") == TYPED + "+more"
        with pytest.raises(ActionError, match=r"^Pipeline error: the page crashed"):
            await crashed.evaluate("1")


async def test_the_refusal_comes_before_the_element_checks(engine, demo):
    async with opened(engine, demo.url("/login.html")) as session:
        await crash(session)
        with pytest.raises(ActionError, match=r"^Pipeline error: the page crashed"):
            await session.click("e_000000000000")
        with pytest.raises(ActionError, match=r"^Element not found: e_000000000000$"):
            await session.click("e_000000000000")


# ----- through the dispatcher: reading tools, the trace, replay execution ------------------------


async def test_reading_tools_cookies_and_close_work_after_a_crash(engine, demo):
    dispatcher = Dispatcher(engine)
    opened = await ok(dispatcher, "open_page", url=demo.url("/login.html"), trace=True)
    sid = opened["session_id"]
    await crash(engine.get(sid))
    assert (await ok(dispatcher, "page_som", session_id=sid))["regions"] == opened["regions"]
    await ok(dispatcher, "trace_status", session_id=sid)
    await ok(
        dispatcher, "set_cookies", session_id=sid, cookies=[{"name": "n", "value": "1", "url": demo.base_url}]
    )
    assert [c["name"] for c in (await ok(dispatcher, "get_cookies", session_id=sid))["cookies"]] == ["n"]
    closed = await ok(dispatcher, "close_page", session_id=sid)
    assert closed["final_trace"]["events"][-1]["action"] == "close_page"


async def test_the_refused_call_is_traced_as_an_error_and_the_chain_holds(engine, demo):
    dispatcher = Dispatcher(engine)
    opened = await ok(dispatcher, "open_page", url=demo.url("/login.html"), trace=True)
    sid = opened["session_id"]
    try:
        await ok(dispatcher, "type_text", session_id=sid, element_id=element_id(opened, "email"), text=TYPED)
        await crash(engine.get(sid))
        clicked = await dispatcher.call(
            "click", {"session_id": sid, "element_id": element_id(opened, "submit")}
        )
        assert clicked.is_error and clicked.text == RELOADED
        export = await ok(dispatcher, "trace_export", session_id=sid)
        typed, refused = export["events"][-2:]
        assert (refused["action"], refused["outcome"], refused["error_class"]) == (
            "click",
            "error",
            "operation",
        )
        assert refused["before"] == typed["after"] and refused["after"] != refused["before"]  # the reload
        assert audit(export).ok
    finally:
        await ok(dispatcher, "close_page", session_id=sid)


@pytest.mark.parametrize("when", ["between calls", "during a call"])
async def test_replay_execution_never_runs_on_a_crashed_page_and_replaces_nothing(engine, demo, when):
    """The proof compares the live page with the held state; a crashed page (reloaded or not yet)
    is not the page that state was read from. It is refused, and the chain of states stays whole."""
    dispatcher = Dispatcher(engine, replay_execution=True)
    opened = await ok(dispatcher, "open_page", url=demo.url("/login.html"), trace=True)
    sid = opened["session_id"]
    session = engine.get(sid)
    try:
        await ok(dispatcher, "type_text", session_id=sid, element_id=element_id(opened, "email"), text=TYPED)
        await ok(dispatcher, "scroll", session_id=sid, direction="down", pixels=0)  # sequence 3
        if when == "during a call":
            call = dispatcher.call("evaluate", {"session_id": sid, "expression": WAIT_FOREVER})
            waiting = await waiting_on_the_page(session, call)
            await crash(session)
            assert (await waiting).is_error
        else:
            await crash(session)
        held = session.page_state()
        trace_id = (await ok(dispatcher, "trace_status", session_id=sid))["trace_id"]
        replayed = await dispatcher.call(
            "replay_execute", {"session_id": sid, "trace_id": trace_id, "sequence": 3, "confirmed": True}
        )
        assert replayed.is_error and "state_drift" in replayed.text, replayed.text
        assert session.page_state() == held
        clicked = await dispatcher.call(
            "click", {"session_id": sid, "element_id": element_id(opened, "submit")}
        )
        assert clicked.is_error and clicked.text == RELOADED
        report = audit(await ok(dispatcher, "trace_export", session_id=sid))
        assert report.ok, report.summary()
    finally:
        await ok(dispatcher, "close_page", session_id=sid)


async def test_a_notebook_reader_is_told_what_to_do_and_it_works(engine, demo):
    s = AsyncSession(InProcessTransport(Dispatcher(engine)))
    page = await s.open(demo.url("/login.html"))
    try:
        await s.type_text(page.find(label="Email"), TYPED)
        assert s.session_id is not None
        await crash(engine.get(s.session_id))
        with pytest.raises(ToolError) as refused:
            await s.click(page.find(role="button", text="Sign in"))
        assert refused.value.message == RELOADED
        assert refused.value.hint is not None and "s.scroll('down', 0)" in refused.value.hint
        fresh = await s.scroll("down", 0)  # what the hint says
        assert TYPED not in json.dumps(fresh.regions)
        await s.click(fresh.find(role="button", text="Sign in"))
    finally:
        await s.close()
