"""Hypothesis strategies for valid ``plasmate.trace.v1`` exports, and one-rule mutations of them.

Two sources of valid exports: the real trace core (a ``TraceLog`` recording random actions over
SOM pages, with clears, evictions and oversized events) and synthetic documents built field by
field, as another engine would write them (random keys, either key order). Each mutation breaks
one contract rule and re-measures ``retained_bytes`` so that no other rule breaks with it.
"""

from __future__ import annotations

import copy
import itertools
import json
import uuid
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from plasmate_nb.trace import TraceLog, compact_json, sanitize_parameters
from plasmate_nb.trace.compact import sorted_json, utf8_len
from plasmate_nb.trace.constants import (
    COARSE_ACTIONS,
    ERROR_CLASSES,
    MAX_BYTES,
    OMITTED_FIELDS,
    REDACTED_FIELDS_BY_ACTION,
    REDACTION_POLICY,
    SCHEMA,
    STATE_PREFIX,
    TARGET_ID_PREFIX,
    TARGET_KEY_PREFIX,
    TRACEABLE_ACTIONS,
    URL_PREFIX,
    VALUE_HANDLING,
)
from tests.trace.trace_testkit import element, email_input, page, som, submit_button

ORIGIN = "http://127.0.0.1:8000"
PAGES = [
    page(f"{ORIGIN}/login?next=/account", som(submit_button(), email_input())),
    page("https://shop.example.test/cart#items", som(submit_button("e7"), title="Cart")),
    # An element whose role alone is larger than an event may be: acting on it is oversized.
    page(f"{ORIGIN}/huge", som(element("e1", "r" * 5000, actions=["click"]))),
    page("data:text/html,<p>opaque</p>", som(email_input("e3"))),
    # Elements without a role (no SOM of the compiler has them): acting on them records no target.
    page(f"{ORIGIN}/roleless", som({"id": "e1", "actions": ["click"]}, element("e2", "", actions=["type"]))),
]
ELEMENT_ACTIONS = ("click", "type_text", "select_option", "toggle", "clear")
ERRORS = (
    None,
    "Element not found: e_x",
    "Invalid arguments: missing field `text`",
    "Navigation failed: Timeout after 5000ms",
    "Failed to fetch http://x/…: Outbound URL blocked: private address",
    "Evaluate failed: JavaScript error",
)
# Free text a client may legitimately send as a scroll direction (the cut one included).
DIRECTIONS = ("down", "up", "top", "bottom", "sideways", "x" * 600, "déjà vu ↓")
SESSION_ID = "0b7e1c7a-3f0e-4d8e-9c55-8d9f0f6b5a21"


def size(event: dict[str, Any]) -> int:
    return utf8_len(compact_json(event))


# -- from the real trace core ----------------------------------------------------------------------


@st.composite
def core_exports(draw: st.DrawFn, max_steps: int = 40) -> dict[str, Any]:
    """A TraceLog's export (or close_page answer) after random calls: secrets typed, errors, clears."""
    log = TraceLog(True)
    current = draw(st.sampled_from(PAGES[:2]))
    url = current.url
    log.record(
        "open_page",
        sanitize_parameters("open_page", {"url": url}, log.key),
        None,
        log.closed_state(),
        log.state(current),
        None,
        draw(st.integers(0, 3000)),
    )
    for _ in range(draw(st.integers(0, max_steps))):
        if draw(st.integers(0, 19)) == 0:
            log.clear()
            continue
        action = draw(st.sampled_from([a for a in TRACEABLE_ACTIONS if a not in ("open_page", "close_page")]))
        arguments: dict[str, Any] = {}
        if action in ELEMENT_ACTIONS or (action == "scroll" and draw(st.booleans())):
            arguments["element_id"] = draw(st.sampled_from(["e1", "e2", "e3", "e7", "missing"]))
        if action == "type_text":
            arguments["text"] = draw(
                st.sampled_from(["hunter2", "ada@example.test", "4111 1111 1111 1111", ""])
            )
            arguments["append"] = draw(st.sampled_from([True, False, "yes"]))
        if action == "select_option":
            arguments["value"] = draw(st.sampled_from(["team", "Bearer abcdefghijklmnop", 7]))
        if action == "scroll":
            arguments["direction"] = draw(st.sampled_from(DIRECTIONS))
            arguments["pixels"] = draw(st.integers(-500, 5000))
        if action in ("navigate_to",):
            arguments["url"] = draw(st.sampled_from([p.url for p in PAGES]))
        if action == "set_cookies":
            arguments["cookies"] = [{"name": "sid", "value": "s3cr3t-cookie-value"}] * draw(st.integers(0, 3))
        if action == "clear_cookies" and draw(st.booleans()):
            arguments["name"] = "sid"
        if action == "evaluate":
            arguments["expression"] = "document.cookie"
        before = current
        after = (
            draw(st.sampled_from([current, *PAGES]))
            if action not in COARSE_ACTIONS - {"evaluate"}
            else current
        )
        error = draw(st.sampled_from(ERRORS))
        target = log.target(before, arguments.get("element_id")) if action not in COARSE_ACTIONS else None
        log.record(
            action,
            sanitize_parameters(action, arguments, log.key),
            target,
            log.state(before),
            log.state(after),
            error,
            draw(st.integers(0, 60_000)),
        )
        current = after
    if not draw(st.booleans()):
        return log.export(SESSION_ID)
    final = log.detached_copy()
    final.record("close_page", {}, None, log.state(current), final.closed_state(), None, 3)
    answer = {"closed": True, "session_id": SESSION_ID, "final_trace": final.final_export(SESSION_ID)}
    return json.loads(json.dumps(answer, sort_keys=True))


