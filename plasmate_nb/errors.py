"""Every tool error message of the contract, built in one place
(docs/contract.md#error-messages-and-their-trace-error-classes).

A trace keeps only the *class* of a failed call's error (``error_class``), and the trace
classifier (:func:`plasmate_nb.trace.classify_error`) derives it from words in the message
text. Message wording is therefore part of the wire contract: rewording ``Element not found``
would silently move every such failure out of ``not_found``. So the engine, the dispatcher and
the argument checkers never write an error text themselves; they call the constructors here.
Each returns an :class:`ErrorText`, a ``str`` that also carries the class the classifier
gives it, and ``tests/test_errors.py`` pins every text and checks each class against the
classifier.

A message built around a *reason* (``Failed to fetch <where>: <reason>``) takes the class of
the earliest rule, in the classifier's scan order, among its own words and a reason that is
itself an :class:`ErrorText`: ``Failed to fetch …: Timeout after 30000ms`` is a ``timeout``,
as the classifier says. A reason given as a plain ``str`` (a network error code, a cleaned
Playwright line) is taken to match no rule.

The argument-parsing texts of the trace tools live in the pure trace core
(:mod:`plasmate_nb.trace.arguments`) and are re-exported here with their class. Pure: no
browser, importable by ``browser/`` and ``tools/`` alike.
"""

from __future__ import annotations

import json
from typing import Any

from plasmate_nb.trace import arguments as _trace_arguments
from plasmate_nb.trace.constants import ERROR_CLASSES
from plasmate_nb.trace.origin import DEFAULT_PORTS, origin, scheme
from plasmate_nb.trace.sanitize import classify_error

NOT_FOUND, INVALID_INPUT, POLICY, TIMEOUT, EXECUTION, NETWORK, OPERATION = ERROR_CLASSES


class ErrorText(str):
    """A tool error message, with ``error_class``: the trace class its words give it."""

    error_class: str

    def __new__(cls, text: str, error_class: str) -> ErrorText:
        if error_class not in ERROR_CLASSES:
            raise ValueError(f"unknown error class {error_class!r}")
        message = super().__new__(cls, text)
        message.error_class = error_class
        return message

    def __getnewargs__(self) -> tuple[str, str]:  # type: ignore[override]  # copy and pickle keep the class
        return str(self), self.error_class


def _with_reason(text: str, own_class: str, reason: str) -> ErrorText:
    """``text`` (which ends with ``reason``) classed like the classifier's first hit would be."""
    classes = [own_class]
    if isinstance(reason, ErrorText):
        classes.append(reason.error_class)
    return ErrorText(text, min(classes, key=ERROR_CLASSES.index))


# ----- sessions and capacity ----------------------------------------------------------------------


def session_not_found(session_id: str) -> ErrorText:
    return ErrorText(f"Session not found: {session_id}", NOT_FOUND)


def max_sessions_reached(limit: int) -> ErrorText:
    return ErrorText(f"Maximum sessions ({limit}) reached. Close a session first.", OPERATION)


NO_PAGE_LOADED = ErrorText("No page loaded in session", OPERATION)
BROWSER_CONNECTION_LOST = ErrorText("Browser connection lost; the session page is gone", OPERATION)


# ----- elements, in the reference's check order ----------------------------------------------------


def element_not_found(element_id: str) -> ErrorText:
    """The id is not in the session's latest SOM."""
    return ErrorText(f"Element not found: {element_id}", NOT_FOUND)


def element_does_not_support(action: str, element_id: str) -> ErrorText:
    """The SOM element does not list ``action`` (e.g. ``type``) among its actions."""
    return ErrorText(f"Element does not support {action}: {element_id}", OPERATION)


NOT_A_SELECT = ErrorText("Element is not a <select>", OPERATION)
NOT_TOGGLEABLE = ErrorText("Element is not a checkbox, radio button, or details element", OPERATION)


def option_not_found(byte_length: int) -> ErrorText:
    """Names the wanted value's size only: a selected value may be secret."""
    return ErrorText(f"Option not found: value of {byte_length} bytes", NOT_FOUND)


