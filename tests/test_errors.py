"""Every tool error text of the contract, pinned, and its declared class checked against the
trace classifier: rewording a message is a visible change here, and cannot silently move its
failures to another ``error_class``."""

from __future__ import annotations

import ast
import copy
import inspect
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import plasmate_nb
from plasmate_nb import errors
from plasmate_nb.errors import ErrorText
from plasmate_nb.trace import classify_error, parse_replay_request, parse_trace_handle
from plasmate_nb.trace.arguments import InvalidArguments

HINT = errors.DESTINATION_HINT
LIMIT_HINT = "(EngineConfig.evaluate_result_limit, serve --evaluate-result-limit)"

# (public name, the message it builds, the exact text, the class)
CASES = [
    ("session_not_found", errors.session_not_found("s-1"), "Session not found: s-1", "not_found"),
    ("max_sessions_reached", errors.max_sessions_reached(10),
     "Maximum sessions (10) reached. Close a session first.", "operation"),
    ("NO_PAGE_LOADED", errors.NO_PAGE_LOADED, "No page loaded in session", "operation"),
    ("BROWSER_CONNECTION_LOST", errors.BROWSER_CONNECTION_LOST,
     "Browser connection lost; the session page is gone", "operation"),
    ("element_not_found", errors.element_not_found("e_3f2a9c01b7d4"), "Element not found: e_3f2a9c01b7d4",
     "not_found"),
    ("element_does_not_support", errors.element_does_not_support("type", "e_1"),
     "Element does not support type: e_1", "operation"),
    ("NOT_A_SELECT", errors.NOT_A_SELECT, "Element is not a <select>", "operation"),
    ("NOT_TOGGLEABLE", errors.NOT_TOGGLEABLE, "Element is not a checkbox, radio button, or details element",
     "operation"),
    ("option_not_found", errors.option_not_found(16), "Option not found: value of 16 bytes", "not_found"),
    ("ELEMENT_NOT_IN_DOM", errors.ELEMENT_NOT_IN_DOM, "Element not found in DOM", "not_found"),
    ("timeout_after", errors.timeout_after(2.5), "Timeout after 2500ms", "timeout"),
    ("action_failed", errors.action_failed("Click", "Element is outside of the viewport"),
     "Click failed: Element is outside of the viewport", "operation"),
    ("evaluate_result_too_large", errors.evaluate_result_too_large(1024),
     "Evaluate failed: the result is larger than the evaluate result limit of 1024 bytes (UTF-8 JSON); "
     f"return less, or raise the limit {LIMIT_HINT}", "operation"),
    ("evaluate_javascript_error", errors.evaluate_javascript_error("ReferenceError: … is not defined"),
     '{"containment_failure":{"code":"js_worker_error","kind":"worker_error","message":"JavaScript worker rejected '
     'the request (javascript_error): Runtime error: ReferenceError: … is not defined"},"error":"Evaluate failed: '
     'JavaScript worker rejected the request (javascript_error): Runtime error: ReferenceError: … is not defined",'
     '"state_preserved":true}', "execution"),
    ("pipeline_error", errors.pipeline_error("SOM compile failed in the page (TypeError)"),
     "Pipeline error: SOM compile failed in the page (TypeError)", "operation"),
    ("cookie_operation_failed", errors.cookie_operation_failed("the context was closed"),
     "Cookie operation failed: the context was closed", "operation"),
    ("DOWNLOAD_REFUSED", errors.DOWNLOAD_REFUSED, "download refused", "operation"),
    ("PAGE_CLOSED", errors.PAGE_CLOSED, "the page was closed", "operation"),
    ("REPLAY_EXECUTION_DISABLED", errors.REPLAY_EXECUTION_DISABLED,
     "replay_execute is off by this server's policy; the operator turns it on with "
     "`plasmate-nb serve --enable-replay-execution` (notebook: pnb.Session(replay_execution=True))", "policy"),
    ("replay_not_executed", errors.replay_not_executed('{"drift":"state_drift","status":"refused"}'),
     'Replay not executed: {"drift":"state_drift","status":"refused"}', "operation"),
    ("PAGE_NOT_REOPENED", errors.PAGE_NOT_REOPENED, "the session page could not be reopened", "operation"),
    ("renderer_memory_passed", errors.renderer_memory_passed(2048),
     "the page passed the renderer memory bound (2048 MB) and was stopped; to allow more, raise the bound "
     "(PLASMATE_NB_RENDERER_MEMORY_MB, serve --renderer-memory-mb)", "operation"),
    ("PAGE_CRASHED", errors.PAGE_CRASHED, "the page crashed", "operation"),
    ("page_reloaded", errors.page_reloaded(errors.PAGE_CRASHED),
     "Pipeline error: the page crashed; it was reloaded at its last good URL, so what was typed or changed on it "
     "is gone: read the page again (page_som) before acting on it", "operation"),
    ("page_not_reloaded", errors.page_not_reloaded(errors.PAGE_CRASHED),
     "Pipeline error: the page crashed; its last good URL did not load again, so there is no page to act on: "
     "navigate_to one", "operation"),
    ("failed_to_fetch", errors.failed_to_fetch("https://example.com/…", "net::ERR_NAME_NOT_RESOLVED"),
     "Failed to fetch https://example.com/…: net::ERR_NAME_NOT_RESOLVED", "network"),
    ("navigation_failed", errors.navigation_failed("net::ERR_CONNECTION_REFUSED"),
     "Navigation failed: net::ERR_CONNECTION_REFUSED", "network"),
    ("http_error", errors.http_error(500, "http://127.0.0.1:8080/…"), "HTTP error 500: http://127.0.0.1:8080/…",
     "operation"),
    ("outbound_blocked", errors.outbound_blocked(errors.URL_HAS_CREDENTIALS),
     "Outbound URL blocked: outbound URLs containing credentials are not allowed", "policy"),
    ("invalid_url", errors.invalid_url(errors.URL_EMPTY_HOST), "invalid URL: empty host", "operation"),
    ("URL_HAS_CREDENTIALS", errors.URL_HAS_CREDENTIALS, "outbound URLs containing credentials are not allowed",
     "operation"),
    ("scheme_not_allowed", errors.scheme_not_allowed("file"),
     "outbound URL scheme 'file' is not allowed; only http and https are permitted", "operation"),
    ("host_unresolvable", errors.host_unresolvable("nowhere.example"), "host nowhere.example could not be resolved",
     "operation"),
    ("address_not_routable", errors.address_not_routable("10.0.0.1"), "address 10.0.0.1 is not globally routable",
     "operation"),
    ("unknown_tool", errors.unknown_tool("no_such_tool"), "Unknown tool: no_such_tool", "operation"),
    ("internal_error", errors.internal_error("click", "KeyError"), "Internal error in click: KeyError", "operation"),
    ("invalid_type", errors.invalid_type("sequence", "an object"),
     "Invalid arguments: invalid type: sequence, expected an object", "invalid_input"),
    ("invalid_value", errors.invalid_value("integer", "u64"), "Invalid arguments: invalid value: integer, expected u64",
     "invalid_input"),
    ("missing_field", errors.missing_field("element_id"), "Invalid arguments: missing field `element_id`",
     "invalid_input"),
    ("unknown_field", errors.unknown_field("x", ("session_id",)),
     "Invalid arguments: unknown field `x`, expected `session_id`", "invalid_input"),
    ("handle_too_long", errors.handle_too_long("session_id"), "Invalid arguments: session_id exceeds 64 bytes",
     "invalid_input"),
    ("unsendable_text", errors.unsendable_text("text"),
     "Invalid arguments: `text` holds a lone UTF-16 surrogate (half of a character), which cannot be sent "
     "as JSON over MCP; remove it or pass the whole character", "invalid_input"),
    ("invalid_field_type", errors.invalid_field_type("cookies.0", "an object"),
     "Invalid arguments: invalid type for `cookies.0`: expected an object", "invalid_input"),
    # the stateless page tools
    ("too_many_redirects", errors.too_many_redirects(5), "Too many redirects (maximum 5)", "operation"),
    ("body_exceeds_limit", errors.body_exceeds_limit(512000),
     "Response body exceeds the configured 512000 byte limit", "operation"),
    ("URL_RELATIVE_WITHOUT_BASE", errors.URL_RELATIVE_WITHOUT_BASE, "relative URL without a base", "operation"),
    ("URL_INVALID_PORT", errors.URL_INVALID_PORT, "invalid port number", "operation"),
    ("URL_INVALID_IPV6", errors.URL_INVALID_IPV6, "invalid IPv6 address", "operation"),
    ("URL_EMPTY_HOST", errors.URL_EMPTY_HOST, "empty host", "operation"),
    ("URL_INVALID_DOMAIN", errors.URL_INVALID_DOMAIN, "invalid domain character", "operation"),
    ("failed_to_fetch_page", errors.failed_to_fetch_page("Navigation failed: net::ERR_CONNECTION_REFUSED"),
     "Failed to fetch page: Navigation failed: net::ERR_CONNECTION_REFUSED", "network"),
    ("VISUAL_MODE_INVALID", errors.VISUAL_MODE_INVALID, "visual_mode must be one of: never, auto, always",
     "operation"),
    ("INSPECTION_LIMITS_EXCEEDED", errors.INSPECTION_LIMITS_EXCEEDED,
     "Inspection dimensions, timeout, URL, or selector exceed limits", "timeout"),
    ("INSPECTION_TOO_LARGE", errors.INSPECTION_TOO_LARGE,
     "Failed to serialize inspection: inspection envelope cannot fit its safety bound", "operation"),
    ("screenshot_failed", errors.screenshot_failed(errors.SCREENSHOT_TIMED_OUT),
     "Screenshot failed: Screenshot capture timed out", "operation"),
    ("SCREENSHOT_TIMED_OUT", errors.SCREENSHOT_TIMED_OUT, "Screenshot capture timed out", "operation"),
    ("screenshot_capture_failed", errors.screenshot_capture_failed("the page was closed"),
     "Screenshot capture failed: the page was closed", "operation"),
    ("crawl_policy_failed", errors.crawl_policy_failed(errors.PRODUCT_TOKEN_LENGTH),
     "Crawl-policy evaluation failed: product token must contain 1 to 64 bytes", "policy"),
    ("PRODUCT_TOKEN_LENGTH", errors.PRODUCT_TOKEN_LENGTH, "product token must contain 1 to 64 bytes", "operation"),
    ("PRODUCT_TOKEN_CHARACTERS", errors.PRODUCT_TOKEN_CHARACTERS,
     "product token may contain only ASCII letters, hyphen, and underscore", "operation"),
    ("TARGET_URL_TOO_LONG", errors.TARGET_URL_TOO_LONG, "target URL exceeds 4096 bytes", "operation"),
    ("TARGET_URL_SCHEME", errors.TARGET_URL_SCHEME, "target URL must use http or https", "operation"),
    ("TARGET_URL_HOST", errors.TARGET_URL_HOST, "target URL must have a host and must not contain credentials",
     "operation"),
    ("TIMEOUT_MS_RANGE", errors.TIMEOUT_MS_RANGE, "timeout_ms must be between 1 and 30000", "timeout"),
    ("CRAWL_REPORT_TOO_LARGE", errors.CRAWL_REPORT_TOO_LARGE,
     "crawl-policy report exceeds its serialized output bound", "policy"),
    ("invalid_target_url", errors.invalid_target_url(errors.URL_RELATIVE_WITHOUT_BASE),
     "invalid target URL: relative URL without a base", "operation"),
    ("ard_discovery_failed", errors.ard_discovery_failed(errors.ARD_TIMEOUT_RANGE),
     "ARD discovery failed: ARD timeout_ms must be between 1 and 30000", "timeout"),
    ("ARD_URL_LENGTH", errors.ARD_URL_LENGTH, "ARD input URL must contain 1 to 2048 bytes", "operation"),
    ("ARD_HTTPS_REQUIRED", errors.ARD_HTTPS_REQUIRED, "ARD discovery requires an operator-supplied HTTPS URL",
     "operation"),
    ("ARD_URL_HAS_CREDENTIALS", errors.ARD_URL_HAS_CREDENTIALS,
     "ARD input URLs containing credentials are not allowed", "operation"),
    ("ARD_URL_HAS_NO_HOST", errors.ARD_URL_HAS_NO_HOST, "ARD input URL must contain a host", "operation"),
    ("ARD_TIMEOUT_RANGE", errors.ARD_TIMEOUT_RANGE, "ARD timeout_ms must be between 1 and 30000", "timeout"),
    ("ARD_REPORT_TOO_LARGE", errors.ARD_REPORT_TOO_LARGE,
     "bounded ARD report could not satisfy its hard output limit", "operation"),
    ("invalid_ard_url", errors.invalid_ard_url(errors.URL_EMPTY_HOST), "invalid ARD input URL: empty host",
     "operation"),
]  # fmt: skip
IDS = [name for name, *_ in CASES]