# -- synthetic, as another engine would write them -----------------------------------------------

_hex = st.binary(min_size=32, max_size=32).map(bytes.hex)


@st.composite
def synthetic_exports(draw: st.DrawFn) -> dict[str, Any]:
    """A valid export built field by field: counters with gaps, any origin, struct or sorted keys."""
    states = [
        {
            "url_fingerprint": URL_PREFIX + draw(_hex),
            "origin": draw(st.sampled_from([ORIGIN, "https://example.test:443", "http://[::1]:8080", None])),
            "fingerprint": STATE_PREFIX + draw(_hex),
            "has_page": True,
        }
        for _ in range(draw(st.integers(1, 4)))
    ]
    closed = {
        "url_fingerprint": None,
        "origin": None,
        "fingerprint": STATE_PREFIX + draw(_hex),
        "has_page": False,
    }
    evicted, cleared, oversized_before = (draw(st.integers(0, 50)) for _ in range(3))
    sequence = evicted + cleared + oversized_before + 1
    oversized = oversized_before
    events = []
    current = closed if sequence == 1 else draw(st.sampled_from(states))
    for index in range(draw(st.integers(0, 30))):
        if index == 0 and sequence == 1:
            action = "open_page"
        else:
            action = draw(
                st.sampled_from([a for a in TRACEABLE_ACTIONS if a not in ("open_page", "close_page")])
            )
        after = draw(st.sampled_from(states))
        parameters = _synthetic_parameters(draw, action, after)
        event: dict[str, Any] = {
            "schema": SCHEMA,
            "sequence": sequence,
            "action": action,
            "parameters": parameters,
        }
        if (
            action not in COARSE_ACTIONS
            and action not in ("open_page", "navigate_to")
            and draw(st.booleans())
        ):
            event["target"] = {
                "provenance": "session-owned-som",
                "target_id": TARGET_ID_PREFIX + draw(_hex),
                "stable_key": TARGET_KEY_PREFIX + draw(_hex),
                "role": draw(st.sampled_from(["button", "link", "text_input", "checkbox"])),
            }
        event["before"] = dict(current)
        event["after"] = dict(after)
        error_class = draw(st.sampled_from((None, *ERROR_CLASSES)))
        event["outcome"] = "success" if error_class is None else "error"
        if error_class is not None:
            event["error_class"] = error_class
        event["duration_ms"] = draw(st.integers(0, 10**6))
        event["redaction"] = {
            "policy": SCHEMA,
            "value_handling": VALUE_HANDLING,
            "redacted_fields": list(REDACTED_FIELDS_BY_ACTION.get(action, ())),
            "omitted_fields": list(OMITTED_FIELDS),
        }
        events.append(event)
        current = after
        gap = draw(st.integers(0, 2))  # oversized events dropped between two retained ones
        oversized += gap
        sequence += 1 + gap
    oversized += draw(st.integers(0, 3))
    next_sequence = evicted + cleared + oversized + len(events) + 1
    document = {
        "schema": SCHEMA,
        "trace_id": str(uuid.UUID(bytes=draw(st.binary(min_size=16, max_size=16)), version=4)),
        "session_id": SESSION_ID,
        "retained_events": len(events),
        "retained_bytes": sum(size(e) for e in events),
        "next_sequence": next_sequence,
        "evicted_events": evicted,
        "oversized_events": oversized,
        "cleared_events": cleared,
        "redaction_policy": REDACTION_POLICY,
        "events": events,
    }
    return sorted_json(document) if draw(st.booleans()) else document