ELEMENT_NOT_IN_DOM = ErrorText("Element not found in DOM", NOT_FOUND)


# ----- execution ---------------------------------------------------------------------------------


def timeout_after(seconds: float) -> ErrorText:
    """A bounded wait ran out; the bound is shown in whole milliseconds."""
    return ErrorText(f"Timeout after {round(seconds * 1000)}ms", TIMEOUT)


def action_failed(action: str, reason: str) -> ErrorText:
    """An action on the live page failed; ``action`` is its display name (``Click``, ``Evaluate``)."""
    return _with_reason(f"{action} failed: {reason}", OPERATION, reason)


def evaluate_result_too_large(limit: int) -> ErrorText:
    return action_failed(
        "Evaluate",
        f"the result is larger than the evaluate result limit of {limit} bytes (UTF-8 JSON); return less, "
        "or raise the limit (EngineConfig.evaluate_result_limit, serve --evaluate-result-limit)",
    )


JS_EXCEPTION_PREFIX = "JavaScript worker rejected the request (javascript_error): "


def evaluate_javascript_error(exception: str, *, compiling: bool = False) -> ErrorText:
    """``evaluate``'s expression threw (or did not compile): the reference's containment JSON
    (docs/contract.md#javascript-exceptions-in-evaluate), sorted keys, compact.

    There is no worker here, but the shape, ``kind``/``code`` and the message prefix are the
    reference's, so clients and the classifier read it alike. ``exception`` is the already safe
    ``<Name>: <detail>`` rendering (:func:`plasmate_nb.browser.messages.describe_js_exception`):
    it never carries the expression. Its words are page text, so the class is what the classifier
    reads in the whole text: normally ``execution`` (``JavaScript``), an earlier rule first.
    """
    message = f"{JS_EXCEPTION_PREFIX}{'Compile' if compiling else 'Runtime'} error: {exception}"
    text = json.dumps(
        {"containment_failure": {"code": "js_worker_error", "kind": "worker_error", "message": message},
         "error": f"Evaluate failed: {message}", "state_preserved": True},
        sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    )  # fmt: skip
    return ErrorText(text, classify_error(text))


def pipeline_error(reason: str) -> ErrorText:
    """The page could not be turned into a SOM (or the page to do it on is gone)."""
    return _with_reason(f"Pipeline error: {reason}", OPERATION, reason)


def cookie_operation_failed(reason: str) -> ErrorText:
    return _with_reason(f"Cookie operation failed: {reason}", OPERATION, reason)


# Reasons of the messages above, from the page's side.
DOWNLOAD_REFUSED = ErrorText("download refused", OPERATION)
PAGE_CLOSED = ErrorText("the page was closed", OPERATION)
PAGE_NOT_REOPENED = ErrorText("the session page could not be reopened", OPERATION)


def renderer_memory_passed(limit_mb: int) -> ErrorText:
    """The page's renderer grew past the memory bound and was stopped (browser/memory.py)."""
    text = (
        f"the page passed the renderer memory bound ({limit_mb} MB) and was stopped; "
        "to allow more, raise the bound (PLASMATE_NB_RENDERER_MEMORY_MB, serve --renderer-memory-mb)"
    )
    return ErrorText(text, classify_error(text))


def bad_renderer_memory_setting(variable: str, minimum_mb: int) -> str:
    """The environment's renderer memory bound is unusable (not a tool error: it stops the engine's start)."""
    return f"{variable} must be a whole number of megabytes, at least {minimum_mb} (0: no bound)"


PAGE_CRASHED = ErrorText("the page crashed", OPERATION)
PAGE_RELOADED_WORDS = "it was reloaded at its last good URL"
PAGE_NOT_RELOADED_WORDS = "its last good URL did not load again"


def page_reloaded(cause: str) -> ErrorText:
    """The page crashed (``cause`` says how); the next action reloaded it and refuses, once, to
    act on a page its caller has not seen."""
    return pipeline_error(
        f"{cause}; {PAGE_RELOADED_WORDS}, so what was typed or changed on it is gone: "
        "read the page again (page_som) before acting on it"
    )


