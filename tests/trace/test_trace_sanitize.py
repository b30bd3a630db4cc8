"""sanitize_parameters (docs/contract.md#sanitisation), redacted_fields, and classify_error (docs/contract.md#the-classifier)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plasmate_nb.trace import (
    TraceKey,
    TraceLog,
    classify_error,
    compact_json,
    redacted_fields,
    sanitize_parameters,
)
from plasmate_nb.trace.compact import truncate_utf8, utf8_len
from tests.trace.trace_testkit import KNOWN_KEY, hand_fp

KEY = TraceKey._from_bytes_for_tests(KNOWN_KEY)


# -- open_page / navigate_to ------------------------------------------------------------


@pytest.mark.parametrize("action", ["open_page", "navigate_to"])
def test_sanitize_url_actions_keep_origin_and_keyed_fingerprint(action: str) -> None:
    url = "https://user:pw@example.com/account?token=t#frag"
    assert sanitize_parameters(action, {"url": url, "trace": True}, KEY) == {
        "origin": "https://example.com:443",
        "url_fingerprint": "plasmate-url:v1:" + hand_fp(KNOWN_KEY, b"url", url.encode()),
    }


@pytest.mark.parametrize("action", ["open_page", "navigate_to"])
@pytest.mark.parametrize("arguments", [{}, {"url": None}, {"url": 5}, {"url": ["x"]}])
def test_sanitize_url_actions_with_missing_or_non_string_url_give_nulls(action: str, arguments: dict) -> None:
    assert sanitize_parameters(action, arguments, KEY) == {"origin": None, "url_fingerprint": None}


def test_sanitize_url_action_with_opaque_url_keeps_fingerprint_and_null_origin() -> None:
    params = sanitize_parameters("navigate_to", {"url": "about:blank"}, KEY)
    assert params["origin"] is None
    assert params["url_fingerprint"].startswith("plasmate-url:v1:")


def test_sanitize_url_action_without_key_is_completed_by_the_recording_log() -> None:
    url = "https://example.com/private/path"
    params = sanitize_parameters("open_page", {"url": url})
    assert params == {"origin": "https://example.com:443", "url_fingerprint": None}
    assert url not in repr(params) and url not in compact_json(params)
    log = TraceLog(True)
    log.record("open_page", params, None, log.closed_state(), log.closed_state(), None, 1)
    recorded = log.export("s")["events"][0]["parameters"]
    assert recorded == {"origin": "https://example.com:443", "url_fingerprint": log.key.url_fingerprint(url)}


# -- type_text / select_option ----------------------------------------------------------


def test_sanitize_type_text_keeps_only_byte_length_and_redaction_marker() -> None:
    assert sanitize_parameters("type_text", {"element_id": "e1", "text": "hunter2"}) == {
        "append": False,
        "value": {"byte_length": 7, "redacted": True},
    }


def test_sanitize_type_text_byte_length_is_utf8() -> None:
    params = sanitize_parameters("type_text", {"text": "pässwörd✓"})
    assert params["value"] == {"byte_length": len("pässwörd✓".encode()), "redacted": True}


def test_sanitize_type_text_append_defaults_to_false_and_needs_a_boolean() -> None:
    assert sanitize_parameters("type_text", {"text": "x", "append": True})["append"] is True
    assert sanitize_parameters("type_text", {"text": "x"})["append"] is False
    assert sanitize_parameters("type_text", {"text": "x", "append": 1})["append"] is False
    assert sanitize_parameters("type_text", {"text": "x", "append": "true"})["append"] is False


@pytest.mark.parametrize("arguments", [{}, {"text": None}, {"text": 42}, {"text": ["a"]}])
def test_sanitize_type_text_without_string_text_gives_null_value(arguments: dict) -> None:
    assert sanitize_parameters("type_text", arguments)["value"] is None


def test_sanitize_type_text_empty_text_has_length_zero() -> None:
    assert sanitize_parameters("type_text", {"text": ""})["value"] == {"byte_length": 0, "redacted": True}


def test_sanitize_select_option_keeps_only_byte_length() -> None:
    assert sanitize_parameters("select_option", {"value": "private-plan"}) == {
        "value": {"byte_length": 12, "redacted": True}
    }
    assert sanitize_parameters("select_option", {"value": 3}) == {"value": None}
    assert sanitize_parameters("select_option", {}) == {"value": None}


# -- scroll -----------------------------------------------------------------------------


def test_sanitize_scroll_defaults() -> None:
    assert sanitize_parameters("scroll", {}) == {"direction": "down", "pixels": 300, "targeted": False}


def test_sanitize_scroll_keeps_direction_pixels_and_targeted() -> None:
    assert sanitize_parameters("scroll", {"direction": "up", "pixels": -40, "element_id": "e1"}) == {
        "direction": "up",
        "pixels": -40,
        "targeted": True,
    }


def test_sanitize_scroll_keeps_any_direction_string() -> None:
    assert sanitize_parameters("scroll", {"direction": "sideways"})["direction"] == "sideways"
    assert sanitize_parameters("scroll", {"direction": 3})["direction"] == "down"


def test_sanitize_scroll_direction_is_cut_to_512_bytes_on_a_character_boundary() -> None:
    assert sanitize_parameters("scroll", {"direction": "x" * 600})["direction"] == "x" * 512
    cut = sanitize_parameters("scroll", {"direction": "é" * 300})["direction"]  # 2 bytes each
    assert cut == "é" * 256 and len(cut.encode()) == 512
    cut = sanitize_parameters("scroll", {"direction": "a" + "€" * 200})["direction"]  # 1 + 3n bytes
    assert len(cut.encode()) <= 512 and cut == "a" + "€" * 170


@pytest.mark.parametrize("pixels", [None, "300", 2.5, 3.0, True, False, 2**63, -(2**63) - 1, [1]])
def test_sanitize_scroll_pixels_that_are_not_integers_default_to_300(pixels: object) -> None:
    assert sanitize_parameters("scroll", {"pixels": pixels})["pixels"] == 300


def test_sanitize_scroll_pixels_accepts_the_i64_range() -> None:
    assert sanitize_parameters("scroll", {"pixels": 2**63 - 1})["pixels"] == 2**63 - 1
    assert sanitize_parameters("scroll", {"pixels": 0})["pixels"] == 0


def test_sanitize_scroll_targeted_is_presence_of_element_id() -> None:
    assert sanitize_parameters("scroll", {"element_id": None})["targeted"] is True
    assert sanitize_parameters("scroll", {"elementId": "e1"})["targeted"] is False


def test_sanitize_scroll_replaces_lone_surrogates() -> None:
    direction = sanitize_parameters("scroll", {"direction": "up\ud800"})["direction"]
    assert direction == "up\ufffd"
    direction.encode("utf-8")  # always encodable


# -- cookies, evaluate and the empty-parameter actions ----------------------------------


def test_sanitize_set_cookies_keeps_only_the_count() -> None:
    cookies = [{"name": "sid", "value": "secret", "domain": "example.com"}, {"bad": True}]
    assert sanitize_parameters("set_cookies", {"cookies": cookies}) == {"cookie_count": 2}
    assert sanitize_parameters("set_cookies", {"cookies": {"name": "sid"}}) == {"cookie_count": 0}
    assert sanitize_parameters("set_cookies", {}) == {"cookie_count": 0}


def test_sanitize_clear_cookies_keeps_only_whether_a_filter_was_given() -> None:
    assert sanitize_parameters("clear_cookies", {}) == {"filter_present": False}
    for name in ("name", "domain", "url"):
        assert sanitize_parameters("clear_cookies", {name: None}) == {"filter_present": True}
    assert sanitize_parameters("clear_cookies", {"path": "/"}) == {"filter_present": False}


@pytest.mark.parametrize("action", ["evaluate", "click", "toggle", "clear", "close_page"])
def test_sanitize_actions_without_retained_parameters_give_empty_objects(action: str) -> None:
    arguments = {"session_id": "s", "element_id": "e1", "expression": "document.cookie", "text": "x"}
    assert sanitize_parameters(action, arguments) == {}


def test_sanitize_untraced_actions_give_empty_objects() -> None:
    assert sanitize_parameters("get_cookies", {"url": "https://example.com/"}) == {}


@pytest.mark.parametrize("arguments", [None, [], "text", 5, ["url", "x"]])
def test_sanitize_tolerates_non_object_arguments(arguments: object) -> None:
    assert sanitize_parameters("type_text", arguments) == {"append": False, "value": None}
    assert sanitize_parameters("scroll", arguments) == {"direction": "down", "pixels": 300, "targeted": False}
    assert sanitize_parameters("navigate_to", arguments) == {"origin": None, "url_fingerprint": None}


def test_sanitized_parameters_have_sorted_keys() -> None:
    for action, arguments in [
        ("navigate_to", {"url": "http://x/"}),
        ("type_text", {"text": "t", "append": True}),
        ("scroll", {"direction": "up"}),
    ]:
        params = sanitize_parameters(action, arguments, KEY)
        assert list(params) == sorted(params)


# -- redacted_fields --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "fields"),
    [
        ("type_text", ["text"]),
        ("select_option", ["value"]),
        ("evaluate", ["expression", "result"]),
        ("set_cookies", ["cookies"]),
        ("clear_cookies", ["name", "domain", "url"]),
        ("open_page", []),
        ("navigate_to", []),
        ("click", []),
        ("scroll", []),
        ("toggle", []),
        ("clear", []),
        ("close_page", []),
    ],
)
def test_redacted_fields_by_action(action: str, fields: list[str]) -> None:
    assert redacted_fields(action) == fields


def test_redacted_fields_returns_a_fresh_list() -> None:
    redacted_fields("type_text").append("mutated")
    assert redacted_fields("type_text") == ["text"]


# -- classify_error ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "Session not found: 0b0e6b9b",
        "Element not found: e_3f2a",
        "Element not found in DOM",
        "Option not found: x",
    ],
)
def test_classify_not_found(message: str) -> None:
    assert classify_error(message) == "not_found"


def test_classify_invalid_input() -> None:
    assert classify_error("Invalid arguments: missing field `element_id`") == "invalid_input"


@pytest.mark.parametrize(
    "message",
    [
        "Failed to fetch http://10.0.0.1/: Outbound URL blocked: address 10.0.0.1 is not globally routable",
        "Outbound URL blocked: outbound URL scheme 'file' is not allowed",
        "request denied by policy",
    ],
)
def test_classify_policy(message: str) -> None:
    assert classify_error(message) == "policy"


def test_classify_timeout_including_worker_timeout_json() -> None:
    worker = (
        '{"containment_failure":{"code":"js_worker_timeout","kind":"timeout","message":'
        '"JavaScript worker exceeded its 15000ms wall deadline"},"error":"Evaluate failed: '
        'JavaScript worker exceeded its 15000ms wall deadline","state_preserved":true}'
    )
    assert classify_error(worker) == "timeout"
    assert classify_error("Timeout 10000ms exceeded.") == "timeout"


@pytest.mark.parametrize(
    "message",
    [
        "JavaScript worker rejected the request (javascript_error): boom",
        "Evaluate failed: execution context was destroyed",
    ],
)
def test_classify_execution(message: str) -> None:
    assert classify_error(message) == "execution"


@pytest.mark.parametrize(
    "message",
    [
        "Navigation failed: bearer top-secret",
        "Failed to fetch https://example.com/: HTTP error 500",
        "fetch aborted",
    ],
)
def test_classify_network(message: str) -> None:
    assert classify_error(message) == "network"


@pytest.mark.parametrize(
    "message",
    [
        "No page loaded in session",
        "Element does not support type: e1",
        "Element is not a <select>",
        "Maximum sessions (10) reached. Close a session first.",
        "Failed to serialize SOM",
        "",
    ],
)
def test_classify_operation(message: str) -> None:
    assert classify_error(message) == "operation"


def test_classify_scans_in_reference_order() -> None:
    assert classify_error("Invalid arguments: session not found") == "not_found"  # not found first
    assert classify_error("Invalid argument: navigation blocked") == "invalid_input"
    assert classify_error("Failed to fetch x: Outbound URL blocked") == "policy"  # policy before network
    assert classify_error("Navigation Timeout after 30000ms") == "timeout"  # timeout before network
    assert classify_error("javascript fetch failed") == "execution"  # execution before network


def test_classify_is_case_insensitive() -> None:
    assert classify_error("ELEMENT NOT FOUND") == "not_found"
    assert classify_error("TIMEOUT") == "timeout"


def test_classify_accepts_non_strings() -> None:
    assert classify_error(TimeoutError("Timeout 5000ms exceeded")) == "timeout"


# -- byte bounds over page text (which can hold a lone surrogate) -------------------------


PAGE_TEXT = st.lists(st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr)), max_size=40).map(
    "".join
)


@given(PAGE_TEXT, st.integers(0, 120))
def test_truncate_utf8_keeps_the_longest_whole_character_prefix_that_fits(text: str, max_bytes: int) -> None:
    cut = truncate_utf8(text, max_bytes)
    assert text.startswith(cut)
    assert utf8_len(cut) <= max_bytes
    assert cut == text or utf8_len(text[: len(cut) + 1]) > max_bytes