def _synthetic_parameters(draw: st.DrawFn, action: str, after: dict[str, Any]) -> dict[str, Any]:
    if action in ("open_page", "navigate_to"):
        return {"origin": after["origin"], "url_fingerprint": URL_PREFIX + draw(_hex)}
    marker = st.one_of(
        st.none(), st.builds(lambda n: {"byte_length": n, "redacted": True}, st.integers(0, 10**6))
    )
    if action == "type_text":
        return {"append": draw(st.booleans()), "value": draw(marker)}
    if action == "select_option":
        return {"value": draw(marker)}
    if action == "scroll":
        return {
            "direction": draw(st.sampled_from(DIRECTIONS[:5])),
            "pixels": draw(st.integers()),
            "targeted": False,
        }
    if action == "set_cookies":
        return {"cookie_count": draw(st.integers(0, 50))}
    if action == "clear_cookies":
        return {"filter_present": draw(st.booleans())}
    return {}


# -- one rule broken at a time ---------------------------------------------------------------------

Mutation = Callable[[dict[str, Any]], bool]  # mutates in place; False when it does not apply


def trace_of(document: dict[str, Any]) -> dict[str, Any]:
    return document.get("final_trace", document)


def remeasure(trace: dict[str, Any]) -> bool:
    trace["retained_bytes"] = sum(size(e) for e in trace["events"])
    return trace["retained_bytes"] <= MAX_BYTES


