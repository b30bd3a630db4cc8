"""TraceLog: event JSON, append/oversize/evict/clear rules, payloads, disabled logs, states."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

import plasmate_nb.trace.log as log_module
from plasmate_nb.trace import (
    MAX_BYTES,
    MAX_EVENT_BYTES,
    MAX_EVENTS,
    MAX_EXPORT_BYTES,
    OMITTED_FIELDS,
    PageState,
    TraceLog,
    compact_json,
    sanitize_parameters,
)
from tests.trace.trace_testkit import (
    KNOWN_KEY,
    ORIGIN,
    URL,
    counters_hold,
    element,
    hand_fp,
    log_with_known_key,
    login_page,
    page,
    record_simple,
    som,
    submit_button,
)

EVENT_KEYS = [
    "schema",
    "sequence",
    "action",
    "parameters",
    "target",
    "before",
    "after",
    "outcome",
    "error_class",
    "duration_ms",
    "redaction",
]
STATUS_KEYS = [
    "schema",
    "enabled",
    "trace_id",
    "retained_events",
    "retained_bytes",
    "max_events",
    "max_bytes",
    "next_sequence",
    "evicted_events",
    "oversized_events",
    "cleared_events",
    "retention",
]
EXPORT_KEYS = [
    "schema",
    "trace_id",
    "session_id",
    "retained_events",
    "retained_bytes",
    "next_sequence",
    "evicted_events",
    "oversized_events",
    "cleared_events",
    "redaction_policy",
    "events",
]


def events(log: TraceLog) -> list[dict[str, Any]]:
    return log.export("sid")["events"]


def size(event: dict[str, Any]) -> int:
    return len(compact_json(event).encode())


def padded_record(log: TraceLog, payload_bytes: int, action: str = "click") -> int:
    """Record an event whose parameters carry ``payload_bytes`` ASCII bytes of padding."""
    closed = log.closed_state()
    return log.record(action, {"pad": "x" * payload_bytes}, None, closed, closed, None, 0)


def event_size_for_padding(payload_bytes: int) -> int:
    probe = TraceLog(True)
    padded_record(probe, payload_bytes)
    return probe.retained_bytes


# -- event JSON ------------------------------------------------------------------------


def test_record_returns_the_sequence_and_builds_the_event_in_struct_order() -> None:
    log = TraceLog(True)
    page_now = login_page()
    target = log.target(page_now, "e1")
    state = log.state(page_now)
    assert log.record("click", {}, target, state, state, "Element not found in DOM", 12) == 1
    (event,) = events(log)
    assert list(event) == EVENT_KEYS
    assert event["schema"] == "plasmate.trace.v1"
    assert event["sequence"] == 1
    assert event["action"] == "click"
    assert event["target"] == target
    assert event["before"] == state and event["after"] == state
    assert event["outcome"] == "error" and event["error_class"] == "not_found"
    assert event["duration_ms"] == 12


def test_record_omits_target_when_none() -> None:
    log = TraceLog(True)
    record_simple(log)
    assert "target" not in events(log)[0]


def test_record_success_has_no_error_class() -> None:
    log = TraceLog(True)
    record_simple(log)
    (event,) = events(log)
    assert event["outcome"] == "success" and "error_class" not in event


def test_record_error_keeps_only_the_class_never_the_message() -> None:
    log = TraceLog(True)
    record_simple(log, "navigate_to", error="Navigation failed: bearer top-secret", url="http://x/")
    text = compact_json(log.export("sid"))
    assert events(log)[0]["error_class"] == "network"
    assert "top-secret" not in text and "bearer" not in text and "Navigation failed" not in text


def test_record_empty_error_message_is_still_an_error() -> None:
    log = TraceLog(True)
    record_simple(log, error="")
    assert events(log)[0]["outcome"] == "error" and events(log)[0]["error_class"] == "operation"


def test_record_duration_is_whole_non_negative_milliseconds() -> None:
    log = TraceLog(True)
    closed = log.closed_state()
    log.record("scroll", {}, None, closed, closed, None, 12.9)
    log.record("scroll", {}, None, closed, closed, None, -3)
    assert [e["duration_ms"] for e in events(log)] == [12, 0]


def test_record_sorts_parameter_keys_at_every_depth() -> None:
    log = TraceLog(True)
    closed = log.closed_state()
    log.record(
        "type_text",
        {"value": {"redacted": True, "byte_length": 3}, "append": False},
        None,
        closed,
        closed,
        None,
        0,
    )
    params = events(log)[0]["parameters"]
    assert list(params) == ["append", "value"] and list(params["value"]) == ["byte_length", "redacted"]


def test_record_redaction_block() -> None:
    log = TraceLog(True)
    record_simple(log, "type_text", text="hunter2")
    assert events(log)[0]["redaction"] == {
        "policy": "plasmate.trace.v1",
        "value_handling": "omitted+byte_length",
        "redacted_fields": ["text"],
        "omitted_fields": list(OMITTED_FIELDS),
    }


def test_record_copies_its_inputs() -> None:
    log = TraceLog(True)
    params = {"direction": "up", "pixels": 1, "targeted": False}
    state = log.closed_state()
    log.record("scroll", params, None, state, state, None, 0)
    before = compact_json(log.export("sid"))
    params["direction"] = "changed"
    state["origin"] = "changed"
    assert compact_json(log.export("sid")) == before


def test_record_of_an_untraceable_action_is_a_no_op() -> None:
    log = TraceLog(True)
    for action in ("get_cookies", "trace_export", "replay_validate", "fetch_page", "nope"):
        assert record_simple(log, action) == 0
    assert log.next_sequence == 1 and log.retained_events == 0


@pytest.mark.parametrize(
    "bad",
    [
        {"parameters": [1]},
        {"before": None},
        {"target": "e1"},
        {"duration_ms": "5"},
        {"duration_ms": float("nan")},
        {"duration_ms": True},
        {"parameters": {"x": object()}},
        {"parameters": {"x": "\ud800"}},
    ],
)
def test_record_rejects_malformed_input_without_consuming_a_sequence(bad: dict[str, Any]) -> None:
    log = TraceLog(True)
    closed = log.closed_state()
    call = {"parameters": {}, "target": None, "before": closed, "after": closed, "duration_ms": 1} | bad
    with pytest.raises((TypeError, ValueError)):
        log.record(
            "scroll",
            call["parameters"],
            call["target"],
            call["before"],
            call["after"],
            None,
            call["duration_ms"],
        )
    assert log.next_sequence == 1 and counters_hold(log)


# -- bounds ----------------------------------------------------------------------------


def test_oversized_event_is_dropped_but_its_sequence_is_consumed() -> None:
    log = TraceLog(True)
    assert record_simple(log) == 1
    assert padded_record(log, MAX_EVENT_BYTES) == 2
    assert record_simple(log) == 3
    assert log.oversized_events == 1
    assert [e["sequence"] for e in events(log)] == [1, 3]
    assert counters_hold(log)


def test_event_of_exactly_4096_bytes_is_kept_and_4097_dropped() -> None:
    overhead = event_size_for_padding(0)
    log = TraceLog(True)
    padded_record(log, MAX_EVENT_BYTES - overhead)
    assert log.retained_events == 1 and log.retained_bytes == MAX_EVENT_BYTES
    padded_record(log, MAX_EVENT_BYTES - overhead + 1)
    assert log.retained_events == 1 and log.oversized_events == 1


def test_eviction_by_count_drops_oldest_first() -> None:
    log = TraceLog(True)
    for _ in range(MAX_EVENTS + 5):
        log.record("clear", {}, None, {}, {}, None, 0)  # tiny events: the count binds first
    assert log.retained_events == MAX_EVENTS
    assert log.evicted_events == 5
    assert [e["sequence"] for e in events(log)] == list(range(6, MAX_EVENTS + 6))
    assert log.retained_bytes < MAX_BYTES and counters_hold(log)


def test_eviction_by_bytes_drops_oldest_first() -> None:
    log = TraceLog(True)
    one = event_size_for_padding(3000)
    for _ in range(20):
        padded_record(log, 3000)
    fit = MAX_BYTES // one
    kept = events(log)
    assert log.retained_events == fit < MAX_EVENTS
    assert log.retained_bytes == sum(size(e) for e in kept) <= MAX_BYTES
    assert log.retained_bytes + min(size(e) for e in kept) > MAX_BYTES  # no room for one more
    assert log.evicted_events == 20 - fit
    assert [e["sequence"] for e in kept] == list(range(20 - fit + 1, 21)) and counters_hold(log)


def test_eviction_makes_room_for_exactly_the_new_event() -> None:
    log = TraceLog(True)
    small = event_size_for_padding(0)
    big = event_size_for_padding(4000)
    count = MAX_BYTES // small
    for _ in range(count):
        padded_record(log, 0)
    free = MAX_BYTES - log.retained_bytes
    padded_record(log, 4000)
    expected_evictions = -(-(big - free) // small)  # ceil
    assert log.evicted_events == expected_evictions
    assert log.retained_bytes <= MAX_BYTES


def test_eviction_uses_stored_sizes_and_never_reserialises(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = log_module.compact_json
    monkeypatch.setattr(log_module, "compact_json", lambda obj: calls.append(1) or real(obj))
    log = TraceLog(True)
    for _ in range(300):
        padded_record(log, 500)
    assert log.evicted_events > 0
    assert len(calls) == 300  # one serialisation per record, none for eviction


def test_retained_bytes_equal_the_sum_of_event_sizes() -> None:
    log = TraceLog(True)
    for index in range(200):
        record_simple(log, "scroll", direction="é" * (index % 40))
    assert log.retained_bytes == sum(size(e) for e in events(log))


# -- clear -----------------------------------------------------------------------------


def test_clear_returns_number_removed_and_keeps_the_sequence() -> None:
    log = TraceLog(True)
    trace_id = log.trace_id
    for _ in range(3):
        record_simple(log)
    assert log.clear() == 3
    assert log.retained_events == 0 and log.retained_bytes == 0 and log.cleared_events == 3
    assert record_simple(log) == 4
    assert log.trace_id == trace_id and log.enabled
    assert log.clear() == 1 and log.cleared_events == 4 and counters_hold(log)


def test_clear_on_an_empty_log_returns_zero() -> None:
    log = TraceLog(True)
    assert log.clear() == 0 and log.cleared_events == 0


# -- payloads --------------------------------------------------------------------------


def test_status_payload_in_struct_order() -> None:
    log = TraceLog(True)
    record_simple(log)
    status = log.status()
    assert list(status) == STATUS_KEYS
    assert status == {
        "schema": "plasmate.trace.v1",
        "enabled": True,
        "trace_id": log.trace_id,
        "retained_events": 1,
        "retained_bytes": log.retained_bytes,
        "max_events": 128,
        "max_bytes": 49152,
        "next_sequence": 2,
        "evicted_events": 0,
        "oversized_events": 0,
        "cleared_events": 0,
        "retention": "memory-only; removed when the browser session closes",
    }


def test_export_payload_in_struct_order() -> None:
    log = TraceLog(True)
    record_simple(log)
    export = log.export("session-1")
    assert list(export) == EXPORT_KEYS
    assert export["session_id"] == "session-1" and export["trace_id"] == log.trace_id
    assert export["redaction_policy"] == (
        "secret values are omitted; page bodies, cookies, headers, JavaScript, screenshots, "
        "and tool output are omitted"
    )
    assert len(export["events"]) == export["retained_events"] == 1


def test_repeated_exports_are_byte_identical() -> None:
    log = TraceLog(True)
    page_now = login_page()
    state = log.state(page_now)
    for _ in range(40):
        log.record("click", {}, log.target(page_now, "e1"), state, state, None, 3)
    first = compact_json(log.export("sid"))
    assert all(compact_json(log.export("sid")) == first for _ in range(5))
    assert compact_json(log.detached_copy().export("sid")) == first


def test_exports_are_fresh_copies() -> None:
    log = TraceLog(True)
    record_simple(log)
    first = log.export("sid")
    first["events"][0]["action"] = "mutated"
    first["events"].clear()
    assert log.export("sid")["events"][0]["action"] == "scroll"


def test_export_changes_after_clear_and_record() -> None:
    log = TraceLog(True)
    record_simple(log)
    before = compact_json(log.export("sid"))
    log.clear()
    assert compact_json(log.export("sid")) != before
    assert log.export("sid")["events"] == []


def test_final_export_is_the_export_when_it_fits() -> None:
    log = TraceLog(True)
    record_simple(log)
    assert log.final_export("sid") == log.export("sid")


def test_final_export_ceiling_gives_the_omitted_marker() -> None:
    log = TraceLog(True)
    record_simple(log)
    base = len(compact_json(log.export("")).encode())
    fits = "s" * (MAX_EXPORT_BYTES - base)
    assert len(compact_json(log.final_export(fits)).encode()) == MAX_EXPORT_BYTES
    assert log.final_export(fits)["session_id"] == fits
    marker = log.final_export(fits + "s")
    assert marker == {
        "schema": "plasmate.trace.v1",
        "omitted": True,
        "reason": "bounded final trace export exceeded the MCP response ceiling",
    }
    assert list(marker) == ["schema", "omitted", "reason"]


def test_a_full_log_export_fits_the_ceiling() -> None:
    log = TraceLog(True)
    for _ in range(300):
        padded_record(log, 3500)
    assert len(compact_json(log.export("0b0e6b9b-6a1b-4b8e-9a1e-1f1d2c3b4a5e")).encode()) <= MAX_EXPORT_BYTES
    assert "omitted" not in log.final_export("0b0e6b9b-6a1b-4b8e-9a1e-1f1d2c3b4a5e")


# -- disabled logs ---------------------------------------------------------------------


def test_disabled_log_status_reports_enabled_false_and_zero_counts() -> None:
    log = TraceLog(False)
    status = log.status()
    assert status["enabled"] is False
    assert status["retained_events"] == status["retained_bytes"] == 0
    assert status["next_sequence"] == 1
    assert uuid.UUID(status["trace_id"]).version == 4


def test_disabled_log_export_has_no_events() -> None:
    log = TraceLog(False)
    record_simple(log)
    assert log.export("sid")["events"] == []
    assert log.final_export("sid")["events"] == []


def test_disabled_log_record_is_a_no_op_and_consumes_no_sequence() -> None:
    log = TraceLog(False)
    assert record_simple(log, "click") == 0
    assert padded_record(log, 10_000) == 0
    assert log.next_sequence == 1 and log.oversized_events == 0 and counters_hold(log)


def test_disabled_log_clear_returns_zero() -> None:
    log = TraceLog(False)
    assert log.clear() == 0 and log.status()["cleared_events"] == 0


def test_trace_id_is_a_uuid4_unique_per_log() -> None:
    ids = {TraceLog(True).trace_id for _ in range(20)}
    assert len(ids) == 20
    assert all(uuid.UUID(i).version == 4 and str(uuid.UUID(i)) == i for i in ids)


def test_counter_invariant_holds_across_mixed_operations() -> None:
    log = TraceLog(True)
    for index in range(400):
        if index % 97 == 0:
            log.clear()
        elif index % 13 == 0:
            padded_record(log, 5000)
        else:
            padded_record(log, index % 700)
        assert counters_hold(log)


# -- detached copies -------------------------------------------------------------------


def test_detached_copy_shares_the_key_and_copies_events_and_counters() -> None:
    log = TraceLog(True)
    record_simple(log)
    log.clear()
    record_simple(log)
    copy = log.detached_copy()
    assert copy.key is log.key and copy.trace_id == log.trace_id and copy.enabled
    assert copy.status() == log.status()
    assert copy.state(login_page()) == log.state(login_page())
    copy.record("close_page", {}, None, copy.closed_state(), copy.closed_state(), None, 1)
    assert copy.next_sequence == 4 and log.next_sequence == 3
    assert [e["action"] for e in events(copy)] == ["scroll", "close_page"]
    assert [e["action"] for e in events(log)] == ["scroll"]


# -- page states and targets -------------------------------------------------------------


def test_state_of_a_page_under_the_session_key() -> None:
    log = log_with_known_key()
    page_now = login_page()
    assert log.state(page_now) == {
        "url_fingerprint": "plasmate-url:v1:" + hand_fp(KNOWN_KEY, b"url", URL.encode()),
        "origin": ORIGIN,
        "fingerprint": "plasmate-state:v1:" + hand_fp(KNOWN_KEY, b"som", page_now.som_text.encode()),  # type: ignore[union-attr]
        "has_page": True,
    }
    assert list(log.state(page_now)) == ["url_fingerprint", "origin", "fingerprint", "has_page"]


def test_state_fingerprint_uses_the_som_text_bytes_exactly() -> None:
    log = log_with_known_key()
    som_dict = som(submit_button())
    pretty = json.dumps(som_dict, indent=2)
    state = log.state(PageState(URL, pretty, som_dict))
    assert state["fingerprint"] == "plasmate-state:v1:" + hand_fp(KNOWN_KEY, b"som", pretty.encode())
    assert state != log.state(PageState(URL, compact_json(som_dict), som_dict))
    # without text, the dict's compact_json stands in
    assert log.state(PageState(URL, None, som_dict)) == log.state(
        PageState(URL, compact_json(som_dict), som_dict)
    )


def test_state_without_a_page() -> None:
    log = log_with_known_key()
    state = log.state(PageState(None, None, None))
    assert state == {
        "url_fingerprint": None,
        "origin": None,
        "fingerprint": "plasmate-state:v1:" + hand_fp(KNOWN_KEY, b"som", b""),
        "has_page": False,
    }


def test_closed_state() -> None:
    log = log_with_known_key()
    expected = {
        "url_fingerprint": None,
        "origin": None,
        "fingerprint": "plasmate-state:v1:" + hand_fp(KNOWN_KEY, b"som", b"closed"),
        "has_page": False,
    }
    assert log.closed_state() == expected
    assert log.state(PageState.closed()) == expected
    assert log.state(PageState(None, None, None)) != expected


def test_page_state_repr_hides_url_and_content() -> None:
    page_now = PageState(
        "https://user:pw@example.com/secret?token=t", '{"title":"Private"}', {"title": "Private"}
    )
    text = repr(page_now)
    assert "secret" not in text and "pw" not in text and "Private" not in text
    assert text == "PageState(has_page=True, session_closed=False)"


def test_target_is_the_replay_target_of_the_element() -> None:
    log = log_with_known_key()
    target = log.target(login_page(), "e1")
    assert target is not None
    assert list(target) == ["provenance", "target_id", "stable_key", "role"]
    assert target["provenance"] == "session-owned-som"
    assert target["target_id"] == "plasmate-trace-id:v1:" + hand_fp(KNOWN_KEY, b"target-id", b"e1")
    assert target["stable_key"] == log.key.stable_key(submit_button())
    assert target["role"] == "button"


def test_target_is_found_through_children_and_shadow_elements() -> None:
    log = TraceLog(True)
    nested = element("e_child", "link", actions=["click"])
    shadowed = element("e_shadow", "button", actions=["click"])
    host = element("e_host", "section", children=[nested], shadow={"mode": "open", "elements": [shadowed]})
    page_now = page(URL, som(host))
    assert log.target(page_now, "e_child")["role"] == "link"  # type: ignore[index]
    assert log.target(page_now, "e_shadow")["role"] == "button"  # type: ignore[index]


@pytest.mark.parametrize(
    ("page_now", "element_id"),
    [
        (PageState(URL, None, None), "e1"),  # no SOM
        (login_page(), "e404"),  # not found
        (login_page(), 1),  # not a string
        (login_page(), None),
    ],
)
def test_target_is_none_without_som_match_or_string_id(page_now: PageState, element_id: object) -> None:
    assert TraceLog(True).target(page_now, element_id) is None


@pytest.mark.parametrize("role", [None, "", 5, ["button"]])
def test_an_element_without_a_role_gives_no_target(role: object) -> None:
    # A target's role is a word (the schema's minLength 1): recording null or "" would write an
    # export its own reader refuses.
    roleless = {"id": "e1", "actions": ["click"]} | ({} if role is None else {"role": role})
    assert TraceLog(True).target(page(URL, som(roleless)), "e1") is None


def test_log_repr_shows_no_key_or_content() -> None:
    log = log_with_known_key()
    record_simple(log)
    assert (
        repr(log) == f"TraceLog(enabled=True, trace_id={log.trace_id!r}, retained_events=1, next_sequence=2)"
    )


def test_open_page_event_like_the_dispatcher_records_it() -> None:
    log = TraceLog(True)
    params = sanitize_parameters("open_page", {"url": URL, "trace": True})
    sequence = log.record("open_page", params, None, log.closed_state(), log.state(login_page()), None, 80)
    (event,) = events(log)
    assert sequence == 1
    assert event["before"] == log.closed_state() and event["after"]["has_page"] is True
    assert event["parameters"] == {"origin": ORIGIN, "url_fingerprint": log.key.url_fingerprint(URL)}
