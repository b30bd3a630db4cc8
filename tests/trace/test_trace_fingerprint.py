"""TraceKey: byte layout of the keyed fingerprints, and that the key never leaves the object."""

from __future__ import annotations

import copy
import hashlib
import json
import pickle
import re

import pytest

from plasmate_nb.trace import TraceKey, TraceLog, compact_json
from tests.trace.trace_testkit import (
    KNOWN_KEY,
    URL,
    hand_fp,
    log_with_known_key,
    login_page,
    som,
    submit_button,
)

HEX64 = re.compile(r"[0-9a-f]{64}")


@pytest.fixture
def key() -> TraceKey:
    return TraceKey._from_bytes_for_tests(KNOWN_KEY)


def test_fingerprint_byte_layout_for_urls(key: TraceKey) -> None:
    value = "https://user:pw@example.com/path?q=1#f"
    expected = hand_fp(KNOWN_KEY, b"url", value.encode())
    assert key.url_fingerprint(value) == "plasmate-url:v1:" + expected


def test_fingerprint_byte_layout_for_state(key: TraceKey) -> None:
    som_bytes = b'{"title":"Login","regions":[]}'
    assert key.state_fingerprint(som_bytes) == "plasmate-state:v1:" + hand_fp(KNOWN_KEY, b"som", som_bytes)


def test_state_fingerprint_without_som_is_over_empty_bytes(key: TraceKey) -> None:
    expected = "plasmate-state:v1:" + hand_fp(KNOWN_KEY, b"som", b"")
    assert key.state_fingerprint(None) == expected
    assert key.state_fingerprint(b"") == expected


def test_closed_state_fingerprint_is_over_the_word_closed(key: TraceKey) -> None:
    assert key.closed_state_fingerprint() == "plasmate-state:v1:" + hand_fp(KNOWN_KEY, b"som", b"closed")
    assert key.closed_state_fingerprint() != key.state_fingerprint(None)


def test_fingerprint_byte_layout_for_target_ids(key: TraceKey) -> None:
    assert key.target_id("e_3f2a0b1c9d8e") == "plasmate-trace-id:v1:" + hand_fp(
        KNOWN_KEY, b"target-id", b"e_3f2a0b1c9d8e"
    )


def test_fingerprint_byte_layout_for_stable_keys(key: TraceKey) -> None:
    element = {
        "id": "e1",
        "role": "text_input",
        "label": "Email",
        "actions": ["type", "clear"],
        "attrs": {"name": "email", "href": "", "input_type": "email", "placeholder": "you@x", "group": 3},
    }
    entries = ["e1", "text_input", "Email", "clear,type", "email", None, "email", None, "you@x"]
    expected = hand_fp(KNOWN_KEY, b"target", json.dumps(entries, separators=(",", ":")).encode())
    assert key.stable_key(element) == "plasmate-trace-target:v1:" + expected


def test_stable_key_input_is_nine_entries_in_reference_order(key: TraceKey) -> None:
    element = {
        "id": "e9",
        "role": "link",
        "label": "Docs",
        "actions": ["click"],
        "attrs": {"placeholder": "p", "group": "g", "input_type": "t", "href": "/docs", "name": "n"},
    }
    entries = ["e9", "link", "Docs", "click", "n", "/docs", "t", "g", "p"]
    assert key.stable_key(element) == "plasmate-trace-target:v1:" + hand_fp(
        KNOWN_KEY, b"target", compact_json(entries).encode()
    )


def test_stable_key_actions_are_sorted_and_null_when_absent(key: TraceKey) -> None:
    def entries(actions: object) -> bytes:
        return compact_json(["e1", "button", None, actions, None, None, None, None, None]).encode()

    base = {"id": "e1", "role": "button"}
    assert key.stable_key({**base, "actions": ["toggle", "click"]}).endswith(
        hand_fp(KNOWN_KEY, b"target", entries("click,toggle"))
    )
    assert key.stable_key({**base, "actions": []}).endswith(hand_fp(KNOWN_KEY, b"target", entries(None)))
    assert key.stable_key(base).endswith(hand_fp(KNOWN_KEY, b"target", entries(None)))


def test_stable_key_keeps_attrs_only_when_non_empty_strings(key: TraceKey) -> None:
    with_empty = {"id": "e1", "role": "link", "attrs": {"href": "", "name": 7, "group": None}}
    bare = {"id": "e1", "role": "link"}
    assert key.stable_key(with_empty) == key.stable_key(bare)
    assert key.stable_key({**bare, "attrs": {"href": "/x"}}) != key.stable_key(bare)


def test_stable_key_ignores_fields_outside_the_nine(key: TraceKey) -> None:
    one = submit_button()
    other = {**submit_button(), "text": "Different text", "hints": ["primary"], "value": "v"}
    assert key.stable_key(one) == key.stable_key(other)


