"""Fixed values of the ``plasmate.trace.v1`` contract (docs/contract.md#the-trace-event to docs/contract.md#replay-validation).

Nothing here is configurable: the bounds are part of the wire contract that exported
traces are read against.
"""

from __future__ import annotations

SCHEMA = "plasmate.trace.v1"

# Hard bounds (docs/contract.md#bounds).
MAX_EVENTS = 128
MAX_BYTES = 49_152  # 48 KiB of retained serialised events
MAX_EVENT_BYTES = 4_096  # one serialised event
MAX_STRING_BYTES = 512  # a retained free-text string (scroll.direction)
MAX_EXPORT_BYTES = 65_536  # one trace_export / final_trace document
MAX_HANDLE_BYTES = 64  # session_id / trace_id accepted by the trace tools

# Traced tool names. get_cookies, the trace tools, replay_validate, session_status and the
# stateless tools are never traced. The tool catalogue (tools/catalogue.py) says the same per
# tool; a test keeps the two equal.
TRACEABLE_ACTIONS: tuple[str, ...] = (
    "open_page",
    "navigate_to",
    "click",
    "type_text",
    "select_option",
    "scroll",
    "toggle",
    "clear",
    "close_page",
    "evaluate",
    "set_cookies",
    "clear_cookies",
)

# Traced actions whose events are coarse: JavaScript and cookies are never retained, so their
# parameters are empty or counts and flags (docs/contract.md#sanitisation), too little to replay.
COARSE_ACTIONS: frozenset[str] = frozenset({"evaluate", "set_cookies", "clear_cookies"})

# Actions that replay_validate refuses as `unsupported_action` (docs/contract.md#replay-validation, check 3): the
# session lifecycle and the coarse actions.
UNSUPPORTED_REPLAY_ACTIONS: frozenset[str] = frozenset({"open_page", "close_page"}) | COARSE_ACTIONS

# The SOM action an element must expose for each replayable action (docs/contract.md#replay-validation, check 6c).
# scroll and navigate_to need nothing from the element.
REQUIRED_ELEMENT_ACTION: dict[str, str] = {
    "click": "click",
    "type_text": "type",
    "select_option": "select",
    "toggle": "toggle",
    "clear": "clear",
}
ALWAYS_SUPPORTED_ACTIONS: frozenset[str] = frozenset({"scroll", "navigate_to"})

# Redaction metadata carried by every event (docs/contract.md#the-trace-event).
VALUE_HANDLING = "omitted+byte_length"
OMITTED_FIELDS: tuple[str, ...] = (
    "cookies",
    "authorization",
    "headers",
    "raw_html",
    "screenshots",
    "evaluate_source",
    "evaluate_result",
    "tool_output",
)
REDACTED_FIELDS_BY_ACTION: dict[str, tuple[str, ...]] = {
    "type_text": ("text",),
    "select_option": ("value",),
    "evaluate": ("expression", "result"),
    "set_cookies": ("cookies",),
    "clear_cookies": ("name", "domain", "url"),
}

REDACTION_POLICY = (
    "secret values are omitted; page bodies, cookies, headers, JavaScript, screenshots, "
    "and tool output are omitted"
)
RETENTION = "memory-only; removed when the browser session closes"

# Fingerprint prefixes and HMAC domains (docs/contract.md#fingerprints).
URL_PREFIX = "plasmate-url:v1:"
STATE_PREFIX = "plasmate-state:v1:"
TARGET_ID_PREFIX = "plasmate-trace-id:v1:"
TARGET_KEY_PREFIX = "plasmate-trace-target:v1:"
DOMAIN_URL = b"url"
DOMAIN_SOM = b"som"
DOMAIN_TARGET_ID = b"target-id"
DOMAIN_TARGET = b"target"
CLOSED_STATE_INPUT = b"closed"
TARGET_PROVENANCE = "session-owned-som"

# Event outcomes.
OUTCOME_SUCCESS = "success"
OUTCOME_ERROR = "error"

# final_trace replacement when the export would not fit the MCP response ceiling (docs/contract.md#trace-envelopes).
FINAL_TRACE_OMITTED_REASON = "bounded final trace export exceeded the MCP response ceiling"

# replay_validate (docs/contract.md#replay-validation).
EXECUTION = "validation_only"
STATUS_REFUSED = "refused"
STATUS_CONFIRMATION_REQUIRED = "confirmation_required"
STATUS_VALIDATED = "validated"
REPLAY_STATUSES: tuple[str, ...] = (STATUS_REFUSED, STATUS_CONFIRMATION_REQUIRED, STATUS_VALIDATED)

DRIFT_CROSS_SESSION = "cross_session"
DRIFT_EVENT_NOT_RETAINED = "event_not_retained"
DRIFT_UNSUPPORTED_ACTION = "unsupported_action"
DRIFT_ORIGIN = "origin_drift"
DRIFT_PAGE = "page_drift"
DRIFT_TARGET_MISSING = "target_missing"
DRIFT_TARGET_AMBIGUOUS = "target_ambiguous"
DRIFT_ACTION_UNAVAILABLE = "action_unavailable"
DRIFT_STATE = "state_drift"

# Drift code -> refusal message, in check order.
DRIFT_MESSAGES: dict[str, str] = {
    DRIFT_CROSS_SESSION: "trace_id does not belong to this session",
    DRIFT_EVENT_NOT_RETAINED: "sequence is absent, evicted, or was cleared",
    DRIFT_UNSUPPORTED_ACTION: "session lifecycle actions are not replay candidates",
    DRIFT_ORIGIN: "current origin differs from the recorded pre-action origin",
    DRIFT_PAGE: "current keyed page URL fingerprint differs from the recorded pre-action URL",
    DRIFT_TARGET_MISSING: "recorded target is not present in the current session state",
    DRIFT_TARGET_AMBIGUOUS: "recorded target resolves to more than one current element",
    DRIFT_ACTION_UNAVAILABLE: "current target does not expose the recorded action",
    DRIFT_STATE: "current semantic state differs from the recorded pre-action state",
}
DRIFT_CODES: tuple[str, ...] = tuple(DRIFT_MESSAGES)

MESSAGE_CONFIRMATION_REQUIRED = (
    "Exact validation passed; explicit confirmation is still required for this mutating action"
)
MESSAGE_VALIDATED = (
    "Validation and confirmation contract passed; this slice returns a plan and does not execute it"
)

# replay_execute (docs/contract.md#supervised-replay-execution): our opt-in extension. The actions
# it can execute are exactly those replay_validate can validate.
REFUSAL_VALUE_LENGTH_MISMATCH = "value_length_mismatch"
REFUSAL_URL_MISMATCH = "url_mismatch"
EXECUTION_REFUSAL_MESSAGES: dict[str, str] = {
    REFUSAL_VALUE_LENGTH_MISMATCH: "the supplied value's UTF-8 byte length differs from the recorded one",
    REFUSAL_URL_MISMATCH: "the supplied URL's keyed fingerprint differs from the recorded navigation",
}
# The argument of the re-executed action that receives the caller's ``value`` (never retained).
SUPPLIED_VALUE_ARGUMENT: dict[str, str] = {
    "type_text": "text",
    "select_option": "value",
    "navigate_to": "url",
}

# Error classes (docs/contract.md#the-classifier), in the classifier's scan order.
ERROR_CLASSES: tuple[str, ...] = (
    "not_found",
    "invalid_input",
    "policy",
    "timeout",
    "execution",
    "network",
    "operation",
)
