"""The audit's checks of one document against the contract: each yields ``(rule id, path, sequence, message)``.

Every check reads the document defensively (an export from another engine may be malformed in any
way); the JSON schema reports shape errors once, and each check looks only at what it can read.
Messages name fields, counts and lengths, never a string value taken from the document, so an
audit report cannot repeat what it found.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Iterator
from typing import Any, TypeGuard
from urllib.parse import urlsplit

from plasmate_nb.analysis.secret_patterns import FINGERPRINT, find_secret_like
from plasmate_nb.notebook.export import COUNTERS, schema, schema_accepts, schema_validator
from plasmate_nb.trace.compact import compact_json, utf8_len
from plasmate_nb.trace.constants import (
    COARSE_ACTIONS,
    ERROR_CLASSES,
    FINAL_TRACE_OMITTED_REASON,
    MAX_BYTES,
    MAX_EVENT_BYTES,
    MAX_EVENTS,
    MAX_EXPORT_BYTES,
    MAX_HANDLE_BYTES,
    MAX_STRING_BYTES,
    OMITTED_FIELDS,
    OUTCOME_ERROR,
    OUTCOME_SUCCESS,
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
from plasmate_nb.trace.origin import origin as canonical_origin
from plasmate_nb.trace.sanitize import sanitize_parameters

Issue = tuple[str, str, int | None, str]  # rule id, JSON path, event sequence, message

_DEFS = schema()["$defs"]
#: Field orders the contract fixes (docs/contract.md#scope-and-conventions), as the schema lists them.
EXPORT_ORDER = tuple(_DEFS["export"]["properties"])
EVENT_ORDER = tuple(_DEFS["event"]["properties"])
STATE_ORDER = tuple(_DEFS["state"]["properties"])
TARGET_ORDER = tuple(_DEFS["target"]["properties"])
REDACTION_ORDER = tuple(_DEFS["redaction"]["properties"])
_STRUCT_ORDERS = {
    "before": STATE_ORDER,
    "after": STATE_ORDER,
    "target": TARGET_ORDER,
    "redaction": REDACTION_ORDER,
}

# What the sanitiser writes for each action, from the sanitiser itself: the key set, and the keys
# where only a redaction marker (or null) may stand.
_SAMPLE_ARGUMENTS = {"text": "x", "value": "x", "url": "http://x/", "cookies": [], "name": "x"}
PARAMETER_KEYS: dict[str, frozenset[str]] = {
    action: frozenset(sanitize_parameters(action, _SAMPLE_ARGUMENTS)) for action in TRACEABLE_ACTIONS
}
REDACTED_VALUE_KEYS: dict[str, frozenset[str]] = {
    action: frozenset(
        key
        for key, value in sanitize_parameters(action, _SAMPLE_ARGUMENTS).items()
        if isinstance(value, dict)
    )
    for action in TRACEABLE_ACTIONS
}
_FINGERPRINT_PREFIXES = {
    "url_fingerprint": URL_PREFIX,
    "fingerprint": STATE_PREFIX,
    "target_id": TARGET_ID_PREFIX,
    "stable_key": TARGET_KEY_PREFIX,
}
_HEX64 = re.compile(r"[0-9a-f]{64}")
UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
_URL = re.compile(r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://[^\s\"'<>]*")  # look-behind: linear time
_QUERY = re.compile(r"[?&][A-Za-z0-9_.\-]+=")
_DIGEST_WORD = re.compile("sha-?256", re.IGNORECASE)
# A string above MAX_STRING_BYTES has more than a quarter as many characters, and its JSON text at
# least as many after its opening quote with no unescaped quote among them. Text between strings
# can match too (a long array of numbers): then the strings are walked anyway.
_LONG_RUN = re.compile(r'"(?:[^"\\]|\\.){' + str(MAX_STRING_BYTES // 4) + "}")
# Names a path may show: the contract's own field names. Any other key is shown by its length only.
_KNOWN_NAMES = (
    frozenset(name for definition in _DEFS.values() for name in definition.get("properties", {}))
    | frozenset(key for keys in PARAMETER_KEYS.values() for key in keys)
    | frozenset(name for names in REDACTED_FIELDS_BY_ACTION.values() for name in names)
    | frozenset(OMITTED_FIELDS)
    | {"byte_length", "redacted"}
)


def _name(key: Any) -> str:
    return key if key in _KNOWN_NAMES else f"<key of {utf8_len(str(key))} bytes>"


def json_path(*parts: Any) -> str:
    """``$.events[3].before`` from ``("events", 3, "before")``; unknown keys shown by length only."""
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{_name(p)}" for p in parts)


def _int(value: Any) -> TypeGuard[int]:
    return type(value) is int  # not bool, which JSON keeps apart from numbers


# -- the schema ----------------------------------------------------------------------------------


def schema_issues(document: Any, plain: bool) -> Iterator[Issue]:
    """The shipped JSON schema's errors, each under the rule it enforces; messages name no values.

    A ``plain`` document (JSON values only) that the compiled validator accepts has none
    (``schema_accepts``: no jsonschema at all, which would cost about a millisecond an event).
    Otherwise the envelope is validated
    without its events, and each event on its own (cached by its text: the exports of one
    session repeat most events).
    """
    if plain and schema_accepts(document):
        return
    events = document.get("events") if isinstance(document, dict) else None
    if not isinstance(events, list) or "omitted" in document:
        for error in schema_validator().iter_errors(document):
            parts = list(error.absolute_path)
            yield _schema_rule(error, parts, None), json_path(*parts), None, _schema_message(error)
        return
    for error in schema_validator().iter_errors({**document, "events": []}):
        parts = list(error.absolute_path)
        yield _schema_rule(error, parts, None), json_path(*parts), None, _schema_message(error)
    for index, event in enumerate(events):
        sequence = _sequence(event)
        for rule, inner, message in _event_schema_issues(compact_json(event)):
            yield rule, json_path("events", index, *inner), sequence, message


@functools.lru_cache(maxsize=16_384)
def _event_schema_issues(text: str) -> tuple[tuple[str, tuple[Any, ...], str], ...]:
    event = json.loads(text)
    action = _action(event) if isinstance(event, dict) else None
    return tuple(
        (
            _schema_rule(error, ["events", 0, *error.absolute_path], action),
            tuple(error.absolute_path),
            _schema_message(error),
        )
        for error in _event_validator().iter_errors(event)
    )


@functools.cache
def _event_validator() -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator({"$ref": "#/$defs/event", "$defs": _DEFS})


def _schema_rule(error: Any, parts: list[Any], action: Any) -> str:
    last = parts[-1] if parts else None
    missing = _missing(error)
    if last in ("outcome", "error_class") or error.validator == "not" or "error_class" in missing:
        return "outcome-error-class"
    if last in _FINGERPRINT_PREFIXES:
        return "fingerprint-format"
    if last == "origin":
        return "origin-format"
    if last in ("trace_id", "session_id"):
        return "handle-format"
    if "redaction" in parts[2:]:
        return "redaction-metadata"
    if "parameters" in parts:
        if last == "value" and action in REDACTED_VALUE_KEYS and "value" in REDACTED_VALUE_KEYS[action]:
            return "redacted-value"
        if last == "direction" and error.validator == "maxLength":
            return "string-size"
        return "coarse-event" if action in COARSE_ACTIONS else "parameters-shape"
    if parts in (["events"], ["retained_events"]) and error.validator in ("maxItems", "maximum"):
        return "retained-events"
    if parts == ["retained_bytes"] and error.validator == "maximum":
        return "retained-bytes"
    return "schema"


def _missing(error: Any) -> list[str]:
    if error.validator != "required" or not isinstance(error.instance, dict):
        return []
    return [name for name in error.validator_value if name not in error.instance]


def _schema_message(error: Any) -> str:
    kind = error.validator
    if kind == "required":
        return "misses required field(s): " + ", ".join(_missing(error))
    if kind == "additionalProperties":
        extra = [key for key in error.instance if key not in error.schema.get("properties", {})]
        return f"has {len(extra)} field(s) the contract does not define: " + ", ".join(
            _name(k) for k in extra
        )
    if kind == "type":
        return f"must be of JSON type {error.validator_value}"
    if kind in ("const", "enum"):
        return "is not one of the values the contract allows"
    if kind == "pattern":
        return "does not have the contract's format"
    if kind in ("oneOf", "anyOf"):
        return "matches none of the forms the contract allows"
    if kind == "not":
        return "error_class must be absent when outcome is success"
    if kind in ("minimum", "maximum", "minLength", "maxLength", "maxItems", "minItems"):
        return f"violates {kind} {error.validator_value}"
    if kind == "uniqueItems":
        return "repeats an item"
    return f"fails the schema's {kind} check"


# -- structure -----------------------------------------------------------------------------------


def _sequence(event: Any) -> int | None:
    return event.get("sequence") if isinstance(event, dict) and _int(event.get("sequence")) else None


def _events(document: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    events = document.get("events")
    if not isinstance(events, list):
        return []
    return [(index, event) for index, event in enumerate(events) if isinstance(event, dict)]


def key_order_issues(document: dict[str, Any]) -> Iterator[Issue]:
    """Struct order as the contract shows it, or sorted at every level (a final_trace, structuredContent)."""
    keys = [k for k in document if k in EXPORT_ORDER]  # unknown keys are the schema's to report
    if keys == [k for k in EXPORT_ORDER if k in document]:
        mode: str | None = "struct"
    elif keys == sorted(keys):
        mode = "sorted"
    else:
        mode = None
        yield (
            "key-order",
            "$",
            None,
            "the envelope's keys are in neither the export's field order nor sorted order",
        )
    for index, event in _events(document):
        modes = (mode,) if mode else ("struct", "sorted")
        failures = [_first_disorder(event, m, ("events", index)) for m in modes]
        if all(failures):
            where = failures[0] or ()
            expected = "sorted order" if modes == ("sorted",) else "the event's field order"
            if mode is None:
                expected = "either the event's field order or sorted order"
            yield "key-order", json_path(*where), _sequence(event), f"keys are not in {expected}"


def _first_disorder(event: dict[str, Any], mode: str, at: tuple[Any, ...]) -> tuple[Any, ...] | None:
    def ordered(obj: dict[str, Any], order: tuple[str, ...] | None) -> bool:
        # Unknown keys are the schema's to report, whatever their place.
        if order is None:
            known = [k for k in obj if k in _KNOWN_NAMES]
            return known == sorted(known)
        return [k for k in obj if k in order] == [k for k in order if k in obj]

    struct = mode == "struct"
    if not ordered(event, EVENT_ORDER if struct else None):
        return at
    for name, value in event.items():
        if not isinstance(value, dict):
            continue
        order = _STRUCT_ORDERS.get(name) if struct else None
        if not ordered(value, order):
            return (*at, name)
        for inner, nested in value.items():  # a redacted value marker inside parameters
            if isinstance(nested, dict) and not ordered(nested, None):
                return (*at, name, inner)
    return None


def format_issues(document: dict[str, Any]) -> Iterator[Issue]:
    """Handles, fingerprints and origins in their canonical forms; redaction metadata as the contract writes it."""
    for name in ("trace_id", "session_id"):
        value = document.get(name)
        if isinstance(value, str) and not UUID4.fullmatch(value):
            detail = "longer than the handle bound" if utf8_len(value) > MAX_HANDLE_BYTES else ""
            yield "handle-format", json_path(name), None, f"is not a lowercase UUID v4 {detail}".strip()
    policy = document.get("redaction_policy")
    if isinstance(policy, str) and policy != REDACTION_POLICY:
        yield "redaction-metadata", json_path("redaction_policy"), None, "differs from the contract's text"
    for index, event in _events(document):
        sequence = _sequence(event)
        at = ("events", index)
        for place in ("before", "after", "target"):
            obj = event.get(place)
            if not isinstance(obj, dict):
                continue
            for name, prefix in _FINGERPRINT_PREFIXES.items():
                value = obj.get(name)
                if isinstance(value, str) and not (
                    value.startswith(prefix) and _HEX64.fullmatch(value[len(prefix) :])
                ):
                    yield (
                        "fingerprint-format",
                        json_path(*at, place, name),
                        sequence,
                        f"is not {prefix} followed by 64 lowercase hex digits",
                    )
        for place in ("before", "after", "parameters"):
            obj = event.get(place)
            if isinstance(obj, dict):
                if place == "parameters" and isinstance(obj.get("url_fingerprint"), str):
                    value = obj["url_fingerprint"]
                    if not (value.startswith(URL_PREFIX) and _HEX64.fullmatch(value[len(URL_PREFIX) :])):
                        yield (
                            "fingerprint-format",
                            json_path(*at, place, "url_fingerprint"),
                            sequence,
                            f"is not {URL_PREFIX} followed by 64 lowercase hex digits",
                        )
                value = obj.get("origin")
                if isinstance(value, str) and canonical_origin(value) != value:
                    yield (
                        "origin-format",
                        json_path(*at, place, "origin"),
                        sequence,
                        "is not a canonical scheme://host:port origin (port always written)",
                    )
        yield from _redaction_issues(event, at, sequence)


def _action(event: dict[str, Any]) -> str | None:
    """The event's action when it is a string (a damaged export may hold any JSON value there)."""
    action = event.get("action")
    return action if isinstance(action, str) else None


