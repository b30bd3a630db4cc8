"""A server's trace answers, checked where they arrive: ``trace_status``, ``trace_export``,
``trace_clear`` and ``close_page``'s final trace.

``Session.connect`` talks to any MCP server, and these answers feed the trace objects, tables,
plots and the live dashboard. An export is checked as ``load_trace`` checks a file (the schema,
the counter rules); a status field by field, by type (fields beyond the contract's are kept). One
that breaks the contract is a ``ServerAnswerError`` naming the path, never the value, and nothing
of it is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import errors
from ..client.base import ServerAnswerError
from ..trace.constants import SCHEMA
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
    try:
        return checked_trace(payload)
    except TraceFormatError as error:
        raise ServerAnswerError(
            tool, root + error.path[1:], f"{errors.NOT_AN_EXPORT}: {error.reason}"
        ) from None


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
    if not isinstance(payload, dict) or not is_count(payload.get("cleared_events")):
        raise ServerAnswerError("trace_clear", "$.cleared_events", _COUNT_RULE[1])
    answered_status(payload.get("status"), "trace_clear", "$.status")
    return TraceCleared(payload)


def _json_type(value: Any) -> str:
    kinds = {dict: "an object", list: "an array", str: "a string", bool: "true or false", type(None): "null"}
    return kinds.get(type(value), "a number")


# Each trace_status field's test, what it must be, and the JSON type it has (a value of
# another type is named by its type: "must be true or false, not a string"); a field not named
# here is a count.
_STATUS_RULES: dict[str, tuple[Callable[[Any], bool], str, str]] = {
    "schema": (lambda value: value == SCHEMA, f"must be {SCHEMA!r}", "a string"),
    "enabled": (lambda value: type(value) is bool, "must be true or false", "true or false"),
    "trace_id": (lambda value: type(value) is str and value != "", "must be a non-empty string", "a string"),
    "retention": (lambda value: type(value) is str, "must be a string", "a string"),
}
_COUNT_RULE: tuple[Callable[[Any], bool], str, str] = (
    is_count,
    "must be a whole number of at least 0 (64 bits at most)",
    "a number",
)


def _status_finding(payload: Any) -> tuple[str, str] | None:
    """Where a trace_status payload is wrong and how (never quoting a value); None when nothing is."""
    if type(payload) is not dict:
        return "$", f"expected an object, got {_json_type(payload)}"
    for name in STATUS_FIELDS:
        valid, requirement, kind = _STATUS_RULES.get(name, _COUNT_RULE)
        if name not in payload:
            return f"$.{name}", "the required field is missing"
        if not valid(payload[name]):
            sent = _json_type(payload[name])
            return f"$.{name}", requirement if sent == kind else f"{requirement}, not {sent}"
    return None
