"""``som_answers: "changes"`` and ``page_som`` over the real dispatcher, real Chromium, the demo site
(docs/contract.md#answers-that-carry-only-what-changed).

A client applying each answer's ``changes`` to the SOM it had gets exactly the bytes ``page_som``
returns, whose SHA-256 is the answer's ``som_digest``; full sessions answer as the reference does;
the trace does not depend on the option; ``page_som`` reads without tracing or changing anything.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from typing import Any

from plasmate_nb.tools.som_changes import apply_changes, canonical_text
from tests.support import Caller, element_id

REFERENCE_ACTION_KEYS = {"regions", "title", "url", "webmcp"}


async def _page_som(call: Caller, sid: str) -> str:
    result = await call.dispatcher.call("page_som", {"session_id": sid})
    assert not result.is_error, result.text
    return result.text


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _script(sid: str, opened: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Type, select, toggle, evaluate (no page model in its answer), clear, scroll, then a link
    to another document."""
    email = element_id(opened, "text_input", "Email")
    return [
        ("type_text", {"session_id": sid, "element_id": email, "text": "analyst@example.test"}),
        ("select_option", {"session_id": sid, "element_id": element_id(opened, "select", "Plan"), "value": "team"}),
        ("toggle", {"session_id": sid, "element_id": element_id(opened, "checkbox", "Remember me")}),
        ("evaluate", {"session_id": sid, "expression": "document.title = 'Renamed'"}),
        ("clear", {"session_id": sid, "element_id": email}),
        ("scroll", {"session_id": sid, "direction": "down", "pixels": 100}),
        ("click", {"session_id": sid, "element_id": element_id(opened, "link", "Home")}),
    ]  # fmt: skip


async def _run(call: Caller, sid: str, opened: dict[str, Any]) -> list[dict[str, Any]]:
    return [await call.ok(tool, **arguments) for tool, arguments in _script(sid, opened)]


async def test_changes_applied_to_the_previous_som_give_the_whole_som(call: Caller, demo) -> None:
    opened = await call.ok("open_page", url=demo.url("/login.html"), trace=True, som_answers="changes")
    sid = opened["session_id"]
    known = await _page_som(call, sid)  # the client's copy of the whole model
    assert opened["som_digest"] == _digest(known) and "changes" not in opened
    assert opened["regions"] == json.loads(known)["regions"]
    digest = opened["som_digest"]
    answers = []
    for tool, arguments in _script(sid, opened):
        answer = await call.ok(tool, **arguments)
        if tool == "evaluate":
            continue
        answers.append(answer)
        whole = await _page_som(call, sid)
        assert answer["som_digest"] == _digest(whole)
        if "changes" in answer:
            assert "regions" not in answer
            assert answer["changes"]["base_digest"] == digest  # what the previous answer carried
            assert canonical_text(apply_changes(json.loads(known), answer["changes"])) == whole
            assert len(canonical_text(answer["changes"])) < len(whole)
        else:
            assert answer["regions"] == json.loads(whole)["regions"]
        known, digest = whole, answer["som_digest"]
    assert ["changes" in a for a in answers] == [True] * 5 + [False]  # the link led to another document
    assert answers[-1]["title"] == "plasmate_nb demo site"
    await call.ok("close_page", session_id=sid)


async def test_a_typed_value_is_one_changed_element(call: Caller, demo) -> None:
    opened = await call.ok("open_page", url=demo.url("/login.html"), som_answers="changes")
    sid, email = opened["session_id"], element_id(opened, "text_input", "Email")
    typed = await call.ok("type_text", session_id=sid, element_id=email, text="a@b.test")
    changes = typed["changes"]
    assert [c["id"] for c in changes["changed"]] == [email]
    assert changes["changed"][0]["fields"]["attrs"]["value"] == "a@b.test"
    assert changes["added"] == changes["removed"] == []
    navigated = await call.ok("navigate_to", session_id=sid, url=demo.url("/login.html"))
    assert "regions" in navigated and "changes" not in navigated  # navigate_to: a new document
    await call.ok("close_page", session_id=sid)