def _redaction_issues(event: dict[str, Any], at: tuple[Any, ...], sequence: int | None) -> Iterator[Issue]:
    redaction = event.get("redaction")
    action = _action(event)
    if not isinstance(redaction, dict) or action not in TRACEABLE_ACTIONS:
        return
    expected = {
        "policy": SCHEMA,
        "value_handling": VALUE_HANDLING,
        "redacted_fields": list(REDACTED_FIELDS_BY_ACTION.get(action, ())),
        "omitted_fields": list(OMITTED_FIELDS),
    }
    for name, value in expected.items():
        if name in redaction and redaction[name] != value:
            yield (
                "redaction-metadata",
                json_path(*at, "redaction", name),
                sequence,
                f"differs from what the contract writes for {action}",
            )


def parameter_issues(document: dict[str, Any]) -> Iterator[Issue]:
    """Exactly the sanitised parameters per action; redaction markers only; coarse events stay coarse."""
    for index, event in _events(document):
        action, parameters = _action(event), event.get("parameters")
        if action not in PARAMETER_KEYS or not isinstance(parameters, dict):
            continue
        sequence = _sequence(event)
        at = ("events", index, "parameters")
        coarse = action in COARSE_ACTIONS
        extra = [key for key in parameters if key not in PARAMETER_KEYS[action]]
        missing = sorted(PARAMETER_KEYS[action] - parameters.keys())
        if extra:
            rule = "coarse-event" if coarse else "parameters-shape"
            names = ", ".join(_name(key) for key in extra)
            yield rule, json_path(*at), sequence, f"{action} keeps no such parameter(s): {names}"
        if missing:
            rule = "coarse-event" if coarse else "parameters-shape"
            yield rule, json_path(*at), sequence, f"{action} misses parameter(s): {', '.join(missing)}"
        if coarse and "target" in event:
            yield (
                "coarse-event",
                json_path("events", index, "target"),
                sequence,
                f"{action} is coarse and never names a target",
            )
        for key in REDACTED_VALUE_KEYS[action] & parameters.keys():
            value = parameters[key]
            marker = (
                isinstance(value, dict)
                and value.keys() == {"byte_length", "redacted"}
                and value["redacted"] is True
                and _int(value["byte_length"])
                and value["byte_length"] >= 0
            )
            if value is not None and not marker:
                yield (
                    "redacted-value",
                    json_path(*at, key),
                    sequence,
                    'only null or {"byte_length": N, "redacted": true} may stand here',
                )


