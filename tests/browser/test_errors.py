"""The reference's error strings (docs/contract.md#messages-the-engine-produces) in their check order, and failures that keep state."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Error as PlaywrightError

from plasmate_nb import errors
from plasmate_nb.browser import ActionError, BrowserSession, Engine, EngineConfig, EngineError
from plasmate_nb.trace import TraceLog
from tests.browser.conftest import attrs, eid, element
from tests.support import wait_until
from tests.tools.local_http import Answer, scripted

CONFIG = EngineConfig(navigation_timeout=10, action_timeout=2, evaluate_timeout=2, settle_timeout=1)
UNKNOWN = "e_ffffffffffff"
ELEMENT_ACTIONS = {
    "click": lambda s, i: s.click(i),
    "type_text": lambda s, i: s.type_text(i, "text"),
    "select_option": lambda s, i: s.select_option(i, "m"),
    "scroll": lambda s, i: s.scroll(element_id=i),
    "toggle": lambda s, i: s.toggle(i),
    "clear": lambda s, i: s.clear(i),
}
PAGE_ACTIONS = {
    **ELEMENT_ACTIONS,
    "evaluate": lambda s, i: s.evaluate("1"),
    "page_scroll": lambda s, i: s.scroll(),
}


@pytest_asyncio.fixture(scope="module")
async def engine() -> AsyncIterator[Engine]:
    async with Engine(CONFIG) as running:
        yield running


@pytest_asyncio.fixture
async def kinds(engine, fixture_server):
    session = await engine.open(f"{fixture_server}/browser/kinds.html")
    yield session
    await engine.close_session(session.id)


def message(info: pytest.ExceptionInfo[BaseException]) -> str:
    return str(info.value)


async def test_unknown_session(engine):
    with pytest.raises(EngineError) as info:
        engine.get("nope")
    assert message(info) == "Session not found: nope"
    with pytest.raises(EngineError, match=r"^Session not found: nope$"):
        await engine.close_session("nope")


@pytest.mark.parametrize("action", sorted(PAGE_ACTIONS))
async def test_no_page_loaded_comes_before_element_checks(engine, action):
    # A session whose open has not navigated yet (the window docs/contract.md#browser-engine leaves before the first page).
    context = await engine._new_context()
    session = BrowserSession(
        session_id="s",
        trace=TraceLog(enabled=False),
        context=context,
        config=engine.config,
        policy=engine.policy,
        gate=engine.gate,
    )
    try:
        await session.start_page()
        with pytest.raises(ActionError) as info:
            await PAGE_ACTIONS[action](session, UNKNOWN)
        assert message(info) == "No page loaded in session"
        assert session.page_state().url is None and session.page_state().som is None
    finally:
        await session.close()


@pytest.mark.parametrize("action", sorted(ELEMENT_ACTIONS))
async def test_unknown_element_id(kinds, action):
    with pytest.raises(ActionError) as info:
        await ELEMENT_ACTIONS[action](kinds, UNKNOWN)
    assert message(info) == f"Element not found: {UNKNOWN}"


async def test_type_into_a_non_typeable_element_is_checked_before_the_dom(kinds):
    button = eid(kinds, "plain")
    with pytest.raises(ActionError) as info:
        await kinds.type_text(button, "hello")
    assert message(info) == f"Element does not support type: {button}"


@pytest.mark.parametrize("action", sorted(ELEMENT_ACTIONS))
async def test_node_gone_from_the_dom(kinds, action):
    doomed = eid(kinds, "doomed")
    await kinds.click(eid(kinds, "vanish"))
    assert eid(kinds, "doomed") == doomed  # still in the latest SOM...
    # ...but the page removes the node 200 ms after the click.
    await kinds._page.wait_for_function("() => !document.getElementById('doomed')", timeout=10_000)
    with pytest.raises(ActionError) as info:
        await ELEMENT_ACTIONS[action](kinds, doomed)
    assert message(info) == "Element not found in DOM"


async def test_select_errors_in_order(kinds):
    with pytest.raises(ActionError) as info:
        await kinds.select_option(eid(kinds, "name"), "m")
    assert message(info) == "Element is not a <select>"
    with pytest.raises(ActionError) as info:
        await kinds.select_option(eid(kinds, "size"), "Huge secret size")
    assert message(info) == "Option not found: value of 16 bytes"  # never echoes the value
    await kinds.select_option(eid(kinds, "size"), "Large")
    assert attrs(kinds, "size").get("value") == "l"


async def test_toggle_on_a_wrong_kind(kinds):
    with pytest.raises(ActionError) as info:
        await kinds.toggle(eid(kinds, "name"))
    assert message(info) == "Element is not a checkbox, radio button, or details element"


async def test_failed_fetch_keeps_the_last_good_state(kinds, fixture_server):
    before_url, before_som = kinds.url, kinds.som.text
    with pytest.raises(ActionError) as info:
        await kinds.navigate("http://127.0.0.1:9/private/path?q=secret#frag")
    text = message(info)
    assert text.startswith("Failed to fetch http://127.0.0.1:9/…: Navigation failed: net::ERR_")
    assert "private" not in text and "secret" not in text
    assert (kinds.url, kinds.som.text) == (before_url, before_som)
    await kinds.type_text(eid(kinds, "name"), "still usable")
    assert attrs(kinds, "name").get("value") == "still usable"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9\\private\\path?q=secret",  # a browser reads "\\" as "/" in http(s) URLs
        "http://127.0.0.1:9\\/private/path?q=secret",
        "http://user:secret@127.0.0.1:9/private?q=secret",
        "http://127.0.0.1:9\t/priv\nate?q=secret",  # tabs and newlines are dropped, as a browser drops them
        "http://localhost\\private\\path?q=secret",
    ],
)
async def test_a_failed_fetch_names_only_the_origin_however_the_url_is_spelled(kinds, url):
    with pytest.raises(ActionError) as info:
        await kinds.navigate(url)
    text = message(info)
    where = "http://localhost/…" if "localhost" in url else "http://127.0.0.1:9/…"
    assert text.startswith(f"Failed to fetch {where}: "), text
    assert "priv" not in text.lower() and "secret" not in text


@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_a_script_navigation_to_an_unreachable_host_fails_the_action(kinds, scheme, unused_tcp_port):
    before = (kinds.url, kinds.som.text)
    with pytest.raises(ActionError) as info:
        await kinds.evaluate(f"location.href = '{scheme}://127.0.0.1:{unused_tcp_port}/private?q=secret'")
    refused = (
        "ERR_CONNECTION_REFUSED" if scheme == "http" else "ERR_TUNNEL_CONNECTION_FAILED"
    )  # through the gate
    assert message(info) == f"Navigation failed: net::{refused}"
    assert (kinds.url, kinds.som.text) == before


async def test_a_navigation_the_browser_refuses_itself_fails_the_action(kinds):
    # Port 9 is on Chromium's list of unsafe ports: the request fails before it reaches the gate.
    before = (kinds.url, kinds.som.text)
    with pytest.raises(ActionError) as info:
        await kinds.evaluate("location.href = 'http://127.0.0.1:9/private?q=secret'")
    assert message(info) == "Navigation failed: net::ERR_UNSAFE_PORT"
    assert (kinds.url, kinds.som.text) == before
    assert await kinds.evaluate("location.pathname") == "/browser/kinds.html"


BLOB_PAGE = "URL.createObjectURL(new Blob(['<p>Blob page</p>'], {type: 'text/html'}))"


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("'about:srcdoc'", "net::ERR_FAILED"),  # Chromium shows its error page (chrome-error:)
        (
            "'about:version'",
            "Outbound URL blocked: outbound URL scheme 'about' is not allowed",
        ),  # about:blank#blocked
        (BLOB_PAGE, "Outbound URL blocked: outbound URL scheme 'blob' is not allowed"),
    ],
)
async def test_a_page_that_leaves_for_a_non_web_url_fails_the_action(kinds, target, reason):
    # No request is made, so nothing fails on the way; the session keeps only http(s) pages (the
    # last good one must be one it can go back to).
    before = (kinds.url, kinds.som.text)
    with pytest.raises(ActionError) as info:
        await kinds.evaluate(f"location.href = {target}")
    assert message(info).startswith(f"Navigation failed: {reason}")
    assert (kinds.url, kinds.som.text) == before
    assert await kinds.evaluate("location.pathname") == "/browser/kinds.html"


async def test_a_page_that_failed_to_navigate_between_actions_fails_the_next_one(kinds):
    # The page moves on its own between two calls (as a timer would; sent past the session, so
    # no call's settle can see it on a slow machine) to a destination that fails; the next
    # action must not take Chromium's error page for the session's page.
    before = (kinds.url, kinds.som.text)
    with contextlib.suppress(PlaywrightError):  # the navigation may cut the evaluate short
        await kinds._page.evaluate("location.href = 'http://127.0.0.1:9/private?q=secret'")
    await wait_until(lambda: kinds._page.url.startswith("chrome-error:"), what="the error page")
    with pytest.raises(ActionError) as info:
        await kinds.scroll()
    assert message(info) == "Navigation failed: net::ERR_UNSAFE_PORT"
    assert (kinds.url, kinds.som.text) == before
    assert await kinds.evaluate("location.pathname") == "/browser/kinds.html"


@pytest.mark.parametrize("where", ["/faults/no-content", "/faults/download", "mailto:someone@example.test"])
async def test_a_navigation_the_browser_drops_is_no_failure(kinds, demo, where):
    # A 204, a download and an external scheme end the navigation (net::ERR_ABORTED): the page stays.
    before = kinds.url
    target = demo.url(where) if where.startswith("/") else where
    await kinds.evaluate(f"location.href = {json.dumps(target)}")
    assert kinds.url == before
    assert await kinds.evaluate("location.pathname") == "/browser/kinds.html"


async def test_http_error_and_redirect_loop(kinds, demo):
    with pytest.raises(ActionError, match=r"^Failed to fetch http://127\.0\.0\.1:\d+/…: HTTP error 500: "):
        await kinds.navigate(demo.url("/faults/500"))
    with pytest.raises(ActionError, match="ERR_TOO_MANY_REDIRECTS"):
        await kinds.navigate(demo.url("/faults/redirect-loop"))
    assert kinds.url.endswith("/browser/kinds.html")
    assert await kinds.evaluate("location.pathname") == "/browser/kinds.html"


@pytest.mark.parametrize("status", [404, 500])
async def test_an_http_error_with_no_body_is_named_by_its_status(kinds, status):
    """Chromium shows its own error page for an error status with an empty body (APIs and CDNs
    send those) and reports ``net::ERR_HTTP_RESPONSE_CODE_FAILURE``; the site's answer is the status."""
    before = (kinds.url, kinds.som.text)
    with scripted({"/empty": Answer(status, b"", content_type=None)}) as server:
        with pytest.raises(ActionError) as info:
            await kinds.navigate(server.url("/empty"))
        origin = server.url("/").rstrip("/")
        assert message(info) == f"Failed to fetch {origin}/…: HTTP error {status}: {origin}/…"
        # The page's own navigation there (a link, a script) is named alike.
        with pytest.raises(ActionError) as by_page:
            await kinds.evaluate(f"location.href = {json.dumps(server.url('/empty'))}")
        assert message(by_page) == f"Navigation failed: HTTP error {status}: {origin}/…"
    assert (kinds.url, kinds.som.text) == before


