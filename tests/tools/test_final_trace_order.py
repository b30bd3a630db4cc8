"""close_page's answer is serialised with sorted keys at every level, final_trace's events included
(docs/contract.md#trace-envelopes), and the sorting changes no byte count of the trace."""

from __future__ import annotations

import json

from plasmate_nb.tools import Dispatcher, ToolResult
from plasmate_nb.trace import PageState, TraceLog, compact_json
from plasmate_nb.trace.compact import utf8_len

SOM = {
    "title": "Sign in",
    "regions": [
        {
            "id": "r_main",
            "role": "main",
            "elements": [
                {
                    "id": "e_0123456789ab",
                    "role": "link",
                    "text": "Welcome",
                    "actions": ["click"],
                    "attrs": {"href": "/w"},
                }
            ],
        }
    ],
}


def _sorted_everywhere(value: object) -> bool:
    if isinstance(value, dict):
        return list(value) == sorted(value) and all(_sorted_everywhere(item) for item in value.values())
    if isinstance(value, list):
        return all(_sorted_everywhere(item) for item in value)
    return True


def test_final_trace_is_sorted_at_every_level_and_keeps_its_sizes() -> None:
    log = TraceLog(enabled=True)
    page = PageState("http://127.0.0.1:8000/login.html", None, SOM)
    log.record(
        "open_page",
        {"origin": "http://127.0.0.1:8000", "url_fingerprint": None},
        None,
        log.closed_state(),
        log.state(page),
        None,
        3,
    )
    log.record("click", {}, log.target(page, "e_0123456789ab"), log.state(page), log.state(page), None, 2)
    detached = log.detached_copy()
    detached.record("close_page", {}, None, log.state(page), detached.closed_state(), None, 1)
    unsorted = {"closed": True, "final_trace": detached.final_export("s-1"), "session_id": "s-1"}

    answer = Dispatcher._with_final_trace(
        ToolResult.payload({"closed": True, "session_id": "s-1"}), detached, "s-1"
    )

    payload = json.loads(answer.text)
    assert _sorted_everywhere(payload) and payload == unsorted
    assert list(unsorted["final_trace"]) != sorted(unsorted["final_trace"])  # the export's own order differs
    assert utf8_len(answer.text) == utf8_len(compact_json(unsorted))
    final = payload["final_trace"]
    assert [event["action"] for event in final["events"]] == ["open_page", "click", "close_page"]
    assert final["retained_bytes"] == sum(utf8_len(compact_json(event)) for event in final["events"])


def test_an_error_close_is_left_as_it_is() -> None:
    error = ToolResult.error("Session not found: s-1")
    assert Dispatcher._with_final_trace(error, TraceLog(enabled=True), "s-1") is error