@pytest.mark.parametrize(("name", "message", "text", "error_class"), CASES, ids=IDS)
def test_text_is_pinned(name: str, message: ErrorText, text: str, error_class: str) -> None:
    assert isinstance(message, ErrorText)
    assert str(message) == text


@pytest.mark.parametrize(("name", "message", "text", "error_class"), CASES, ids=IDS)
def test_declared_class_is_the_classifiers(
    name: str, message: ErrorText, text: str, error_class: str
) -> None:
    assert message.error_class == error_class
    assert classify_error(text) == error_class


def _builds_error_text(value: object) -> bool:
    """A constructor of the module that returns an ``ErrorText`` (the notebook's hints return ``str``)."""
    return (
        inspect.isfunction(value) and value.__module__ == errors.__name__
        and inspect.signature(value).return_annotation in ("ErrorText", ErrorText)
    )  # fmt: skip


def test_every_message_of_the_module_is_pinned() -> None:
    public = {
        name for name, value in vars(errors).items()
        if not name.startswith("_") and (isinstance(value, ErrorText) or _builds_error_text(value))
    }  # fmt: skip
    assert public == set(IDS)


# A message around a reason takes the earliest class, in the classifier's order, of its own words
# and of a reason that is itself a contract message.
COMPOSED = [
    (errors.failed_to_fetch("http://10.0.0.1/…", errors.outbound_blocked(errors.address_not_routable("10.0.0.1"))),
     f"Failed to fetch http://10.0.0.1/…: Outbound URL blocked: address 10.0.0.1 is not globally routable{HINT}",
     "policy"),
    (errors.failed_to_fetch("http://127.0.0.1:9/…", errors.timeout_after(30)),
     "Failed to fetch http://127.0.0.1:9/…: Timeout after 30000ms", "timeout"),
    (errors.failed_to_fetch("http://127.0.0.1:9/…", errors.navigation_failed("net::ERR_CONNECTION_REFUSED")),
     "Failed to fetch http://127.0.0.1:9/…: Navigation failed: net::ERR_CONNECTION_REFUSED", "network"),
    (errors.failed_to_fetch("http://127.0.0.1:9/…", errors.http_error(404, "http://127.0.0.1:9/…")),
     "Failed to fetch http://127.0.0.1:9/…: HTTP error 404: http://127.0.0.1:9/…", "network"),
    (errors.navigation_failed(errors.outbound_blocked(errors.host_unresolvable("nowhere.example"))),
     f"Navigation failed: Outbound URL blocked: host nowhere.example could not be resolved{HINT}", "policy"),
    (errors.navigation_failed(errors.http_error(500, "http://127.0.0.1:9/…")),
     "Navigation failed: HTTP error 500: http://127.0.0.1:9/…", "network"),
    (errors.action_failed("Evaluate", errors.timeout_after(15)), "Evaluate failed: Timeout after 15000ms", "timeout"),
    (errors.action_failed("Click", errors.PAGE_CLOSED), "Click failed: the page was closed", "operation"),
    (errors.evaluate_javascript_error("SyntaxError: Unexpected token ')'", compiling=True),
     '{"containment_failure":{"code":"js_worker_error","kind":"worker_error","message":"JavaScript worker rejected '
     "the request (javascript_error): Compile error: SyntaxError: Unexpected token ')'\"},\"error\":\"Evaluate failed: "
     "JavaScript worker rejected the request (javascript_error): Compile error: SyntaxError: Unexpected token ')'\","
     '"state_preserved":true}', "execution"),
    # The exception's own words are page text: an earlier rule of the classifier wins, as in the reference.
    (errors.evaluate_javascript_error("TimeoutError: signal timed out"),
     '{"containment_failure":{"code":"js_worker_error","kind":"worker_error","message":"JavaScript worker rejected '
     'the request (javascript_error): Runtime error: TimeoutError: signal timed out"},"error":"Evaluate failed: '
     'JavaScript worker rejected the request (javascript_error): Runtime error: TimeoutError: signal timed out",'
     '"state_preserved":true}', "timeout"),
    (errors.pipeline_error(errors.PAGE_NOT_REOPENED), "Pipeline error: the session page could not be reopened",
     "operation"),
    (errors.pipeline_error(errors.timeout_after(10)), "Pipeline error: Timeout after 10000ms", "timeout"),
    (errors.action_failed("Click", errors.renderer_memory_passed(512)),
     "Click failed: the page passed the renderer memory bound (512 MB) and was stopped; to allow more, raise the "
     "bound (PLASMATE_NB_RENDERER_MEMORY_MB, serve --renderer-memory-mb)", "operation"),
    (errors.page_reloaded(errors.renderer_memory_passed(512)),
     "Pipeline error: the page passed the renderer memory bound (512 MB) and was stopped; to allow more, raise the "
     "bound (PLASMATE_NB_RENDERER_MEMORY_MB, serve --renderer-memory-mb); it was reloaded at its last good URL, so "
     "what was typed or changed on it is gone: read the page again (page_som) before acting on it", "operation"),
    (errors.cookie_operation_failed(errors.timeout_after(10)), "Cookie operation failed: Timeout after 10000ms",
     "timeout"),
]  # fmt: skip