# -- bounds and counters -------------------------------------------------------------------------


def bounds_issues(document: dict[str, Any], final_trace: bool) -> Iterator[Issue]:
    """Sizes, counts and the counter invariant; the final-trace ceiling when the document is one."""
    events = document.get("events")
    if isinstance(events, list):
        retained = document.get("retained_events")
        if _int(retained) and retained != len(events):
            yield (
                "retained-events",
                json_path("retained_events"),
                None,
                f"says {retained} but events holds {len(events)}",
            )
        if len(events) > MAX_EVENTS:
            yield (
                "retained-events",
                json_path("events"),
                None,
                f"holds {len(events)} events, above the bound of {MAX_EVENTS}",
            )
        texts = [compact_json(event) for event in events]
        sizes = [utf8_len(text) for text in texts]
        total = document.get("retained_bytes")
        if _int(total) and total != sum(sizes):
            yield (
                "retained-bytes",
                json_path("retained_bytes"),
                None,
                f"says {total} but the events measure {sum(sizes)} bytes",
            )
        if sum(sizes) > MAX_BYTES:
            yield (
                "retained-bytes",
                json_path("events"),
                None,
                f"the events measure {sum(sizes)} bytes, above the bound of {MAX_BYTES}",
            )
        for index, size in enumerate(sizes):
            if size > MAX_EVENT_BYTES:
                yield (
                    "event-size",
                    json_path("events", index),
                    _sequence(events[index]),
                    f"measures {size} bytes, above the bound of {MAX_EVENT_BYTES}",
                )
        for index, event in _events(document):
            if not _LONG_RUN.search(texts[index]):
                continue  # no string in it is that long: the event's strings are not walked
            for parts, text in _strings(event, ("events", index)):
                if utf8_len(text) > MAX_STRING_BYTES:
                    yield (
                        "string-size",
                        json_path(*parts),
                        _sequence(event),
                        f"a string of {utf8_len(text)} bytes, above the bound of {MAX_STRING_BYTES}",
                    )
    yield from _counter_issues(document)
    if final_trace and utf8_len(compact_json(document)) > MAX_EXPORT_BYTES:
        yield (
            "final-trace-ceiling",
            "$",
            None,
            f"the final trace measures {utf8_len(compact_json(document))} bytes; above {MAX_EXPORT_BYTES} it must be the omitted marker",
        )