def _events(trace: dict[str, Any], where: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    return [e for e in trace["events"] if where(e)]


def _replace_everywhere(trace: dict[str, Any], old: str, new: str) -> None:
    text = json.dumps(trace, ensure_ascii=False).replace(json.dumps(old), json.dumps(new))
    trace.clear()
    trace.update(json.loads(text))


def _free_text(trace: dict[str, Any], text: str) -> bool:
    """Put ``text`` where the contract allows free text: a scroll direction, else a target role."""
    for event in trace["events"]:
        if event["action"] == "scroll":
            event["parameters"]["direction"] = text
            return remeasure(trace)
    for event in trace["events"]:
        if "target" in event:
            event["target"]["role"] = text
            return remeasure(trace)
    return False


def _drop_duration(trace: dict[str, Any]) -> bool:
    if not trace["events"]:
        return False
    del trace["events"][-1]["duration_ms"]
    return remeasure(trace)


def _reverse_state_keys(trace: dict[str, Any]) -> bool:
    if not trace["events"]:
        return False
    event = trace["events"][-1]
    event["after"] = dict(reversed(list(event["after"].items())))
    return True


def _short_fingerprint(trace: dict[str, Any]) -> bool:
    if not trace["events"]:
        return False
    value = trace["events"][-1]["after"]["fingerprint"]
    # 12 hex digits: too short to look like any secret (a card number has 13 digits or more).
    _replace_everywhere(trace, value, value[: len(STATE_PREFIX) + 12])
    return remeasure(trace)


def _origin_without_port(trace: dict[str, Any]) -> bool:
    if ORIGIN not in json.dumps(trace):
        return False
    _replace_everywhere(trace, ORIGIN, ORIGIN.rsplit(":", 1)[0])
    return remeasure(trace)


def _trace_id_not_uuid(trace: dict[str, Any]) -> bool:
    trace["trace_id"] = "trace-1"
    return True


def _short_omitted_fields(trace: dict[str, Any]) -> bool:
    if not trace["events"]:
        return False
    trace["events"][0]["redaction"]["omitted_fields"].pop()
    return remeasure(trace)


def _add_parameter(action_kind: Callable[[str], bool], key: str, value: Any) -> Mutation:
    def mutate(trace: dict[str, Any]) -> bool:
        events = _events(trace, lambda e: action_kind(e["action"]))
        if not events:
            return False
        events[0]["parameters"] = sorted_json({**events[0]["parameters"], key: value})
        return remeasure(trace)

    return mutate


def _retained_events_off(trace: dict[str, Any]) -> bool:
    trace["retained_events"] += 1
    trace["next_sequence"] += 1  # keeps the counter invariant: only the count is wrong
    return True


def _retained_bytes_off(trace: dict[str, Any]) -> bool:
    trace["retained_bytes"] += -1 if trace["retained_bytes"] else 1
    return True


def _pad_event(trace: dict[str, Any]) -> bool:
    if not trace["events"]:
        return False
    trace["events"][-1]["padding"] = ["p" * 100] * 45
    return remeasure(trace)


def _long_direction(trace: dict[str, Any]) -> bool:
    events = _events(trace, lambda e: e["action"] == "scroll")
    if not events:
        return False
    events[0]["parameters"]["direction"] = "w" * 600
    return remeasure(trace)


def _oversized_off(trace: dict[str, Any]) -> bool:
    trace["oversized_events"] += 1
    return True


def _swap_last_sequences(trace: dict[str, Any]) -> bool:
    if len(trace["events"]) < 3:
        return False
    last, before_last = trace["events"][-1], trace["events"][-2]
    last["sequence"], before_last["sequence"] = before_last["sequence"], last["sequence"]
    return True


def _first_sequence_too_early(trace: dict[str, Any]) -> bool:
    if not trace["events"]:
        return False
    shift = trace["events"][0]["sequence"] - trace["evicted_events"] - trace["cleared_events"]
    trace["evicted_events"] += shift
    trace["next_sequence"] += shift
    return True


def _typed_value_kept(trace: dict[str, Any]) -> bool:
    events = _events(trace, lambda e: e["action"] in ("type_text", "select_option"))
    if not events:
        return False
    events[0]["parameters"]["value"] = "hunter2"
    return remeasure(trace)


def _break_chain(trace: dict[str, Any]) -> bool:
    events = trace["events"]
    for previous, event in itertools.pairwise(events):
        if event["sequence"] == previous["sequence"] + 1 and event["action"] != "open_page":
            different = "1" if event["before"]["fingerprint"] != STATE_PREFIX + "1" * 64 else "2"
            event["before"]["fingerprint"] = STATE_PREFIX + different * 64
            return remeasure(trace)
    return False


def _error_without_class(trace: dict[str, Any]) -> bool:
    if not trace["events"]:
        return False
    event = trace["events"][-1]
    if event["outcome"] == "error":
        del event["error_class"]
    else:
        event["outcome"] = "error"
    return remeasure(trace)


def _open_page_with_a_page(trace: dict[str, Any]) -> bool:
    events = _events(trace, lambda e: e["action"] == "open_page")
    if not events:
        return False
    events[0]["before"]["has_page"] = True
    return remeasure(trace)


#: rule id -> (mutation, rules that may be reported with it because the same change breaks them too).
MUTATIONS: dict[str, tuple[Mutation, frozenset[str]]] = {
    "schema": (_drop_duration, frozenset()),
    "key-order": (_reverse_state_keys, frozenset()),
    "fingerprint-format": (_short_fingerprint, frozenset()),
    "origin-format": (_origin_without_port, frozenset()),
    "handle-format": (_trace_id_not_uuid, frozenset()),
    "redaction-metadata": (_short_omitted_fields, frozenset()),
    "parameters-shape": (_add_parameter(lambda a: a not in COARSE_ACTIONS, "note", 1), frozenset()),
    "retained-events": (_retained_events_off, frozenset()),
    "retained-bytes": (_retained_bytes_off, frozenset()),
    "event-size": (_pad_event, frozenset({"schema"})),
    "string-size": (_long_direction, frozenset()),
    "counter-invariant": (_oversized_off, frozenset()),
    "sequence-order": (_swap_last_sequences, frozenset()),
    "first-sequence": (_first_sequence_too_early, frozenset()),
    "readable-url": (lambda t: _free_text(t, "https://example.test:443/account/42?tab=billing"), frozenset()),
    "redacted-value": (_typed_value_kept, frozenset()),
    "coarse-event": (
        _add_parameter(lambda a: a in COARSE_ACTIONS, "expression", "document.cookie"),
        frozenset(),
    ),
    "secret-like": (
        lambda t: _free_text(t, "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlcw"),
        frozenset(),
    ),
    "digest-word": (lambda t: _free_text(t, "sha256"), frozenset()),
    "state-chain": (_break_chain, frozenset()),
    "outcome-error-class": (_error_without_class, frozenset()),
    "lifecycle-states": (_open_page_with_a_page, frozenset()),
}


def mutated(document: dict[str, Any], rule: str) -> dict[str, Any] | None:
    """A copy of ``document`` with ``rule`` broken, or ``None`` when the mutation does not apply."""
    copied = copy.deepcopy(document)
    mutate, _ = MUTATIONS[rule]
    return copied if mutate(trace_of(copied)) else None