async def test_typed_text_never_in_error_messages(kinds):
    # role=textbox makes a typeable SOM element, but Playwright refuses to fill a plain <div>.
    with pytest.raises(ActionError) as info:
        await kinds.type_text(eid(kinds, "fake"), "top-secret-typed")
    assert message(info).startswith("Type failed: ")
    assert "top-secret-typed" not in message(info)


async def test_evaluate_exception_is_an_action_error(kinds):
    # docs/contract.md#javascript-exceptions-in-evaluate: the reference's containment JSON, no source echoed.
    with pytest.raises(ActionError) as info:
        await kinds.evaluate("nosuchname.x")
    assert message(info) == errors.evaluate_javascript_error("ReferenceError: … is not defined")
    assert "nosuchname" not in message(info)
    assert await kinds.evaluate("1 + 1") == 2


async def test_link_to_an_http_error_fails_and_keeps_the_page(engine, demo):
    session = await engine.open(demo.url("/index.html"))
    try:
        before = (session.url, session.som.text)
        with pytest.raises(ActionError) as info:
            await session.click(element(session, role="link", text="Server error")["id"])
        assert re.fullmatch(r"Navigation failed: HTTP error 500: http://127\.0\.0\.1:\d+/…", str(info.value))
        assert (session.url, session.som.text) == before
        assert await session.evaluate("location.pathname") == "/index.html"
    finally:
        await engine.close_session(session.id)
