"""Session / AsyncSession over the tool contract: pages, find, actions, close, attach."""

from __future__ import annotations

import pandas as pd
import pytest

import plasmate_nb.notebook as nb
from plasmate_nb.client.base import ToolError, Transport
from tests.support import DelegatingTransport


def test_sync_session_flow(transport: Transport, login_url: str) -> None:
    with nb.Session(transport) as s:
        page = s.open(login_url)
        assert isinstance(page, nb.Page) and page.title == "Sign in" and s.page is page
        assert s.session_id and s.trace_id and s.trace_id != s.session_id
        assert list(page.elements.columns) == ["id", "role", "label", "text", "actions", "region"]
        email = page.find(label="email")  # case-insensitive exact
        assert isinstance(email, nb.Element) and email.role == "text_input"
        assert isinstance(s.type_text(email, "alice@example.com"), nb.Page)
        s.type_text(email.id, "-x", append=True)  # ids are accepted as plain strings too
        s.select_option(page.find(label="Plan"), "team")
        s.toggle(page.find(role="checkbox", label="remember me"))
        s.clear(email)
        assert s.evaluate("document.getElementById('email').value") in ("", None)
        s.type_text(email, "alice@example.com")  # the form requires both fields to submit
        s.type_text(page.find(label="Password"), "pw-typed-in-test")
        scrolled = s.scroll("down", 200)
        assert scrolled.scroll_position is not None
        s.scroll(element_id=page.find(role="button", text="Sign in"))
        assert s.evaluate("document.title") == "Sign in"
        welcome = s.click(page.find(role="button", text="Sign in"))
        assert welcome.title == "Welcome" and s.page is welcome
        s.navigate(login_url)
        status = s.trace.status()
        assert (
            isinstance(status, nb.TraceStatus) and status.retained_events == 14 and status.next_sequence == 15
        )
        events = s.trace.events(columns="all")
        assert events["action"].tolist() == [
            "open_page", "type_text", "type_text", "select_option", "toggle", "clear", "evaluate", "type_text",
            "type_text", "scroll", "scroll", "evaluate", "click", "navigate_to",
        ]  # fmt: skip
        assert events["append"].tolist()[1:3] == [False, True]
        assert events["targeted"].tolist()[9:11] == [False, True]
        final = s.close()
    assert isinstance(final, nb.TraceExport) and final.events()["action"].iloc[-1] == "close_page"
    assert s.session_id is None


def test_find_errors_are_lookup_errors_with_near_matches(transport: Transport, login_url: str) -> None:
    with nb.Session(transport) as s:
        page = s.open(login_url)
        with pytest.raises(nb.ElementNotFound) as missing:
            page.find(label="Pasword")
        assert isinstance(missing.value, LookupError) and "Password" in str(missing.value)
        with pytest.raises(nb.AmbiguousElement) as ambiguous:
            page.find(role="text_input")
        assert isinstance(ambiguous.value, LookupError) and len(ambiguous.value.matches) == 2
        assert page.find(label="pass", contains=True).label == "Password"
        assert page.find(text="sign", contains=True, role="button").role == "button"
        with pytest.raises(TypeError):
            page.find()


def test_tool_errors_surface_as_tool_error(transport: Transport, login_url: str) -> None:
    with nb.Session(transport) as s:
        s.open(login_url)
        with pytest.raises(ToolError) as missing:
            s.click("e_missing")
        assert str(missing.value) == "Element not found: e_missing"  # the contract's text; the hint is a note
        with pytest.raises(RuntimeError, match="already has an open browser session"):
            s.open(login_url)
        assert s.trace.events()["outcome"].tolist()[-1] == "error"
    with pytest.raises(RuntimeError, match="no open browser session"):
        s.trace.status()


def test_untraced_session_has_no_final_trace(transport: Transport, login_url: str) -> None:
    s = nb.Session(transport)
    s.open(login_url, trace=False)
    s.scroll()
    assert s.trace.status().enabled is False and s.trace.events().empty
    assert s.close() is None


def test_close_again_returns_the_last_final_trace(transport: Transport, login_url: str) -> None:
    s = nb.Session(transport)
    assert s.close() is None  # never opened: nothing to close, and no error
    with pytest.raises(ToolError):
        s.open("http://127.0.0.1:1/")  # nothing listens there: nothing was opened
    assert s.close() is None
    s.open(login_url)
    final = s.close()
    assert isinstance(final, nb.TraceExport)
    assert s.close() is final and s.final_trace is final  # as Python's close() methods: idempotent
    with s:
        pass  # leaving a with block after close() is fine too
    assert s.close() is final


async def test_async_close_can_be_called_again(transport: Transport, login_url: str) -> None:
    async with nb.AsyncSession(transport) as s:
        assert await s.close() is None
        await s.open(login_url)
        final = await s.close()
        assert await s.close() is final
    assert s.final_trace is final and await s.close() is final


