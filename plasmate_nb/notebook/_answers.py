"""The shape of each server answer the notebook reads, checked where the answer is received.

``Session.connect`` talks to any MCP server, and a buggy or hostile one can answer any tool with
any JSON. Before anything is built from an answer (a ``Page``, a ``ReplayPlan``, a count, a
trace object) the fields the notebook reads are checked against the contract
(docs/contract.md#answers, #the-semantic-object-model); an export (``trace_export``,
``close_page``'s final trace) as ``load_trace`` checks a file. A wrong one is a
:class:`ServerAnswerError` that names the tool, the JSON path and what came instead, never the
value (it may be page text, which no trace holds).
Fields the notebook does not read, and fields it does not know (a newer server's), may hold
anything. The walk over a SOM is iterative, and what the notebook keeps nests no deeper than the
reprs and diffs that read it can go (``MAX_REGIONS_DEPTH``, ``MAX_JSON_DEPTH``): no nesting depth
reaches the recursion limit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .. import errors
from ..client.base import ServerAnswerError
from ..trace.constants import REPLAY_STATUSES, SCHEMA, STATUS_REFUSED
from .export import (
    STATUS_FIELDS,
    FinalTraceOmitted,
    TraceCleared,
    TraceExport,
    TraceFormatError,
    TraceStatus,
    checked_trace,
    is_count,
)

Json = dict[str, Any]

TEXT, OBJECT, ARRAY = "text", "an object", "an array"
COUNT = "a whole number of at least 0 (64 bits at most)"
MISSING = object()  # a field the answer does not have
#: How deep a page's ``regions`` may nest (arrays and objects; the list itself is level 1). A
#: compiled SOM nests a few levels per shadow root; a page nested near Python's recursion limit
#: would pass the iterative walk and then break ``Page.changes()``, whose diff compares with ``==``.
MAX_REGIONS_DEPTH = 256
#: How deep ``evaluate``'s result and a trace export may nest: the contract's reader (serde_json)
#: refuses JSON nested 128 deep (an evaluate result that deep stays a string, docs/contract.md#answers;
#: an export nests a few levels). One nested near Python's recursion limit would come back as a
#: value whose repr, or the export's schema check, raises RecursionError.
MAX_JSON_DEPTH = 127


def kind(value: Any) -> str:
    """The JSON type of ``value`` in words (``true/false`` before numbers: a bool is an int)."""
    if value is MISSING:
        return "nothing (the field is missing)"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int):
        return "a whole number"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return TEXT
    if isinstance(value, list):
        return ARRAY
    if isinstance(value, dict):
        return OBJECT
    return type(value).__name__  # not JSON at all (an image where text was expected)


class _Reader:
    """Reads one answer of ``tool``; every ``fail`` is a ``ServerAnswerError`` at a path under ``root``."""

    def __init__(self, tool: str, root: str = "$") -> None:
        self.tool = tool
        self.root = root

    def fail(self, path: str, expected: str, value: Any) -> ServerAnswerError:
        return ServerAnswerError(self.tool, self.root + path, f"expected {expected}, got {kind(value)}")

    def object(self, value: Any, path: str = "") -> Json:
        if not isinstance(value, dict):
            raise self.fail(path, OBJECT, value)
        return value

    def text(self, owner: Json, key: str, path: str, *, optional: bool = True) -> None:
        value = owner.get(key, MISSING)
        if not (isinstance(value, str) or (optional and (value is None or value is MISSING))):
            raise self.fail(f"{path}.{key}", TEXT if not optional else f"{TEXT} or nothing", value)

    def array(self, owner: Json, key: str, path: str, *, optional: bool = True) -> list[Any]:
        value = owner.get(key, MISSING)
        if optional and (value is None or value is MISSING):
            return []
        if not isinstance(value, list):
            raise self.fail(f"{path}.{key}", ARRAY if not optional else f"{ARRAY} or nothing", value)
        return value

    def count(self, owner: Json, key: str, path: str = "") -> int:
        value = owner.get(key, MISSING)
        if not is_count(value):  # as the trace's counters: 3.0 is one, 64 bits at most
            raise self.fail(f"{path}.{key}", COUNT, value)
        return int(value)

    def asked(self, owner: Json, key: str, sequence: int) -> None:
        """``owner[key]`` is the sequence the call asked about."""
        value = owner.get(key, MISSING)
        if type(value) is not int or value != sequence:
            raise self.fail(f".{key}", f"the sequence asked for ({sequence})", value)

    def regions(self, owner: Json) -> None:
        """``owner["regions"]``: regions of SOM elements, nested through children and shadows, at
        most ``MAX_REGIONS_DEPTH`` levels of arrays and objects deep. One walk: it counts the
        levels of the SOM's own nesting as it goes and measures only other arrays and objects
        (``attrs``, ``actions``, a field it does not know) apart; a page of thousands of elements
        costs a few milliseconds."""
        stack: list[tuple[Any, str, int]] = []  # an element, its path, its level (regions is 1)
        for index, region in enumerate(self.array(owner, "regions", "", optional=False)):
            path = f".regions[{index}]"
            region = self.object(region, path)
            self.text(region, "id", path)
            self.text(region, "role", path)
            self.shallow(region, path, 2, ("elements",))
            elements = self.array(region, "elements", path)
            stack += [(e, f"{path}.elements[{i}]", 4) for i, e in enumerate(elements)]
        while stack:
            element, path, level = stack.pop()
            element = self.object(element, path)
            if level > MAX_REGIONS_DEPTH:
                raise self.too_deep(path)
            self.text(element, "id", path, optional=False)
            self.text(element, "role", path, optional=False)
            self.text(element, "label", path)
            self.text(element, "text", path)
            for i, action in enumerate(self.array(element, "actions", path)):
                if not isinstance(action, str):
                    raise self.fail(f"{path}.actions[{i}]", TEXT, action)
            attrs = element.get("attrs")
            if attrs is not None:
                self.array(self.object(attrs, f"{path}.attrs"), "options", f"{path}.attrs")
            self.shallow(element, path, level, ("children", "shadow"))
            children = self.array(element, "children", path)
            stack += [(c, f"{path}.children[{i}]", level + 2) for i, c in enumerate(children)]
            shadow = element.get("shadow")
            if shadow is not None:
                shadow = self.object(shadow, f"{path}.shadow")
                self.shallow(shadow, f"{path}.shadow", level + 1, ("elements",))
                nested = self.array(shadow, "elements", f"{path}.shadow")
                stack += [(e, f"{path}.shadow.elements[{i}]", level + 3) for i, e in enumerate(nested)]

    def shallow(self, node: Json, path: str, level: int, walked: tuple[str, ...]) -> None:
        """The arrays and objects in ``node`` (at ``level``) other than those the walk goes
        through (``walked``) end by ``MAX_REGIONS_DEPTH``."""
        for key, value in node.items():
            if key not in walked and isinstance(value, _CONTAINERS):
                found = _deeper_than(value, MAX_REGIONS_DEPTH - level)
                if found is not None:  # a key the server chose is its text: the path ends before it
                    raise self.too_deep(f"{path}.{key}{found}" if key in _SOM_KEYS else path)

    def too_deep(self, path: str) -> ServerAnswerError:
        expected = f"at most {MAX_REGIONS_DEPTH} levels of arrays and objects in regions"
        return ServerAnswerError(self.tool, self.root + path, f"expected {expected}, got more")


def _deeper_than(value: Any, limit: int, known: frozenset[str] | None = None) -> str | None:
    """The path (under ``value``) of the first array or object nested deeper than ``limit``
    levels in ``value``, or None. Iterative; only containers are visited. A ``known`` key (by
    default the SOM's own) is part of the path; another is the server's text, so the path ends at
    the object holding it."""
    known = _SOM_KEYS if known is None else known
    stack: list[tuple[Any, int, Any]] = [(value, 1, None)]  # (node, depth, (key, parent's link))
    while stack:
        node, depth, link = stack.pop()
        if depth > limit:
            steps: list[str] = []
            while link is not None:
                key, link = link
                shown = isinstance(key, int) or key in known
                steps = [f"[{key}]" if isinstance(key, int) else f".{key}", *steps] if shown else []
            return "".join(steps)
        if isinstance(node, dict):
            stack += [
                (child, depth + 1, (key, link))
                for key, child in node.items()
                if isinstance(child, _CONTAINERS)
            ]
        elif isinstance(node, list):
            stack += [
                (child, depth + 1, (i, link))
                for i, child in enumerate(node)
                if isinstance(child, _CONTAINERS)
            ]
    return None


_CONTAINERS = (dict, list)
_SOM_KEYS = frozenset({"elements", "children", "shadow", "attrs", "options", "actions"})
_EXPORT_KEYS = frozenset({"events", "parameters", "target", "before", "after", "redaction"})


def answer_object(tool: str, payload: Any) -> Json:
    """``payload`` when it is a JSON object, else the error saying what it is."""
    return _Reader(tool).object(payload)


def page_answer(tool: str, payload: Any, root: str = "$") -> Json:
    """``payload`` when it is a page the notebook can show: url, title and a SOM's regions."""
    reader = _Reader(tool, root)
    page = reader.object(payload)
    for key in ("url", "title", "som_digest"):
        reader.text(page, key, "")
    position = page.get("scroll_position")
    if not (position is None or (isinstance(position, int | float) and not isinstance(position, bool))):
        raise reader.fail(".scroll_position", "a number or nothing", position)
    reader.regions(page)
    return page


def text_answer(tool: str, payload: Any) -> str:
    """A plain-text answer (``extract_text``, ``extract_links``). Our transports hand it over as
    written; a transport of the user's may have parsed JSON-looking text, which is written back."""
    if isinstance(payload, str):
        return payload
    if payload is None or isinstance(payload, bool | int | float | list | dict):
        return json.dumps(payload)
    raise ServerAnswerError(tool, "$", f"expected {TEXT}, got {kind(payload)}")


def changes_answer(tool: str, payload: Json) -> Json:
    """An action's answer carrying ``changes`` (an object) and its ``som_digest``."""
    reader = _Reader(tool)
    reader.object(payload.get("changes"), ".changes")
    reader.text(payload, "som_digest", "")
    return payload


def session_answer(tool: str, payload: Any) -> Json:
    """An ``open_page`` answer: a page and the ``session_id`` it opened."""
    reader = _Reader(tool)
    reader.text(reader.object(payload), "session_id", "", optional=False)
    return page_answer(tool, payload)


def field_answer(tool: str, payload: Any, key: str) -> Any:
    """``payload[key]`` of an answer that must hold it (any JSON value: ``evaluate``'s result),
    nested at most ``MAX_JSON_DEPTH`` deep."""
    reader = _Reader(tool)
    answer = reader.object(payload)
    if key not in answer:
        raise reader.fail(f".{key}", "a value", MISSING)
    too_deep = _deeper_than(answer[key], MAX_JSON_DEPTH, known=frozenset())
    if too_deep is not None:
        expected = f"a value nested at most {MAX_JSON_DEPTH} levels deep"
        raise ServerAnswerError(tool, f"$.{key}{too_deep}", f"expected {expected}, got more")
    return answer[key]


def count_answer(tool: str, payload: Any, key: str) -> int:
    """The count ``payload[key]`` (``set_cookies``' ``set``, ``clear_cookies``' ``cleared``)."""
    reader = _Reader(tool)
    return reader.count(reader.object(payload), key)


def cookies_answer(tool: str, payload: Any) -> list[Json]:
    """``get_cookies``' list of cookie objects (what they hold is only ever indexed, never shown)."""
    reader = _Reader(tool)
    cookies = reader.array(reader.object(payload), "cookies", "", optional=False)
    for index, cookie in enumerate(cookies):
        reader.object(cookie, f".cookies[{index}]")
    return cookies


def plan_answer(tool: str, payload: Any, asked: int) -> Json:
    """A replay plan (replay_validate's answer, a replay_execute refusal) a ``ReplayPlan`` can show,
    for the sequence ``asked`` about."""
    reader = _Reader(tool)
    plan = reader.object(payload)
    status = plan.get("status", MISSING)
    if not isinstance(status, str):
        raise reader.fail(".status", TEXT, status)
    if status not in REPLAY_STATUSES:  # a status says what may happen next: an unknown one cannot
        raise ServerAnswerError(
            tool, "$.status", f"expected {' or '.join(REPLAY_STATUSES)}, got another text"
        )
    reader.text(plan, "drift", "", optional=plan["status"] != STATUS_REFUSED)
    reader.text(plan, "message", "", optional=False)
    reader.text(plan, "action", "")
    reader.asked(plan, "sequence", asked)
    available = plan.get("execution_available", MISSING)
    if not isinstance(available, bool):
        raise reader.fail(".execution_available", "true/false", available)
    return plan


def replayed_answer(tool: str, payload: Any, asked: int) -> Json:
    """replay_execute's answer: the page after, ``replayed_sequence`` (the one ``asked`` for) and
    the new event's ``sequence``."""
    reader = _Reader(tool)
    answer = reader.object(payload)
    reader.asked(answer, "replayed_sequence", asked)
    reader.count(answer, "sequence")
    return answer


# -- the trace answers ----------------------------------------------------------------------------


def answered_export(payload: Any) -> TraceExport:
    """A server's ``trace_export`` answer, checked as ``load_trace`` checks a file;
    ``ServerAnswerError`` otherwise (also for the omitted marker, which only a final trace may be)."""
    trace = _answered_trace(payload, "trace_export", "$")
    if isinstance(trace, FinalTraceOmitted):
        raise ServerAnswerError("trace_export", "$.omitted", errors.EXPORT_NOT_OMITTED)
    return trace


def answered_final_trace(payload: Any) -> TraceExport | FinalTraceOmitted:
    """The ``final_trace`` of a server's ``close_page`` answer, checked as ``load_trace`` checks a
    file; ``ServerAnswerError`` otherwise."""
    return _answered_trace(payload, "close_page", "$.final_trace")


def _answered_trace(payload: Any, tool: str, root: str) -> TraceExport | FinalTraceOmitted:
    too_deep = _deeper_than(payload, MAX_JSON_DEPTH, known=_EXPORT_KEYS)
    if too_deep is not None:
        reason = f"arrays and objects nested more than {MAX_JSON_DEPTH} levels deep"
        raise ServerAnswerError(tool, root + too_deep, f"{errors.NOT_AN_EXPORT}: {reason}")
    try:
        return checked_trace(payload)
    except TraceFormatError as error:
        path, reason = error.path, error.reason
    # raised outside the except block: no chained error (a TraceFormatError's context) comes along
    raise ServerAnswerError(tool, root + path[1:], f"{errors.NOT_AN_EXPORT}: {reason}")


def answered_status(payload: Any, tool: str, root: str = "$") -> TraceStatus:
    """A ``trace_status`` payload in a server's ``tool`` answer (at ``root``: ``trace_clear``'s is
    at ``$.status``), each field of the contract present with its type; ``ServerAnswerError``
    otherwise. Fields beyond the contract's are kept."""
    finding = _status_finding(payload)
    if finding is not None:
        path, problem = finding
        raise ServerAnswerError(tool, root + path[1:], problem)
    return TraceStatus(payload)


def answered_cleared(payload: Any) -> TraceCleared:
    """A server's ``trace_clear`` answer: a count and a status; ``ServerAnswerError`` otherwise."""
    reader = _Reader("trace_clear")
    reader.count(reader.object(payload), "cleared_events")
    answered_status(payload.get("status", MISSING), "trace_clear", "$.status")
    return TraceCleared(payload)


# Each trace_status field's test, what it must be, and the JSON types it has (a value of
# another type is named by its type: "expected true/false, got text"); a field not named here is
# a count.
_STATUS_RULES: dict[str, tuple[Callable[[Any], bool], str, tuple[str, ...]]] = {
    "schema": (lambda value: value == SCHEMA, repr(SCHEMA), (TEXT,)),
    "enabled": (lambda value: type(value) is bool, "true/false", ("true/false",)),
    "trace_id": (lambda value: type(value) is str and value != "", "non-empty text", (TEXT,)),
    "retention": (lambda value: type(value) is str, TEXT, (TEXT,)),
}
_COUNT_RULE: tuple[Callable[[Any], bool], str, tuple[str, ...]] = (
    is_count,
    COUNT,
    ("a whole number", "a number"),
)


def _status_finding(payload: Any) -> tuple[str, str] | None:
    """Where a trace_status payload is wrong and how (never quoting a value); None when nothing is."""
    if type(payload) is not dict:
        return "$", f"expected {OBJECT}, got {kind(payload)}"
    for name in STATUS_FIELDS:
        valid, requirement, kinds = _STATUS_RULES.get(name, _COUNT_RULE)
        value = payload.get(name, MISSING)
        if not valid(value):
            sent = kind(value)
            return (
                f"$.{name}",
                f"expected {requirement}" if sent in kinds else f"expected {requirement}, got {sent}",
            )
    return None