def page_not_reloaded(cause: str) -> ErrorText:
    """The page crashed (``cause`` says how) and could not be loaded again: actions are refused
    until a navigation lands."""
    return pipeline_error(
        f"{cause}; {PAGE_NOT_RELOADED_WORDS}, so there is no page to act on: navigate_to one"
    )


# ----- navigation --------------------------------------------------------------------------------


def reduce_url(url: str | None) -> str:
    """``scheme://host[:port]/…`` of ``url`` (the port unless it is the scheme's default), or
    ``scheme:…`` without a readable host: enough to say where, nothing about what. The host is
    read as a browser reads it (the trace's :func:`~plasmate_nb.trace.origin.origin`): a ``\\``
    ends it like a ``/``, so no path can pass for a host."""
    named = scheme(url) if url else None
    if named is None:
        return "…"
    readable = origin(url) if named in DEFAULT_PORTS else None
    if readable is None:
        return f"{named}:…"
    host, _, port = readable.rpartition(":")
    return f"{host if int(port) == DEFAULT_PORTS[named] else readable}/…"


def failed_to_fetch(where: str, reason: str) -> ErrorText:
    """Opening a URL failed; ``where`` is the URL already reduced to ``scheme://host[:port]/…``."""
    return _with_reason(f"Failed to fetch {where}: {reason}", NETWORK, reason)


def navigation_failed(reason: str) -> ErrorText:
    return _with_reason(f"Navigation failed: {reason}", NETWORK, reason)


def http_error(status: int, where: str) -> ErrorText:
    """The destination answered ``status`` ≥ 400; ``where`` is the reduced URL."""
    return ErrorText(f"HTTP error {status}: {where}", OPERATION)


# ----- the outbound URL policy -------------------------------------------------------------------

BLOCKED_PREFIX = "Outbound URL blocked: "
DESTINATION_HINT = (
    "; to allow it, start the server with --allow-host <host>, --allow-network <cidr> "
    "or --allow-private-network"
)
# The first words of the reasons that refuse a destination (not a URL's form): these get the hint.
_DESTINATION_REASONS = ("address ", "host ")


def outbound_blocked(reason: str) -> ErrorText:
    """A refusal by the URL policy; a refused *destination* also says how to allow it.

    ``reason`` is one of the policy reasons below, possibly after a trip through the egress
    gate's response header (hence matched by its first words, not by type).
    """
    hint = DESTINATION_HINT if reason.startswith(_DESTINATION_REASONS) else ""
    return ErrorText(BLOCKED_PREFIX + reason + hint, POLICY)


# Policy reasons (the reference's texts), shown after BLOCKED_PREFIX.
URL_HAS_CREDENTIALS = ErrorText("outbound URLs containing credentials are not allowed", OPERATION)


def invalid_url(detail: str) -> ErrorText:
    """A URL that does not parse; ``detail`` is one of the URL parser's errors (``URL_EMPTY_HOST``…)."""
    return ErrorText(f"invalid URL: {detail}", OPERATION)


def scheme_not_allowed(scheme: str) -> ErrorText:
    return ErrorText(
        f"outbound URL scheme '{scheme}' is not allowed; only http and https are permitted", OPERATION
    )


def host_unresolvable(host: str) -> ErrorText:
    return ErrorText(f"host {host} could not be resolved", OPERATION)


def address_not_routable(address: object) -> ErrorText:
    return ErrorText(f"address {address} is not globally routable", OPERATION)


# ----- tool calls and their arguments --------------------------------------------------------------


def unknown_tool(name: str) -> ErrorText:
    return ErrorText(f"Unknown tool: {name}", OPERATION)


REPLAY_EXECUTION_DISABLED = ErrorText(
    "replay_execute is off by this server's policy; the operator turns it on with "
    "`plasmate-nb serve --enable-replay-execution` (notebook: pnb.Session(replay_execution=True))",
    POLICY,
)


REPLAY_NOT_EXECUTED_PREFIX = "Replay not executed: "


def replay_not_executed(plan_json: str) -> ErrorText:
    """replay_execute's refusal: nothing ran; ``plan_json`` is the plan that said no."""
    text = REPLAY_NOT_EXECUTED_PREFIX + plan_json
    return ErrorText(text, classify_error(text))