def _counter_issues(document: dict[str, Any]) -> Iterator[Issue]:
    raw = {name: document.get(name) for name in COUNTERS}
    if not all(_int(value) for value in raw.values()):
        return  # the schema reports the types
    counters: dict[str, int] = {name: value for name, value in raw.items() if _int(value)}
    next_sequence = counters["next_sequence"]
    removed = counters["evicted_events"] + counters["cleared_events"]
    accounted = counters["retained_events"] + removed + counters["oversized_events"]
    if next_sequence - 1 != accounted:
        yield (
            "counter-invariant",
            json_path("next_sequence"),
            None,
            f"next_sequence - 1 is {next_sequence - 1} but retained + evicted + oversized + cleared is {accounted}",
        )
    sequences: list[tuple[int, int]] = [
        (index, event["sequence"]) for index, event in _events(document) if _int(event.get("sequence"))
    ]
    previous = 0
    for index, sequence in sequences:
        if sequence <= previous:
            yield (
                "sequence-order",
                json_path("events", index, "sequence"),
                sequence,
                f"does not increase (previous {previous})",
            )
        elif sequence >= next_sequence:
            yield (
                "sequence-order",
                json_path("events", index, "sequence"),
                sequence,
                f"is not below next_sequence ({next_sequence})",
            )
        previous = max(previous, sequence)
    if not sequences:
        return
    first = sequences[0][1]
    if first <= removed:
        yield (
            "first-sequence",
            json_path("events", 0, "sequence"),
            first,
            f"the first retained sequence must come after the {removed} evicted and cleared ones",
        )
    elif first > removed + counters["oversized_events"] + 1:
        yield (
            "first-sequence",
            json_path("events", 0, "sequence"),
            first,
            f"{first - 1} earlier sequences but only {removed + counters['oversized_events']} evicted, cleared or oversized",
        )


