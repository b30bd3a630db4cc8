"""The compiled validator (fastjsonschema, draft-07) and jsonschema (Draft 2020-12) agree on the schema.

``load_trace`` accepts a document when the compiled validator does, and loads jsonschema only
to explain a rejection, so the two must give the same verdict. Valid exports come from the real
trace core and from a synthetic writer (tests/analysis/export_builders.py); each is then broken
once at a random place: a value of another type, a missing or an extra key, a string that misses
its pattern or its length bounds, a bool where an integer belongs, a counter out of range, an
array too long or with a repeated item. Omitted final-trace markers are checked the same way.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plasmate_nb.notebook.export import (
    TraceFormatError,
    _fast_validator,
    _raise_first_error,
    load_trace,
    schema_validator,
)
from plasmate_nb.trace.constants import SCHEMA
from tests.analysis.export_builders import MUTATIONS, core_exports, mutated, synthetic_exports, trace_of

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Values of every JSON type, at the edges the schema draws: bools where integers belong, negative
# and too-large counters, strings around the handle bounds (1..64), near-miss fingerprints.
# No string ends in a newline: Python's ``$`` matches before one, which fastjsonschema (reading
# ``$`` as ``\Z``) does not, so such a string is rejected by it and accepted by jsonschema
# (load_trace then follows jsonschema; see the one-way test below).
REPLACEMENTS: list[Any] = [
    None, True, False, 0, 1, -1, 1.5, 128, 129, 49_152, 49_153, 10**20,
    "", "x", "x" * 64, "x" * 65, "plasmate-state:v1:" + "0" * 63, "plasmate-url:v1:" + "A" * 64,
    "http://127.0.0.1", "HTTP://127.0.0.1:80", SCHEMA, [], [1], ["cookies"], {}, {"byte_length": 1},
]  # fmt: skip


def _fast_accepts(document: Any) -> bool:
    from fastjsonschema import JsonSchemaValueException

    try:
        _fast_validator()(document)
    except JsonSchemaValueException:
        return False
    return True


def _agree(document: Any) -> None:
    slow = schema_validator().is_valid(document)
    assert _fast_accepts(document) == slow, (slow, json.dumps(document)[:2000])


def _places(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into ``node`` (the root included), in document order."""
    found = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _places(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _places(value, (*path, index))
    return found


def _at(node: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        node = node[step]
    return node


@st.composite
def broken(draw: st.DrawFn, valid: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    """A valid document with one random change somewhere in it."""
    document = copy.deepcopy(trace_of(draw(valid)))
    path = draw(st.sampled_from(_places(document)))
    target = _at(document, path)
    kinds = ["replace", "extra"] if isinstance(target, dict) else ["replace"]
    if isinstance(target, dict) and target:
        kinds.append("drop")
    if isinstance(target, list) and target:
        kinds += ["repeat", "grow"]
    if isinstance(target, str) and target:
        kinds += ["cut", "change"]
    kind = draw(st.sampled_from(kinds))
    if kind == "replace":
        if not path:
            return draw(st.sampled_from(REPLACEMENTS))
        _at(document, path[:-1])[path[-1]] = copy.deepcopy(draw(st.sampled_from(REPLACEMENTS)))
    elif kind == "extra":
        target[draw(st.sampled_from(["note", "value", "target", "omitted", "error_class"]))] = draw(
            st.sampled_from(REPLACEMENTS)
        )
    elif kind == "drop":
        del target[draw(st.sampled_from(sorted(target)))]
    elif kind == "repeat":
        target.append(copy.deepcopy(target[0]))
    elif kind == "grow":
        target.extend(copy.deepcopy(target[-1:]) * 129)
    elif kind == "cut":
        _at(document, path[:-1])[path[-1]] = target[: draw(st.integers(0, len(target) - 1))]
    else:  # one character changed: a fingerprint or origin that misses its pattern by one
        index = draw(st.integers(0, len(target) - 1))
        replacement = draw(st.sampled_from(["G", "0", ":", "/", " ", "é"]))
        _at(document, path[:-1])[path[-1]] = target[:index] + replacement + target[index + 1 :]
    return document


VALID = st.one_of(core_exports(max_steps=12), synthetic_exports())
MARKERS = st.builds(
    lambda reason: {"schema": SCHEMA, "omitted": True, "reason": reason}, st.text(max_size=40)
)


@SETTINGS
@given(VALID)
def test_both_accept_valid_exports(document: dict[str, Any]) -> None:
    trace = trace_of(document)
    assert _fast_accepts(trace) and schema_validator().is_valid(trace)


@SETTINGS
@given(broken(VALID))
def test_both_give_the_same_verdict_on_broken_exports(document: Any) -> None:
    _agree(document)


@SETTINGS
@given(st.one_of(MARKERS, broken(MARKERS)))
def test_both_give_the_same_verdict_on_omitted_markers(document: Any) -> None:
    _agree(document)


@SETTINGS
@given(VALID, st.sampled_from(sorted(MUTATIONS)))
def test_both_give_the_same_verdict_on_the_audit_mutations(document: dict[str, Any], rule: str) -> None:
    # Most of these break rules a schema cannot state (counters, chains, redaction): both accept.
    changed = mutated(document, rule)
    if changed is not None:
        _agree(trace_of(changed))


@SETTINGS
@given(VALID, st.data())
def test_a_compiled_acceptance_is_never_a_jsonschema_rejection(
    document: dict[str, Any], data: st.DataObject
) -> None:
    """Any text in any string of an export: the compiled validator accepts only what jsonschema accepts."""
    trace = copy.deepcopy(trace_of(document))
    strings = [path for path in _places(trace) if isinstance(_at(trace, path), str)]
    path = data.draw(st.sampled_from(strings))
    original = _at(trace, path)
    text = data.draw(st.one_of(st.text(max_size=80), st.just(original + "\n"), st.just(original[:-1] + "\n")))
    _at(trace, path[:-1])[path[-1]] = text
    if _fast_accepts(trace):
        assert schema_validator().is_valid(trace)


def test_a_rejected_document_keeps_jsonschemas_message() -> None:
    marker = {"schema": SCHEMA, "omitted": 1, "reason": "too big"}
    assert not _fast_accepts(marker)
    with pytest.raises(TraceFormatError) as direct:
        _raise_first_error(schema_validator(), marker, None)
    with pytest.raises(TraceFormatError) as loaded:
        load_trace(marker)
    assert str(loaded.value) == str(direct.value) and loaded.value.path == "$.omitted"


@SETTINGS
@given(VALID, st.data())
def test_load_trace_of_a_dict_takes_a_tuple_for_no_array(
    document: dict[str, Any], data: st.DataObject
) -> None:
    """The compiled validator takes a tuple where an array belongs; a dict given to load_trace
    (or a server's answer) is held to jsonschema there, which does not."""
    trace = copy.deepcopy(trace_of(document))
    arrays = [path for path in _places(trace) if isinstance(_at(trace, path), list)]  # events, at least
    path = data.draw(st.sampled_from(arrays))
    _at(trace, path[:-1])[path[-1]] = tuple(_at(trace, path))
    assert _fast_accepts(trace)  # what the shortcut alone would have let through
    with pytest.raises(TraceFormatError) as error:
        load_trace(trace)
    assert "is not of type 'array'" in str(error.value)