def internal_error(tool: str, exception_type: str) -> ErrorText:
    """A bug or an engine surprise: names the exception type only, never its text."""
    return ErrorText(f"Internal error in {tool}: {exception_type}", OPERATION)


INVALID_ARGUMENTS = _trace_arguments.INVALID_ARGUMENTS


def invalid_type(kind: str, expected: str) -> ErrorText:
    """``kind`` is the JSON kind found (:func:`plasmate_nb.trace.arguments.json_kind`)."""
    return ErrorText(_trace_arguments.invalid_type(kind, expected), INVALID_INPUT)


def invalid_value(kind: str, expected: str) -> ErrorText:
    return ErrorText(_trace_arguments.invalid_value(kind, expected), INVALID_INPUT)


def missing_field(name: str) -> ErrorText:
    return ErrorText(_trace_arguments.missing_field(name), INVALID_INPUT)


def unknown_field(name: Any, expected: tuple[str, ...]) -> ErrorText:
    return ErrorText(_trace_arguments.unknown_field(name, expected), INVALID_INPUT)


def handle_too_long(fields: str) -> ErrorText:
    return ErrorText(_trace_arguments.handle_too_long(fields), INVALID_INPUT)


def unsendable_text(path: str) -> ErrorText:
    """Said by the notebook's MCP clients, before sending: the SDK cannot write the text as JSON."""
    return ErrorText(
        f"{INVALID_ARGUMENTS}`{path}` holds a lone UTF-16 surrogate (half of a character), which "
        "cannot be sent as JSON over MCP; remove it or pass the whole character",
        INVALID_INPUT,
    )


def invalid_field_type(path: str, expected: str) -> ErrorText:
    """A field of an open-schema tool has the wrong JSON type; ``path`` is dotted."""
    return ErrorText(f"{INVALID_ARGUMENTS}invalid type for `{path}`: expected {expected}", INVALID_INPUT)


# ----- the stateless page tools (docs/contract.md#stateless-page-tools) ---------------------------
# Reasons of the standard fetch, inside ``Failed to fetch …`` or a report's failure entry.


def too_many_redirects(limit: int) -> ErrorText:
    return ErrorText(f"Too many redirects (maximum {limit})", OPERATION)


def body_exceeds_limit(limit: int) -> ErrorText:
    return ErrorText(f"Response body exceeds the configured {limit} byte limit", OPERATION)


# URL parse errors (the URL standard parser's wording), inside the ARD / crawl-policy messages.
URL_RELATIVE_WITHOUT_BASE = ErrorText("relative URL without a base", OPERATION)
URL_INVALID_PORT = ErrorText("invalid port number", OPERATION)
URL_INVALID_IPV6 = ErrorText("invalid IPv6 address", OPERATION)
URL_EMPTY_HOST = ErrorText("empty host", OPERATION)
URL_INVALID_DOMAIN = ErrorText("invalid domain character", OPERATION)


def failed_to_fetch_page(reason: str) -> ErrorText:
    """inspect_page's fetch failure: the URL is not echoed."""
    return _with_reason(f"Failed to fetch page: {reason}", NETWORK, reason)


VISUAL_MODE_INVALID = ErrorText("visual_mode must be one of: never, auto, always", OPERATION)
INSPECTION_LIMITS_EXCEEDED = ErrorText(
    "Inspection dimensions, timeout, URL, or selector exceed limits", TIMEOUT
)
INSPECTION_TOO_LARGE = ErrorText(
    "Failed to serialize inspection: inspection envelope cannot fit its safety bound", OPERATION
)


def screenshot_failed(reason: str) -> ErrorText:
    return _with_reason(f"Screenshot failed: {reason}", OPERATION, reason)


SCREENSHOT_TIMED_OUT = ErrorText("Screenshot capture timed out", OPERATION)


def screenshot_capture_failed(detail: str) -> ErrorText:
    return _with_reason(f"Screenshot capture failed: {detail}", OPERATION, detail)