def omitted_marker_issues(document: dict[str, Any]) -> Iterator[Issue]:
    if isinstance(document.get("reason"), str) and document["reason"] != FINAL_TRACE_OMITTED_REASON:
        yield (
            "final-trace-ceiling",
            json_path("reason"),
            None,
            "the omitted marker's reason differs from the contract's text",
        )


# -- privacy -------------------------------------------------------------------------------------


def _strings(value: Any, at: tuple[Any, ...]) -> list[tuple[tuple[Any, ...], str]]:
    """Every string in ``value`` (keys too, at their object's path) with its path, in document
    order. A list, not a generator: an audit reads millions of strings, and re-yielding each
    through every level of nesting cost more than the checks on them."""
    found: list[tuple[tuple[Any, ...], str]] = []

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        if isinstance(node, str):
            found.append((path, node))
        elif isinstance(node, dict):
            for key, item in node.items():
                found.append((path, str(key)))
                walk(item, (*path, key))
        elif isinstance(node, list):
            for index, item in enumerate(node):
                walk(item, (*path, index))

    walk(value, at)
    return found


def privacy_issues(document: dict[str, Any]) -> Iterator[Issue]:
    """Readable URL parts, secret-shaped strings and digests anywhere in the document."""
    for parts, text in _strings(document, ()):
        found = _string_issues(text)
        if not found:
            continue
        sequence = None
        if len(parts) >= 2 and parts[0] == "events" and isinstance(parts[1], int):
            sequence = _sequence(document["events"][parts[1]])
        for rule, message in found:
            yield rule, json_path(*parts), sequence, message