def test_state_fingerprint_is_over_the_exact_bytes(key: TraceKey) -> None:
    compact = b'{"a":1}'
    spaced = b'{"a": 1}'
    assert key.state_fingerprint(compact) != key.state_fingerprint(spaced)
    assert key.state_fingerprint(compact.decode()) == key.state_fingerprint(compact)
    assert key.state_fingerprint(memoryview(compact)) == key.state_fingerprint(compact)


def test_fingerprints_are_lowercase_hex_of_64(key: TraceKey) -> None:
    for value in (
        key.url_fingerprint("http://x/"),
        key.state_fingerprint(b"x"),
        key.closed_state_fingerprint(),
        key.target_id("e1"),
        key.stable_key(submit_button()),
    ):
        assert value is not None
        assert HEX64.fullmatch(value.rsplit(":", 1)[1])


def test_url_fingerprint_of_no_url_is_none(key: TraceKey) -> None:
    assert key.url_fingerprint(None) is None


def test_domains_separate_equal_values(key: TraceKey) -> None:
    digests = {
        key.url_fingerprint("e1").rsplit(":", 1)[1],  # type: ignore[union-attr]
        key.state_fingerprint(b"e1").rsplit(":", 1)[1],
        key.target_id("e1").rsplit(":", 1)[1],
    }
    assert len(digests) == 3


def test_each_key_is_fresh_random_bytes() -> None:
    assert TraceKey().url_fingerprint(URL) != TraceKey().url_fingerprint(URL)


def test_test_constructor_requires_32_bytes() -> None:
    with pytest.raises(ValueError):
        TraceKey._from_bytes_for_tests(b"short")


@pytest.mark.parametrize(
    "operation", [pickle.dumps, copy.copy, copy.deepcopy], ids=["pickle", "copy", "deepcopy"]
)
def test_key_refuses_pickle_and_copy(key: TraceKey, operation: object) -> None:
    with pytest.raises(TypeError):
        operation(key)  # type: ignore[operator]
    with pytest.raises(TypeError):
        key.__reduce_ex__(2)


def test_key_repr_reveals_nothing(key: TraceKey) -> None:
    for text in (repr(key), str(key), f"{key!r}"):
        assert KNOWN_KEY.hex() not in text
        assert text == "TraceKey(<secret>)"


def test_key_has_no_public_attribute_holding_bytes(key: TraceKey) -> None:
    assert not hasattr(key, "__dict__")
    public = [name for name in dir(key) if not name.startswith("_")]
    assert set(public) == {
        "url_fingerprint",
        "state_fingerprint",
        "closed_state_fingerprint",
        "target_id",
        "stable_key",
    }
    for name in dir(key):
        value = getattr(key, name)
        assert not isinstance(value, bytes | bytearray | memoryview) or KNOWN_KEY not in bytes(value), name
    with pytest.raises(AttributeError):
        key.key = b"x"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "operation", [pickle.dumps, copy.copy, copy.deepcopy], ids=["pickle", "copy", "deepcopy"]
)
def test_log_holding_the_key_refuses_pickle_and_copy(operation: object) -> None:
    with pytest.raises(TypeError):
        operation(TraceLog(True))  # type: ignore[operator]


def test_key_hex_absent_from_log_repr_status_and_export() -> None:
    log = log_with_known_key()
    page = login_page()
    state = log.state(page)
    log.record("click", {}, log.target(page, "e1"), state, state, None, 5)
    texts = [repr(log), repr(log.key), compact_json(log.status()), compact_json(log.export("s"))]
    for text in texts:
        assert KNOWN_KEY.hex() not in text
        assert KNOWN_KEY.hex().upper() not in text
        assert "sha256" not in text.lower()


def test_known_key_patch_really_sets_the_log_key() -> None:
    log = log_with_known_key()
    assert log.key.url_fingerprint(URL) == "plasmate-url:v1:" + hand_fp(KNOWN_KEY, b"url", URL.encode())


def test_two_logs_give_different_fingerprints_for_the_same_url_and_som() -> None:
    page = login_page()
    one, two = TraceLog(True), TraceLog(True)
    a, b = one.state(page), two.state(page)
    assert a["origin"] == b["origin"]
    assert a["url_fingerprint"] != b["url_fingerprint"]
    assert a["fingerprint"] != b["fingerprint"]
    assert one.target(page, "e1")["stable_key"] != two.target(page, "e1")["stable_key"]  # type: ignore[index]
    assert one.target(page, "e1")["target_id"] != two.target(page, "e1")["target_id"]  # type: ignore[index]


def test_no_plain_sha256_of_page_content_is_used() -> None:
    log = TraceLog(True)
    page = login_page()
    state = log.state(page)
    plain = hashlib.sha256(page.som_text.encode()).hexdigest()  # type: ignore[union-attr]
    assert plain not in compact_json(state)
    assert log.state(page) == state  # deterministic under one key
    assert som(submit_button()) != som(submit_button(), title="Other")
