"""The traced dispatcher against the real engine on the demo site (docs/contract.md#how-a-call-becomes-an-event)."""

from __future__ import annotations

import asyncio
import itertools
import json

from plasmate_nb.tools import TOOLS, Dispatcher
from plasmate_nb.trace import MAX_EXPORT_BYTES, compact_json
from tests.support import Caller, element_id

SECRET = "hunter2-Sup3rSecret"


async def test_reference_smoke_scenario(call: Caller, demo) -> None:
    opened = await call.ok("open_page", url=demo.url("/index.html"), trace=True)
    sid = opened["session_id"]
    assert opened["title"] == "plasmate_nb demo site"
    assert (await call.ok("evaluate", session_id=sid, expression="document.title")) == {
        "result": "plasmate_nb demo site"
    }
    clicked = await call.ok("click", session_id=sid, element_id=element_id(opened, "link", "Sign in form"))
    assert "login" in clicked["url"] and clicked["title"] == "Sign in"

    status = await call.ok("trace_status", session_id=sid)
    assert status["enabled"] is True and status["retained_events"] >= 3
    export = await call.export(sid)
    assert export["schema"] == "plasmate.trace.v1"
    assert "document.title" not in compact_json(export)
    click = next(event for event in export["events"] if event["action"] == "click")

    plan = await call.ok(
        "replay_validate",
        session_id=sid,
        trace_id=status["trace_id"],
        sequence=click["sequence"],
        confirmed=True,
    )
    assert plan["status"] == "refused" and plan["drift"] == "page_drift"
    assert plan["side_effects"] is False and plan["execution_available"] is False

    closed = await call.ok("close_page", session_id=sid)
    assert closed["closed"] is True
    assert closed["final_trace"]["events"][-1]["action"] == "close_page"
    assert closed["final_trace"]["events"][-1]["after"]["has_page"] is False


async def test_open_page_is_sequence_one_with_a_closed_before(call: Caller, demo) -> None:
    sid = (await call.ok("open_page", url=demo.url("/login.html"), trace=True))["session_id"]
    first = (await call.export(sid))["events"][0]
    assert first["sequence"] == 1 and first["action"] == "open_page"
    assert first["before"]["has_page"] is False and first["before"]["origin"] is None
    assert first["after"]["origin"] == demo.base_url and first["after"]["has_page"] is True
    assert first["parameters"]["origin"] == demo.base_url
    await call.ok("close_page", session_id=sid)


async def test_each_traced_failure_appends_exactly_one_event(call: Caller, demo) -> None:
    sid = (await call.ok("open_page", url=demo.url("/login.html"), trace=True))["session_id"]
    assert (
        await call.error("click", {"session_id": sid, "element_id": "missing"})
        == "Element not found: missing"
    )
    message = await call.error("type_text", {"session_id": sid, "element_id": "missing"})
    assert message.startswith("Invalid arguments: missing field `text`")
    events = (await call.export(sid))["events"]
    assert [(e["action"], e["outcome"], e.get("error_class")) for e in events[1:]] == [
        ("click", "error", "not_found"),
        ("type_text", "error", "invalid_input"),
    ]
    await call.ok("close_page", session_id=sid)


async def test_calls_on_unknown_sessions_leave_every_trace_alone(call: Caller, demo) -> None:
    sid = (await call.ok("open_page", url=demo.url("/login.html"), trace=True))["session_id"]
    before = await call.export(sid)
    assert await call.error("click", {"session_id": "nope", "element_id": "x"}) == "Session not found: nope"
    assert await call.error("trace_status", {"session_id": "nope"}) == "Session not found: nope"
    assert await call.error("navigate_to", {"session_id": 7, "url": "x"}) != ""
    # Arguments are parsed before the session is looked up, widths included (scroll.pixels: i32).
    assert await call.error("scroll", {"session_id": "nope", "pixels": 2**31}) == (
        "Invalid arguments: invalid value: integer, expected i32 for `pixels`"
    )
    assert await call.export(sid) == before
    await call.ok("close_page", session_id=sid)


async def test_open_page_never_writes_into_another_sessions_trace(call: Caller, demo) -> None:
    sid = (await call.ok("open_page", url=demo.url("/login.html"), trace=True))["session_id"]
    before = await call.export(sid)
    other = await call.ok("open_page", url=demo.url("/index.html"), trace=True, session_id=sid)
    assert await call.export(sid) == before
    assert (await call.ok("trace_status", session_id=other["session_id"]))["retained_events"] == 1
    for session in (sid, other["session_id"]):
        await call.ok("close_page", session_id=session)