def test_cookies_are_readable_but_never_displayed(transport: Transport, login_url: str) -> None:
    with nb.Session(transport) as s:
        s.open(login_url)
        assert s.set_cookies([{"name": "sid", "value": "v4lue-cookie", "domain": "127.0.0.1"}]) == 1
        cookies = s.cookies()
        assert isinstance(cookies, nb.Cookies) and len(cookies) == 1 and cookies[0]["value"] == "v4lue-cookie"
        assert "v4lue-cookie" not in repr(cookies) + cookies._repr_html_() and "sid" not in repr(cookies)
        assert s.clear_cookies(name="sid") == 1 and len(s.cookies()) == 0
        row = s.trace.events(columns="all").iloc[-2]
        assert (row["action"], row["cookie_count"], row["redacted_fields"]) == ("set_cookies", 1, "cookies")


def test_trace_clear_keeps_sequence(transport: Transport, login_url: str) -> None:
    with nb.Session(transport) as s:
        s.open(login_url)
        s.scroll()
        cleared = s.trace.clear()
        assert isinstance(cleared, nb.TraceCleared) and cleared.cleared_events == 2
        assert cleared.status.retained_events == 0 and cleared.status.next_sequence == 3
        s.scroll()
        export = s.trace.export()
        assert export.cleared_events == 2 and export.events()["sequence"].tolist() == [3]


async def test_sync_session_works_inside_a_running_event_loop(transport: Transport, login_url: str) -> None:
    s = nb.Session(transport)  # this test body runs inside pytest-asyncio's loop
    page = s.open(login_url)
    s.click(page.find(role="link", text="Welcome"))
    assert s.page.title == "Welcome"
    assert isinstance(s.close(), nb.TraceExport)


async def test_async_session_flow(transport: Transport, login_url: str) -> None:
    async with nb.AsyncSession(transport) as s:
        page = await s.open(login_url)
        await s.type_text(page.find(label="Email"), "bob@example.com")
        status = await s.trace.status()
        assert status.retained_events == 2
        events = await s.trace.events()
        assert isinstance(events, pd.DataFrame) and events["redacted_bytes"].tolist()[1] == len(
            "bob@example.com"
        )
        plan = await s.replay_validate(2)
        assert isinstance(plan, nb.ReplayPlan) and plan.execution_available is False
        dashboard = await s.trace.dashboard()
        assert dashboard.get_state()["events_gauge"]["value"] == 2
    assert s.session_id is None and isinstance(s.final_trace, nb.TraceExport)


async def test_attach_reads_trace_id_and_does_not_close_on_exit(transport: Transport, login_url: str) -> None:
    opened = await transport.call("open_page", {"url": login_url, "trace": True})  # "an external agent"
    sid = opened["session_id"]
    with nb.attach(sid, transport) as watcher:
        assert watcher.session_id == sid
        assert watcher.trace_id == (await transport.call("trace_status", {"session_id": sid}))["trace_id"]
        watcher.scroll()
    assert (await transport.call("trace_status", {"session_id": sid}))["retained_events"] == 2
    async with await nb.AsyncSession.attach(sid, transport) as async_watcher:
        assert async_watcher.trace_id == watcher.trace_id
    final = nb.Session.attach(sid, transport).close()
    assert isinstance(final, nb.TraceExport) and final.session_id == sid


def test_connect_needs_exactly_one_target() -> None:
    with pytest.raises(TypeError):
        nb.AsyncSession.connect()
    with pytest.raises(TypeError):
        nb.AsyncSession.connect("http://127.0.0.1:1/mcp", command=["x"])


class _OmittingTransport(DelegatingTransport):
    """A server whose final trace exceeded the 64 KiB ceiling (reachable with the reference engine)."""

    async def call(self, tool: str, arguments: dict) -> object:
        payload = await self.inner.call(tool, arguments)
        if tool == "close_page":
            payload["final_trace"] = {
                "schema": "plasmate.trace.v1", "omitted": True,
                "reason": "bounded final trace export exceeded the MCP response ceiling",
            }  # fmt: skip
        return payload


def test_omitted_final_trace_is_a_clear_object(transport: Transport, login_url: str) -> None:
    s = nb.Session(_OmittingTransport(transport))
    s.open(login_url)
    final = s.close()
    assert isinstance(final, nb.FinalTraceOmitted) and not final
    assert "exceeded the MCP response ceiling" in repr(final) and "s.trace.export()" in final._repr_html_()


def test_reprs_of_page_and_trace_objects(transport: Transport, login_url: str) -> None:
    with nb.Session(transport) as s:
        page = s.open(login_url)
        assert (
            "Sign in" in page._repr_html_() and "<table>" in page._repr_html_() and "Password" in repr(page)
        )
        status = s.trace.status()
        assert (
            "128" in status._repr_html_()
            and "49,152" in status._repr_html_()
            and "events=1/128" in repr(status)
        )
        export = s.trace.export()
        assert export.trace_id in repr(export) and "open_page" in export._repr_html_()
        assert export.counters == {
            "retained_events": 1, "retained_bytes": export.retained_bytes, "next_sequence": 2,
            "evicted_events": 0, "oversized_events": 0, "cleared_events": 0,
        }  # fmt: skip
