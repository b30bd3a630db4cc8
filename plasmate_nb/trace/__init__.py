"""plasmate.trace.v1: fingerprints, sanitiser, classifier, bounded log, replay validator.

Pure: no browser, no asyncio, no I/O. Importable without Playwright.
"""

from .arguments import (
    ExecuteRequest,
    InvalidArguments,
    ReplayRequest,
    parse_execute_request,
    parse_replay_request,
    parse_trace_handle,
)
from .compact import compact_json
from .constants import (
    MAX_BYTES,
    MAX_EVENT_BYTES,
    MAX_EVENTS,
    MAX_EXPORT_BYTES,
    MAX_HANDLE_BYTES,
    MAX_STRING_BYTES,
    OMITTED_FIELDS,
    REDACTION_POLICY,
    RETENTION,
    SCHEMA,
    TRACEABLE_ACTIONS,
)
from .fingerprint import TraceKey
from .log import PageState, TraceLog
from .origin import origin
from .sanitize import classify_error, redacted_fields, sanitize_parameters

__all__ = [
    "MAX_BYTES",
    "MAX_EVENTS",
    "MAX_EVENT_BYTES",
    "MAX_EXPORT_BYTES",
    "MAX_HANDLE_BYTES",
    "MAX_STRING_BYTES",
    "OMITTED_FIELDS",
    "REDACTION_POLICY",
    "RETENTION",
    "SCHEMA",
    "TRACEABLE_ACTIONS",
    "ExecuteRequest",
    "InvalidArguments",
    "PageState",
    "ReplayRequest",
    "TraceKey",
    "TraceLog",
    "classify_error",
    "compact_json",
    "origin",
    "parse_execute_request",
    "parse_replay_request",
    "parse_trace_handle",
    "redacted_fields",
    "sanitize_parameters",
]