async def test_trace_tools_reject_unknown_fields_and_long_handles(call: Caller, demo) -> None:
    sid = (await call.ok("open_page", url=demo.url("/login.html")))["session_id"]
    for tool in ("trace_status", "trace_export", "trace_clear"):
        assert "unknown field `unexpected`" in await call.error(tool, {"session_id": sid, "unexpected": 1})
        assert (
            await call.error(tool, {"session_id": "s" * 65})
            == "Invalid arguments: session_id exceeds 64 bytes"
        )
    long_trace = {"session_id": sid, "trace_id": "t" * 65, "sequence": 1}
    assert await call.error("replay_validate", long_trace) == (
        "Invalid arguments: session_id or trace_id exceeds 64 bytes"
    )
    assert "unknown field `bogus`" in await call.error(
        "replay_validate", {"session_id": sid, "trace_id": "t", "sequence": 1, "bogus": True}
    )
    await call.ok("close_page", session_id=sid)


async def test_untraced_sessions_report_disabled_and_close_without_final_trace(call: Caller, demo) -> None:
    sid = (await call.ok("open_page", url=demo.url("/login.html")))["session_id"]
    status = await call.ok("trace_status", session_id=sid)
    assert status["enabled"] is False and status["retained_events"] == 0 and status["next_sequence"] == 1
    await call.ok("scroll", session_id=sid)
    assert (await call.export(sid))["events"] == []
    assert "final_trace" not in await call.ok("close_page", session_id=sid)


async def test_form_actions_redact_values_and_keep_byte_lengths(call: Caller, demo) -> None:
    opened = await call.ok("open_page", url=demo.url("/login.html"), trace=True)
    sid = opened["session_id"]
    password = element_id(opened, "text_input", "Password")
    await call.ok("type_text", session_id=sid, element_id=password, text=SECRET)
    await call.ok("type_text", session_id=sid, element_id=password, text="x", append=True)
    await call.ok(
        "select_option", session_id=sid, element_id=element_id(opened, "select", "Plan"), value="Team"
    )
    await call.ok("toggle", session_id=sid, element_id=element_id(opened, "checkbox", "Remember me"))
    await call.ok("clear", session_id=sid, element_id=password)
    export = await call.export(sid)
    typed, appended, selected, toggled, cleared = export["events"][1:6]
    assert typed["parameters"] == {"append": False, "value": {"byte_length": len(SECRET), "redacted": True}}
    assert appended["parameters"]["append"] is True
    assert typed["redaction"]["redacted_fields"] == ["text"]
    assert selected["parameters"] == {"value": {"byte_length": 4, "redacted": True}}
    assert toggled["target"]["role"] == "checkbox" and cleared["target"]["role"] == "text_input"
    closed = await call.ok("close_page", session_id=sid)
    for document in (export, closed):
        assert SECRET not in compact_json(document) and "Team" not in compact_json(document)


async def test_coarse_events_for_evaluate_and_cookie_mutations(call: Caller, demo) -> None:
    sid = (await call.ok("open_page", url=demo.url("/login.html"), trace=True))["session_id"]
    await call.ok("evaluate", session_id=sid, expression=f"'{SECRET}'.length")
    cookie = {"name": "sid-cookie", "value": SECRET, "url": demo.base_url, "domain": "127.0.0.1"}
    assert (await call.ok("set_cookies", session_id=sid, cookies=[cookie]))["set"] == 1
    cookies = await call.ok("get_cookies", session_id=sid)
    assert cookies["count"] == 1 and cookies["cookies"][0]["value"] == SECRET
    assert (await call.ok("clear_cookies", session_id=sid, name="sid-cookie"))["cleared"] == 1
    events = (await call.export(sid))["events"]
    assert [e["action"] for e in events] == ["open_page", "evaluate", "set_cookies", "clear_cookies"]
    evaluate, set_cookies, clear_cookies = events[1:]
    assert evaluate["parameters"] == {} and evaluate["before"] == evaluate["after"]
    assert set_cookies["parameters"] == {"cookie_count": 1}
    assert clear_cookies["parameters"] == {"filter_present": True}
    assert SECRET not in compact_json(events) and "sid-cookie" not in compact_json(events)
    await call.ok("close_page", session_id=sid)


async def test_replay_of_an_unchanged_state_needs_confirmation_then_validates(call: Caller, demo) -> None:
    opened = await call.ok("open_page", url=demo.url("/login.html"), trace=True)
    sid = opened["session_id"]
    button = element_id(opened, "button", "Sign in")
    await call.ok("scroll", session_id=sid, element_id=button, pixels=0)
    status = await call.ok("trace_status", session_id=sid)
    request = {"session_id": sid, "trace_id": status["trace_id"], "sequence": 2}
    pending = await call.ok("replay_validate", **request)
    assert pending["status"] == "confirmation_required" and pending["drift"] is None
    assert pending["target"]["role"] == "button"
    validated = await call.ok("replay_validate", **request, confirmed=True)
    assert validated["status"] == "validated" and validated["execution_available"] is False
    recorded = (await call.export(sid))["events"][1]["target"]
    assert validated["target"] == recorded and validated["parameters"]["targeted"] is True
    refused = await call.ok("replay_validate", **{**request, "trace_id": "not-the-live-trace"})
    assert refused["drift"] == "cross_session" and "session_id" not in refused
    await call.ok("close_page", session_id=sid)


