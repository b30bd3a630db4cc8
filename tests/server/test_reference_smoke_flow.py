"""The reference's own end-to-end smoke flow, in our words, against ``plasmate-nb mcp`` on stdio.

Raw newline-delimited JSON-RPC at protocol 2024-11-05, as the reference's smoke script speaks
it, over the bundled demo site: initialize, tools/list, fetch_page, extract_text, a traced
open_page, evaluate, a click that navigates, the trace tools, replay_validate refused after the
page drifted, and close_page with its final_trace. The one difference allowed from the
reference is ``serverInfo.name`` (``plasmate-nb``; docs/contract.md#the-mcp-server).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.raw_jsonrpc import LEGACY, RawStdio, sorted_everywhere
from tests.support import REFERENCE_TOOLS

SCRIPT = Path(sys.executable).with_name("plasmate-nb")
# The reference's catalogue: the same 26 names (our order is the catalogue's own).


@pytest.fixture(scope="module")
def mcp() -> Iterator[RawStdio]:
    """The installed ``plasmate-nb mcp`` command, as an MCP client configuration starts it."""
    command = [str(SCRIPT), "mcp", "--allow-private-network"] if SCRIPT.exists() else None
    with RawStdio(command=command) as server:
        yield server


def _elements(node: Any) -> Iterator[dict[str, Any]]:
    """Every SOM element under ``node`` (regions, elements, children, shadow roots)."""
    if isinstance(node, dict):
        if "role" in node and "id" in node and str(node["id"]).startswith("e_"):
            yield node
        for key in ("regions", "elements", "children"):
            for child in node.get(key) or []:
                yield from _elements(child)
        if isinstance(node.get("shadow"), dict):
            for child in node["shadow"].get("elements") or []:
                yield from _elements(child)


def _link(page: dict[str, Any], text: str) -> str:
    found = [
        element["id"]
        for element in _elements(page)
        if element["role"] == "link" and element.get("text") == text
    ]
    assert found, f"no link {text!r} in the page model"
    return found[0]


def test_the_reference_smoke_flow(mcp: RawStdio, demo) -> None:
    # 1. initialize: the server names itself and offers tools; then the initialized notification.
    initialized = mcp.initialize(LEGACY)
    assert initialized["protocolVersion"] == LEGACY
    assert initialized["serverInfo"]["name"] == "plasmate-nb"  # the reference says "plasmate"
    assert "tools" in initialized["capabilities"]

    # tools/list: the reference's 26 tools in its order, legacy shape, then our documented page_som.
    listed = mcp.request("tools/list")["result"]["tools"]
    assert [tool["name"] for tool in listed] == [*REFERENCE_TOOLS, "page_som"]

    # 2. fetch_page: the page model, with regions and elements.
    page = mcp.payload("fetch_page", {"url": demo.url("/index.html")})
    assert page["title"] == "plasmate_nb demo site"
    assert page["regions"] and any(region.get("elements") for region in page["regions"])

    # 3. extract_text: the page's plain text (the reference's smoke flow fails without this tool).
    extracted = mcp.call("extract_text", {"url": demo.url("/index.html")})
    assert not extracted.get("isError"), extracted
    assert "Small local pages for trying browser sessions" in extracted["content"][0]["text"]

    # 4. open_page, traced.
    opened = mcp.payload("open_page", {"url": demo.url("/login.html"), "trace": True})
    sid = opened["session_id"]
    assert sid and opened["title"] == "Sign in"

    # 5. evaluate.
    assert mcp.payload("evaluate", {"session_id": sid, "expression": "document.title"}) == {
        "result": "Sign in"
    }

    # 6. a click that navigates.
    clicked = mcp.payload("click", {"session_id": sid, "element_id": _link(opened, "Welcome")})
    assert "welcome.html" in clicked["url"] and clicked["title"] != "Sign in"

    # 7. the trace: status, export, and a replay check that is refused now the page has moved on.
    status = mcp.payload("trace_status", {"session_id": sid})
    assert status["enabled"] is True and status["retained_events"] >= 3
    export_text = mcp.call("trace_export", {"session_id": sid})["content"][0]["text"]
    export = json.loads(export_text)
    assert export["schema"] == "plasmate.trace.v1" and "document.title" not in export_text
    click = [event for event in export["events"] if event["action"] == "click"]
    assert click
    replay = mcp.payload(
        "replay_validate",
        {
            "session_id": sid,
            "trace_id": export["trace_id"],
            "sequence": click[0]["sequence"],
            "confirmed": True,
        },
    )
    assert replay["status"] == "refused" and replay["side_effects"] is False
    assert replay["execution_available"] is False

    # 8. close_page answers with the final trace, its close_page event last.
    closed_text = mcp.call("close_page", {"session_id": sid})["content"][0]["text"]
    closed = json.loads(closed_text)
    assert closed["closed"] is True and closed["final_trace"]["events"][-1]["action"] == "close_page"

    # The whole answer is sorted at every level, as the reference serialises it; sizes are unchanged.
    final = closed["final_trace"]
    assert sorted_everywhere(closed)
    assert (
        final["events"][:-1] == export["events"] and final["retained_events"] == export["retained_events"] + 1
    )
    close_event_bytes = _compact_len(final["events"][-1])
    assert final["retained_bytes"] == export["retained_bytes"] + close_event_bytes
    assert final["retained_bytes"] == sum(_compact_len(event) for event in final["events"])
    assert _compact_len(final) == _compact_len(_unsorted_like(final, export))


def _compact_len(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def _unsorted_like(final: dict[str, Any], export: dict[str, Any]) -> dict[str, Any]:
    """``final`` with its top level in the export's field order (the order before sorting)."""
    return {key: final[key] for key in export}