def crawl_policy_failed(reason: str) -> ErrorText:
    return _with_reason(f"Crawl-policy evaluation failed: {reason}", POLICY, reason)


PRODUCT_TOKEN_LENGTH = ErrorText("product token must contain 1 to 64 bytes", OPERATION)
PRODUCT_TOKEN_CHARACTERS = ErrorText(
    "product token may contain only ASCII letters, hyphen, and underscore", OPERATION
)
TARGET_URL_TOO_LONG = ErrorText("target URL exceeds 4096 bytes", OPERATION)
TARGET_URL_SCHEME = ErrorText("target URL must use http or https", OPERATION)
TARGET_URL_HOST = ErrorText("target URL must have a host and must not contain credentials", OPERATION)
TIMEOUT_MS_RANGE = ErrorText("timeout_ms must be between 1 and 30000", TIMEOUT)
CRAWL_REPORT_TOO_LARGE = ErrorText("crawl-policy report exceeds its serialized output bound", POLICY)


def invalid_target_url(reason: str) -> ErrorText:
    return _with_reason(f"invalid target URL: {reason}", OPERATION, reason)


def ard_discovery_failed(reason: str) -> ErrorText:
    return _with_reason(f"ARD discovery failed: {reason}", OPERATION, reason)


ARD_URL_LENGTH = ErrorText("ARD input URL must contain 1 to 2048 bytes", OPERATION)
ARD_HTTPS_REQUIRED = ErrorText("ARD discovery requires an operator-supplied HTTPS URL", OPERATION)
ARD_URL_HAS_CREDENTIALS = ErrorText("ARD input URLs containing credentials are not allowed", OPERATION)
ARD_URL_HAS_NO_HOST = ErrorText("ARD input URL must contain a host", OPERATION)
ARD_TIMEOUT_RANGE = ErrorText("ARD timeout_ms must be between 1 and 30000", TIMEOUT)
ARD_REPORT_TOO_LARGE = ErrorText("bounded ARD report could not satisfy its hard output limit", OPERATION)


def invalid_ard_url(reason: str) -> ErrorText:
    return _with_reason(f"invalid ARD input URL: {reason}", OPERATION, reason)


# ----- for notebook users: hints and connection failures (never part of a tool's error text) ------
# A hint is shown under a tool error's unchanged text (plasmate_nb._tracebacks.HintedError). Each
# is found by the words its message starts with, taken from the constructors above.


def _words_before(text: str, argument: str) -> str:
    return text.partition(argument)[0]


_SENTINEL = "\x00"
OPTION_NOT_FOUND_WORDS = _words_before(option_not_found(0), "value of")
UNSUPPORTED_SCHEME_WORDS = _words_before(scheme_not_allowed(_SENTINEL), _SENTINEL)
RELATIVE_URL_WORDS = str(invalid_url(URL_RELATIVE_WITHOUT_BASE))
HTTP_ONLY_HINT = "only http:// and https:// URLs can be opened"  # for another scheme, or none
FAILED_TO_FETCH_WORDS = _words_before(failed_to_fetch(_SENTINEL, ""), _SENTINEL)

#: A failed open_page leaves no page (and no session): nothing is "unchanged" there.
OPEN_FAILED_HINT = "nothing was opened: fix the URL or check that the site is up, then s.open(url) again"
#: The refusal says how to turn execution on; this offers what works without it.
REPLAY_EXECUTION_HINT = (
    "s.replay_validate(n) says whether step n could be replayed now, without running anything"
)

RENDERER_MEMORY_WORDS = _words_before(renderer_memory_passed(0), "0")