@functools.lru_cache(maxsize=65_536)
def _string_issues(text: str) -> tuple[tuple[str, str], ...]:
    """The privacy findings of one string (cached: fingerprints and constants repeat in every event)."""
    found = []
    scrubbed = FINGERPRINT.sub(" ", text)
    for match in _URL.finditer(scrubbed):
        if _readable(match.group()):
            length = len(match.group())
            found.append(
                ("readable-url", f"a URL of {length} characters with a path, query, fragment or user info")
            )
    if _QUERY.search(scrubbed) and not _URL.search(scrubbed):
        found.append(("readable-url", "a query string"))
    for secret in find_secret_like(text):
        found.append(("secret-like", f"{secret.kind} of {secret.length} characters at offset {secret.start}"))
    if _DIGEST_WORD.search(scrubbed):
        found.append(("digest-word", "names a sha256 digest"))
    return tuple(found)


def _readable(url: str) -> bool:
    """More than an origin: a path beyond ``/``, a query, a fragment or user info (unparseable counts)."""
    try:
        parts = urlsplit(url)
        user = parts.username or parts.password
    except ValueError:
        return True
    return bool(user or parts.query or parts.fragment or parts.path not in ("", "/"))


# -- consistency ---------------------------------------------------------------------------------


def consistency_issues(document: dict[str, Any]) -> Iterator[Issue]:
    """Outcome and error class agree; states chain between adjacent sequences; the lifecycle's closed states."""
    events = _events(document)
    closed_fingerprints: set[str] = set()
    for index, event in events:
        sequence = _sequence(event)
        outcome, error_class = event.get("outcome"), event.get("error_class")
        if outcome == OUTCOME_ERROR and error_class not in ERROR_CLASSES:
            yield (
                "outcome-error-class",
                json_path("events", index),
                sequence,
                "an error without one of the contract's error classes",
            )
        if outcome == OUTCOME_SUCCESS and "error_class" in event:
            yield (
                "outcome-error-class",
                json_path("events", index),
                sequence,
                "a success carries an error_class",
            )
        for place, action in (("before", "open_page"), ("after", "close_page")):
            state = event.get(place)
            if event.get("action") != action or not isinstance(state, dict):
                continue
            if (
                state.get("url_fingerprint") is not None
                or state.get("origin") is not None
                or state.get("has_page") is not False
            ):
                yield (
                    "lifecycle-states",
                    json_path("events", index, place),
                    sequence,
                    f"{action}'s {place} must be the closed state",
                )
            elif isinstance(state.get("fingerprint"), str):
                closed_fingerprints.add(state["fingerprint"])
        if event.get("action") == "close_page" and index != len(document["events"]) - 1:
            yield "lifecycle-states", json_path("events", index), sequence, "events follow close_page"
    if len(closed_fingerprints) > 1:
        yield (
            "lifecycle-states",
            "$.events",
            None,
            "the closed states of one trace have different fingerprints",
        )
    for (_, previous), (index, event) in itertools.pairwise(events):
        before, after = event.get("before"), previous.get("after")
        if not (isinstance(before, dict) and isinstance(after, dict)):
            continue
        adjacent = _int(previous.get("sequence")) and event.get("sequence") == previous["sequence"] + 1
        if adjacent and event.get("action") != "open_page" and before != after:
            fields = [name for name in STATE_ORDER if before.get(name) != after.get(name)]
            yield (
                "state-chain",
                json_path("events", index, "before"),
                _sequence(event),
                f"differs from the after of sequence {previous['sequence']} ({', '.join(fields) or 'extra fields'})",
            )
