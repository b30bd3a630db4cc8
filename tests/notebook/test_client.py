"""The tool contract as the notebook layer relies on it (docs/contract.md#answers, docs/contract.md#trace-envelopes)."""

from __future__ import annotations

import pytest

from plasmate_nb.client.base import CallListeners, ToolError, Transport, parse_payload
from plasmate_nb.notebook import load_trace


def test_tool_error_carries_tool_and_message() -> None:
    error = ToolError("click", "Element not found: e_1")
    assert (error.tool, error.message, str(error)) == (
        "click",
        "Element not found: e_1",
        "Element not found: e_1",
    )
    assert isinstance(error, Exception)


def test_parse_payload_json_or_text() -> None:
    assert parse_payload('{"a":1}') == {"a": 1}
    assert parse_payload("plain text") == "plain text"


def test_listeners_survive_a_broken_observer() -> None:
    listeners, seen = CallListeners(), []

    def broken(session_id: str | None, tool: str) -> None:
        raise RuntimeError("observer bug")

    listeners.add(broken)
    unsubscribe = listeners.add(lambda sid, tool: seen.append((sid, tool)))
    listeners.notify("s1", "click")
    unsubscribe()
    listeners.notify("s1", "scroll")
    assert seen == [("s1", "click")]


async def test_transport_protocol_and_payload_shapes(transport: Transport, login_url: str) -> None:
    assert isinstance(transport, Transport)
    seen: list[tuple[str | None, str]] = []
    unsubscribe = transport.subscribe(lambda sid, tool: seen.append((sid, tool)))
    opened = await transport.call("open_page", {"url": login_url, "trace": True})
    assert {"session_id", "regions", "title", "url"} <= set(opened)
    sid = opened["session_id"]
    status = await transport.call("trace_status", {"session_id": sid})
    assert list(status) == [
        "schema", "enabled", "trace_id", "retained_events", "retained_bytes", "max_events", "max_bytes",
        "next_sequence", "evicted_events", "oversized_events", "cleared_events", "retention",
    ]  # fmt: skip
    assert (status["enabled"], status["retained_events"], status["next_sequence"]) == (True, 1, 2)
    scrolled = await transport.call("scroll", {"session_id": sid, "pixels": 120})
    assert "scroll_position" in scrolled
    with pytest.raises(ToolError, match=r"^Element not found: e_nope$"):
        await transport.call("click", {"session_id": sid, "element_id": "e_nope"})
    with pytest.raises(ToolError, match="Invalid arguments: unknown field"):
        await transport.call("trace_export", {"session_id": sid, "bogus": 1})
    export = await transport.call("trace_export", {"session_id": sid})
    assert [e["action"] for e in export["events"]] == ["open_page", "scroll", "click"]
    assert export["events"][2]["error_class"] == "not_found"
    load_trace(export)  # a genuine export passes the shipped schema
    closed = await transport.call("close_page", {"session_id": sid})
    assert closed["closed"] is True and closed["final_trace"]["events"][-1]["action"] == "close_page"
    unsubscribe()
    assert seen[0] == (None, "open_page")
    assert (sid, "scroll") in seen and (sid, "close_page") in seen
    with pytest.raises(ToolError, match=f"^Session not found: {sid}$"):
        await transport.call("trace_status", {"session_id": sid})