# Scanned in order, first match wins: a text may hold another message as its reason. The refusal
# after a crash names its cause (the memory bound's words) and says what became of the page; a
# memory stop names the call (``Failed to fetch …: Navigation failed: the page passed …``).
_TOOL_ERROR_HINTS = (
    (PAGE_RELOADED_WORDS,
     "the page was loaded again from its URL: s.scroll('down', 0) returns it as it is now; then act again"),
    (PAGE_NOT_RELOADED_WORDS, "s.navigate(url) opens a page again (the site may be down: check it in a browser)"),
    (RENDERER_MEMORY_WORDS,
     "the session goes on at its last good URL; to allow more, restart the kernel with PLASMATE_NB_RENDERER_MEMORY_MB raised"),
    (_words_before(element_not_found(_SENTINEL), _SENTINEL),
     "use an id of the current page (page.elements lists them, page.find(...) picks one); "
     "ids change when the page does"),
    (_words_before(element_does_not_support(_SENTINEL, ""), _SENTINEL),
     "the actions column of page.elements says what each element supports"),
    (NOT_A_SELECT, "select_option needs an element whose role is 'select' (see page.elements)"),
    (NOT_TOGGLEABLE, "toggle needs a checkbox, radio button or details element (see page.elements)"),
    (OPTION_NOT_FOUND_WORDS, "give an option's visible text or value, as the select lists them in page.elements"),
    (UNSUPPORTED_SCHEME_WORDS, HTTP_ONLY_HINT),
    (RELATIVE_URL_WORDS, HTTP_ONLY_HINT),
    (URL_HAS_CREDENTIALS, "send credentials in a form or a cookie (s.set_cookies), never in the URL"),
    (BLOCKED_PREFIX, "nothing was sent: the URL policy refused it, for the reason the message gives"),
    (_words_before(session_not_found(_SENTINEL), _SENTINEL),
     "that browser session is closed (by close(), the idle timeout or the server); s.open(url) starts a new one"),
    (_words_before(max_sessions_reached(0), "0"),
     "close() the sessions you no longer need (their final traces stay readable), then try again"),
    (NO_PAGE_LOADED, "open or navigate to a page first: s.navigate(url)"),
    (_words_before(timeout_after(0), "0"), "the page did not finish in time; try again or check the site in a browser"),
    (_words_before(http_error(0, ""), "0"),
     "the site answered with an error status; only the URL's origin is shown, on purpose: check the path you gave"),
    (FAILED_TO_FETCH_WORDS, "check the URL and that the site is up; the page is unchanged, so you can simply retry"),
    (INVALID_ARGUMENTS, "help() on the method shows its parameters, e.g. help(s.click)"),
    (REPLAY_EXECUTION_DISABLED, REPLAY_EXECUTION_HINT),
)  # fmt: skip
# Where a tool's failure makes a rule's hint untrue: open_page fails with no page to be unchanged
# and no session to go on.
_TOOL_HINTS: dict[tuple[str | None, str], str] = {
    ("open_page", FAILED_TO_FETCH_WORDS): OPEN_FAILED_HINT,
    ("open_page", RENDERER_MEMORY_WORDS):
        "nothing was opened; to allow more, restart the kernel with PLASMATE_NB_RENDERER_MEMORY_MB raised",
}  # fmt: skip


def tool_error_hint(message: str, tool: str | None = None) -> str | None:
    """What a notebook user can do about a tool error with this text, from ``tool`` when given
    (None when nothing useful).

    >>> tool_error_hint("Element not found: e_1")
    'use an id of the current page (page.elements lists them, ...'
    >>> tool_error_hint("Failed to fetch http://x/…: Navigation failed: net::ERR_FAILED", "open_page")
    'nothing was opened: fix the URL or check that the site is up, then s.open(url) again'
    """
    thrown = _javascript_exception(message)
    if thrown is not None:
        return f"the expression {thrown}; the page is as it was: fix the expression and evaluate again"
    for words, hint in _TOOL_ERROR_HINTS:
        if words in message:
            return _TOOL_HINTS.get((tool, words), hint)
    return None


def _javascript_exception(message: str) -> str | None:
    """``threw <Name>: <detail>`` (or ``did not compile: …``) from :func:`evaluate_javascript_error`'s
    JSON text, which a notebook would otherwise show raw; None for any other text."""
    try:
        failure = json.loads(message)["containment_failure"]["message"]
    except (ValueError, TypeError, KeyError):
        return None
    if not isinstance(failure, str) or not failure.startswith(JS_EXCEPTION_PREFIX):
        return None
    kind, _, exception = failure.removeprefix(JS_EXCEPTION_PREFIX).partition(" error: ")
    return f"did not compile: {exception}" if kind == "Compile" else f"threw {exception}"