@pytest.mark.parametrize(("message", "text", "error_class"), COMPOSED, ids=[text for _, text, _ in COMPOSED])
def test_a_contract_reason_carries_its_class_into_the_message(
    message: ErrorText, text: str, error_class: str
) -> None:
    assert str(message) == text
    assert message.error_class == error_class == classify_error(text)


def test_only_refused_destinations_get_the_allow_hint() -> None:
    destinations = [errors.address_not_routable("127.0.0.1"), errors.host_unresolvable("nowhere.example")]
    forms = [
        errors.invalid_url(errors.URL_RELATIVE_WITHOUT_BASE),
        errors.URL_HAS_CREDENTIALS,
        errors.invalid_url(errors.URL_EMPTY_HOST),
        errors.scheme_not_allowed("ftp"),
    ]
    assert all(errors.outbound_blocked(reason).endswith(HINT) for reason in destinations)
    assert not any(HINT in errors.outbound_blocked(reason) for reason in forms)
    # The reason also arrives as plain text, from the egress gate's response header.
    assert errors.outbound_blocked(str(destinations[0])).endswith(HINT)


def test_the_trace_parsers_raise_the_same_texts() -> None:
    cases = [
        (parse_trace_handle, {"x": 1}, errors.unknown_field("x", ("session_id",))),
        (parse_trace_handle, {}, errors.missing_field("session_id")),
        (parse_trace_handle, [], errors.invalid_type("sequence", "an object")),
        (parse_trace_handle, {"session_id": "s" * 65}, errors.handle_too_long("session_id")),
        (
            parse_replay_request,
            {"session_id": "s", "trace_id": "t", "sequence": -1},
            errors.invalid_value("integer", "u64"),
        ),
    ]
    for parse, arguments, message in cases:
        with pytest.raises(InvalidArguments) as info:
            parse(arguments)
        assert str(info.value) == message