async def test_full_sessions_answer_as_the_reference_does(call: Caller, demo) -> None:
    for arguments in ({}, {"som_answers": "full"}):
        opened = await call.ok("open_page", url=demo.url("/login.html"), **arguments)
        sid = opened["session_id"]
        email = element_id(opened, "text_input", "Email")
        typed = await call.ok("type_text", session_id=sid, element_id=email, text="x")
        assert set(typed) == REFERENCE_ACTION_KEYS
        assert set(opened) == REFERENCE_ACTION_KEYS | {"cache_restored", "session_id"}
        await call.ok("close_page", session_id=sid)


async def test_an_unknown_mode_is_refused_before_a_session_opens(call: Caller, demo) -> None:
    before = (await call.ok("session_status"))["active_sessions"]
    message = await call.error("open_page", {"url": demo.url("/login.html"), "som_answers": "diff"})
    assert message.startswith("Invalid arguments: invalid value") and "som_answers" in message
    assert "diff" not in message
    assert (await call.ok("session_status"))["active_sessions"] == before


def _shape(event: dict[str, Any]) -> tuple[Any, ...]:
    """An event without its keyed fingerprints (they differ between sessions by design)."""
    return (
        event["sequence"], event["action"], event["outcome"], sorted(event["parameters"]),
        event.get("target", {}).get("role"), event["before"]["origin"], event["after"]["origin"],
        len(compact({**event, "duration_ms": 0})),  # sizes equal but for the timing digits
    )  # fmt: skip


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _state_pattern(events: list[dict[str, Any]]) -> list[list[int]]:
    """Which states of the trace are equal to which: the same for two runs of the same pages."""
    states = [s["fingerprint"] for e in events for s in (e["before"], e["after"])]
    return [[j for j, other in enumerate(states) if other == state] for state in states]


async def test_the_trace_does_not_depend_on_the_answer_mode(call: Caller, demo) -> None:
    exports = []
    for mode in ("full", "changes"):
        opened = await call.ok("open_page", url=demo.url("/login.html"), trace=True, som_answers=mode)
        sid = opened["session_id"]
        await _run(call, sid, opened)
        await call.ok("page_som", session_id=sid)
        exports.append((await call.export(sid))["events"])
        await call.ok("close_page", session_id=sid)
    full, changes = exports
    assert [_shape(e) for e in full] == [_shape(e) for e in changes]
    assert _state_pattern(full) == _state_pattern(changes)
    assert all(b["before"] == a["after"] for a, b in itertools.pairwise(changes))


async def test_page_som_reads_without_tracing_or_changing_anything(call: Caller, demo) -> None:
    opened = await call.ok("open_page", url=demo.url("/login.html"), trace=True, som_answers="changes")
    sid = opened["session_id"]
    status = await call.ok("trace_status", session_id=sid)
    whole = await _page_som(call, sid)
    assert await _page_som(call, sid) == whole
    forms = await call.ok("page_som", session_id=sid, selector="form")
    assert {r["role"] for r in forms["regions"]} == {"form"} and forms["title"] == "Sign in"
    assert await call.ok("trace_status", session_id=sid) == status
    # The next answer is still relative to the last action answer, not to what page_som returned.
    scrolled = await call.ok("scroll", session_id=sid, direction="down", pixels=10)
    assert scrolled["changes"]["base_digest"] == opened["som_digest"]
    assert await call.error("page_som", {"session_id": "missing"}) == "Session not found: missing"
    assert await call.error("page_som", {}) == "Invalid arguments: missing field `session_id`"
    await call.ok("close_page", session_id=sid)


async def test_a_lone_surrogate_in_the_page_keeps_changes_and_digest_exact(
    call: Caller, fixture_server
) -> None:
    opened = await call.ok(
        "open_page", url=f"{fixture_server}/som/lone-surrogate.html", som_answers="changes"
    )
    sid = opened["session_id"]
    known = await _page_som(call, sid)
    assert "\\ud800" in known and canonical_text(json.loads(known)) == known
    for clicks in (1, 2):
        answer = await call.ok("click", session_id=sid, element_id=element_id(opened, "button", "Change"))
        whole = await _page_som(call, sid)
        assert f"\\udc0{clicks}" in whole
        assert canonical_text(apply_changes(json.loads(known), answer["changes"])) == whole
        assert answer["som_digest"] == _digest(whole)
        known = whole
    await call.ok("close_page", session_id=sid)