async def test_calls_on_one_session_never_interleave(call: Caller, demo) -> None:
    sid = (await call.ok("open_page", url=demo.url("/drift.html"), trace=True))["session_id"]
    await asyncio.gather(*(call.ok("scroll", session_id=sid, direction="down", pixels=5) for _ in range(8)))
    events = (await call.export(sid))["events"]
    assert [e["sequence"] for e in events] == list(range(1, 10))
    for previous, event in itertools.pairwise(events):
        assert event["before"] == previous["after"]
    await call.ok("close_page", session_id=sid)


async def test_capacity_error_and_recovery(demo) -> None:
    from plasmate_nb.browser import Engine, EngineConfig

    engine = Engine(EngineConfig(max_sessions=2))
    call = Caller(Dispatcher(engine))
    try:
        first = await call.ok("open_page", url=demo.url("/index.html"))
        await call.ok("open_page", url=demo.url("/index.html"))
        message = await call.error("open_page", {"url": demo.url("/index.html")})
        assert message == "Maximum sessions (2) reached. Close a session first."
        await call.ok("close_page", session_id=first["session_id"])
        await call.ok("open_page", url=demo.url("/index.html"))
    finally:
        await engine.aclose()


async def test_final_trace_is_bounded(call: Caller, demo) -> None:
    sid = (await call.ok("open_page", url=demo.url("/login.html"), trace=True))["session_id"]
    for _ in range(20):
        await call.ok("scroll", session_id=sid, direction="x" * 600)
    final = (await call.ok("close_page", session_id=sid))["final_trace"]
    assert len(compact_json(final).encode()) <= MAX_EXPORT_BYTES
    assert final["events"][-1]["action"] == "close_page"
    assert all(
        len(e["parameters"]["direction"].encode()) <= 512 for e in final["events"] if e["action"] == "scroll"
    )


async def test_session_status_fetch_page_and_unknown_tool(call: Caller, demo) -> None:
    sid = (await call.ok("open_page", url=demo.url("/login.html")))["session_id"]
    status = await call.ok("session_status")
    assert sid in [s["session_id"] for s in status["sessions"]]
    som = await call.ok("fetch_page", url=demo.url("/login.html"))
    assert som["title"] == "Sign in" and som["regions"]
    assert [s["session_id"] for s in (await call.ok("session_status"))["sessions"]].count(sid) == 1
    forms = await call.ok("fetch_page", url=demo.url("/login.html"), selector="form")
    assert {region["role"] for region in forms["regions"]} == {"form"}
    truncated = await call.ok("fetch_page", url=demo.url("/login.html"), budget=1)
    assert truncated["truncated"] is True and truncated["message"] == "SOM exceeded budget of 1 tokens"
    assert await call.error("no_such_tool", {}) == "Unknown tool: no_such_tool"
    await call.ok("close_page", session_id=sid)


async def test_listeners_hear_every_call(dispatcher: Dispatcher, call: Caller, demo) -> None:
    heard: list[tuple[str | None, str]] = []
    unsubscribe = dispatcher.add_listener(lambda sid, tool: heard.append((sid, tool)))
    sid = (await call.ok("open_page", url=demo.url("/login.html")))["session_id"]
    await call.ok("trace_status", session_id=sid)
    unsubscribe()
    await call.ok("close_page", session_id=sid)
    assert heard == [(None, "open_page"), (sid, "trace_status")]


def test_catalogue_names_schemas_and_closed_trace_tools() -> None:
    names = {tool.name for tool in TOOLS}
    assert {
        "open_page",
        "navigate_to",
        "click",
        "type_text",
        "select_option",
        "scroll",
        "toggle",
        "clear",
        "close_page",
        "evaluate",
        "get_cookies",
        "set_cookies",
        "clear_cookies",
        "trace_status",
        "trace_export",
        "trace_clear",
        "replay_validate",
        "session_status",
        "fetch_page",
    } <= names
    closed = {tool.name for tool in TOOLS if tool.closed}
    assert closed == {
        "trace_status",
        "trace_export",
        "trace_clear",
        "replay_validate",
        "replay_execute",
        "ard_discover",
        "crawl_policy",
        "inspect_page",
    }
    for tool in TOOLS:
        json.dumps(tool.input_schema)
        assert tool.input_schema["type"] == "object"


async def test_a_coarse_action_never_names_a_target_even_with_a_stray_element_id(call: Caller, demo) -> None:
    opened = await call.ok("open_page", url=demo.url("/login.html"), trace=True)
    sid = opened["session_id"]
    email = element_id(opened, "text_input", "Email")
    await call.ok("evaluate", session_id=sid, expression="1", element_id=email)
    await call.ok("get_cookies", session_id=sid, element_id=email)
    await call.ok("clear_cookies", session_id=sid, element_id=email)
    events = (await call.export(sid))["events"]
    coarse = [e for e in events if e["action"] in ("evaluate", "clear_cookies")]
    assert len(coarse) == 2 and all("target" not in e and e.get("target") is None for e in coarse)
    await call.ok("close_page", session_id=sid)