def options_hint(options: list[str]) -> str:
    """An unknown option's hint: what the select offers (page content, never the value asked for)."""
    return f"the select offers {', '.join(options)} (an option's visible text or value works)"


def missing_scheme_hint(suggestion: str) -> str:
    """``suggestion`` is the URL with ``http://`` added, reduced to its origin (plus ``/…``)."""
    return f"did you mean {suggestion}? URLs start with http:// or https://"


FIND_HINT = "page.elements lists every element; find(..., contains=True) matches part of a label or text"
AMBIGUOUS_FIND_HINT = "page.find_all(...) with the same criteria returns them all, to pick from"


def find_suggestion_hint(call: str) -> str:
    """``call`` is the ``page.find(...)`` that finds the closest element (page text, as the message shows)."""
    return f"did you mean {call}?"


FIND_NEEDS_CRITERIA = "find() needs at least one of role=, label=, text="
FIND_CRITERIA_HINT = (
    'e.g. page.find(label="Email") or page.find(role="button", text="Sign in"); page.elements shows '
    "each element's role, label and text"
)


def unknown_scroll_direction(direction: str, known: tuple[str, ...]) -> str:
    """A notebook warning: the tool takes any direction, and one it does not know as down."""
    shown = (
        repr(direction) if len(direction) <= 16 else f"{direction[:12]!r}… ({len(direction):,} characters)"
    )
    return f"scroll direction {shown} is not one of {', '.join(known)}: the page is scrolled down"


def unknown_replay_code(code: str, known: tuple[str, ...]) -> str:
    return f"unknown replay code {code!r}: explain() knows {', '.join(known)}"


EXPLAIN_HINT = (
    "codes come from a plan: pnb.explain(plan.drift), or the drift column of s.replay_validate_all()"
)
NO_SESSION = "no open browser session"


def no_open_session(closed: bool) -> str:
    return f"{NO_SESSION}: this session was closed" if closed else f"{NO_SESSION}: call open(url) first"


FINAL_TRACE_HINT = (
    "the closed session's trace is s.final_trace (s.final_trace.events() for the table); "
    "s.open(url) starts a new browser session"
)
OPEN_FIRST_HINT = "s.open(url) starts a browser session"
REPLAY_EXECUTION_IS_THE_SERVERS = (
    "replay_execution=True turns replay_execute on for the embedded engine only; a server's operator "
    "turns it on with `plasmate-nb serve --enable-replay-execution`"
)
ALREADY_OPEN = "this session already has an open browser session"
ALREADY_OPEN_HINT = "close() it first, or make another Session() for a second browser session"

RENDERER_MEMORY_SETTING_HINT = (
    "fix it (e.g. %env PLASMATE_NB_RENDERER_MEMORY_MB=2048) and run again; the engine reads it once, "
    "at its first use: a later change needs a kernel restart"
)

# Reading exported traces (load_trace, load_traces, pnb.fleet, pnb.audit). The reasons name
# the failure, never a value of the file: a trace file may hold page-derived text.
NOT_AN_EXPORT = "not a plasmate.trace.v1 export"


#: Why a named pipe, a socket or a device under an export's name is not read (it may never end).
NOT_A_REGULAR_FILE = "not a regular file: a pipe, socket or device"


def cannot_read_file(reason: str, file: str | None = None) -> str:
    """``reason`` is the system's (``No such file or directory``); ``file`` is the shown label."""
    return f"cannot read the file {file} ({reason})" if file else f"cannot read the file ({reason})"


def not_utf8(byte: int) -> str:
    """``byte`` is the offset of the first byte that is not UTF-8."""
    return f"not UTF-8 text (byte {byte})"


def not_an_export_source(kind: str, reader: str) -> str:
    """``reader`` (``load_trace`` or ``load_traces``) was given something that is none of the things
    it reads (``kind`` is its type)."""
    if reader == "load_traces":
        return f"load_traces reads exports: a folder, or file paths, JSON texts or dicts, not `{kind}` among them"
    hint = " (for several exports, use pnb.load_traces)" if kind in ("list", "tuple", "set") else ""
    return f"load_trace reads one export: a file path, JSON text or a dict, not `{kind}`{hint}"