def test_error_text_is_a_plain_string_that_keeps_its_class() -> None:
    message = errors.failed_to_fetch("http://h/…", errors.timeout_after(1))
    assert message == "Failed to fetch http://h/…: Timeout after 1000ms" and type(str(message)) is str
    for twin in (copy.copy(message), pickle.loads(pickle.dumps(message))):
        assert twin == message and twin.error_class == "timeout"
    with pytest.raises(ValueError, match="unknown error class"):
        ErrorText("x", "nonsense")


def test_the_error_classes_are_the_trace_contracts() -> None:
    from plasmate_nb.trace.constants import ERROR_CLASSES

    assert (errors.NOT_FOUND, errors.INVALID_INPUT, errors.POLICY, errors.TIMEOUT, errors.EXECUTION,
            errors.NETWORK, errors.OPERATION) == ERROR_CLASSES  # fmt: skip


def test_importing_errors_loads_no_browser() -> None:
    code = "import sys, plasmate_nb.errors; print([m for m in ('playwright', 'plasmate_nb.browser') if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


# Errors whose text is a tool error message: raised with a literal, they would bypass this module.
MESSAGE_CARRIERS = {
    "ActionError",
    "EngineError",
    "InvalidArguments",
    "PolicyViolation",
    "Unresolvable",
    "error",
}
RAISERS = ["browser/session.py", "browser/engine.py", "browser/navigation.py", "browser/cookies.py",
           "browser/policy.py", "browser/messages.py", "tools/dispatcher.py", "tools/arguments.py",
           "trace/arguments.py"]  # fmt: skip


def _literal_messages(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        first = node.args[0]
        literal = isinstance(first, ast.JoinedStr | ast.BinOp) or (
            isinstance(first, ast.Constant) and isinstance(first.value, str)
        )
        if name in MESSAGE_CARRIERS and literal:
            lines.append(node.lineno)
    return lines


def test_no_raiser_writes_its_own_message() -> None:
    package = Path(plasmate_nb.__file__).parent
    found = {module: _literal_messages(package / module) for module in RAISERS}
    assert {module: lines for module, lines in found.items() if lines} == {}