def not_valid_json(reason: object) -> str:
    """``reason`` is the strict reader's (:mod:`plasmate_nb.trace.json_text`): it quotes no value."""
    return f"not valid JSON ({reason})"


def required_field_missing(name: str) -> str:
    return f"the required field {name!r} is missing"


def export_finding(path: str, reason: str) -> str:
    """What is wrong and where: the JSON path only inside the document (``$`` is the whole of it)."""
    return reason if path == "$" else f"at {path}: {reason}"


TRACE_EXPORT_HINT = (
    "a plasmate.trace.v1 export is what a traced session writes: s.trace.export().to_json(path), "
    "or after close() s.final_trace.to_json(path)"
)
TRACE_FILE_HINT = "check the path and that the file is readable; a relative path starts at os.getcwd()"
TRACE_FOLDER_HINT = "load_trace reads one file; load_traces(folder) reads every *.json in a folder"


def unexpected_answer(tool: str, path: str, problem: str) -> str:
    """A server's answer of the wrong shape: where (a JSON path) and what (types, never a value)."""
    return f"the server's answer to {tool} does not follow the tool contract: at {path}: {problem}"


#: A trace_export answer that is the marker only a final trace may be.
EXPORT_NOT_OMITTED = "an export carries its events: only close_page's final_trace may be omitted"

UNEXPECTED_ANSWER_HINT = (
    "nothing of it was used: this MCP server does not answer as the tool contract says "
    "(docs/contract.md#answers), or has a bug; tell its maintainer, or use the embedded engine "
    "(Session() without connect) or plasmate-nb serve"
)

#: The reference engine's screenshot_page answer when it has no Chrome (a success holding the SOM).
NO_SCREENSHOTS_CODE = "screenshot_not_implemented"
NO_SCREENSHOTS = f"the server has no Chrome or Chromium to take screenshots with ({NO_SCREENSHOTS_CODE})"
NO_SCREENSHOTS_HINT = (
    "s.page (the page model) and s.text() read the page without pixels; for screenshots, ask the "
    "server's operator to install Chrome, or use the embedded engine (Session() without connect)"
)

CONNECT_FAILED = "could not connect to the MCP server"


def connect_failed(endpoint: str, reason: str) -> str:
    """``endpoint`` without user info or query (they may hold credentials)."""
    return f"{CONNECT_FAILED} at {endpoint}: {reason}"


def no_answer_within(seconds: float) -> str:
    """A server that took the connection (or was started) but never answered ``initialize``."""
    return f"the server did not answer within {seconds:g} s"


def token_refused(token_given: bool) -> str:
    """The reason for HTTP 401; the token itself is a credential and never shown."""
    if token_given:
        return "the token was refused (HTTP 401)"
    return "it requires a bearer token and none was given (HTTP 401)"


TOKEN_HINT = (
    "pass the token the server printed (or its --token / $PLASMATE_NB_MCP_TOKEN), "
    "or server.token for server = pnb.serve()"
)


def not_an_mcp_endpoint(status: int) -> str:
    return f"it is not an MCP endpoint (HTTP {status})"


def mcp_path_hint(suggestion: str) -> str:
    return f"did you mean {suggestion}? plasmate-nb serve --transport http answers at /mcp"


NOT_MCP_HINT = "give the URL the server printed as its MCP HTTP endpoint (it ends with /mcp)"
NOTHING_LISTENS = "nothing listens there (connection refused)"


def start_server_hint(port: int | None) -> str:
    return (
        f"start the server first: plasmate-nb serve --transport http --port {port or '<port>'} "
        "(add --allow-private-network to open pages on 127.0.0.1), then connect with the token it prints"
    )


def command_not_found(command: str, folder: str) -> str:
    return f"could not start the MCP server: no command {command!r} on PATH or in {folder}"


COMMAND_HINT = (
    "give the command's full path, or run the server with this Python: "
    'Session.connect(command=[sys.executable, "-m", "plasmate_nb", "serve"])'
)
