"""Safe reasons for Playwright failures, privacy first (the messages around them are worded
by :mod:`plasmate_nb.errors`).

Deviation from the reference, on purpose: messages never echo typed text or selected
values, and URLs are reduced to their origin plus ``/…`` (no userinfo, path, query or
fragment). Playwright's own error text can carry selectors, values and full URLs, so it is
never passed through raw: only a known net error code or a cleaned first line is kept.
"""

from __future__ import annotations

import re

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from plasmate_nb.errors import DOWNLOAD_REFUSED, PAGE_CLOSED, reduce_url, timeout_after

_NET_ERROR = re.compile(r"net::ERR_[A-Z0-9_]+")
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>]*")
_CLOSED_MARKERS = ("has been closed", "Target closed", "Browser closed", "Connection closed")


def is_timeout(error: BaseException) -> bool:
    return isinstance(error, PlaywrightTimeoutError | TimeoutError)


def is_closed(error: BaseException) -> bool:
    return isinstance(error, PlaywrightError) and any(marker in str(error) for marker in _CLOSED_MARKERS)


def describe(error: BaseException, timeout: float, redact: tuple[str, ...] = ()) -> str:
    """A short, safe reason for a Playwright (or asyncio) failure."""
    if is_timeout(error):
        return timeout_after(timeout)
    text = str(error)
    if "Download is starting" in text:
        return DOWNLOAD_REFUSED
    net = _NET_ERROR.search(text)
    if net:
        return net.group(0)
    if is_closed(error):
        return PAGE_CLOSED
    line = text.strip().splitlines()[0] if text.strip() else type(error).__name__
    line = line.split(": ", 1)[1] if re.match(r"^[A-Za-z]+\.[A-Za-z_]+: ", line) else line
    for secret in redact:
        if secret:
            line = line.replace(secret, "…")
    return _URL.sub(lambda match: reduce_url(match.group(0)), line)


# ----- evaluate's JavaScript exceptions (docs/contract.md#javascript-exceptions-in-evaluate) -------

JS_DETAIL_MAX_CHARS = 200
# Names of the language's and the DOM's own exceptions: shown even when the expression names them.
_STANDARD_JS_ERRORS = frozenset({
    "Error", "EvalError", "RangeError", "ReferenceError", "SyntaxError", "TypeError", "URIError",
    "AggregateError", "DOMException", "AbortError", "DataCloneError", "EncodingError", "HierarchyRequestError",
    "IndexSizeError", "InvalidAccessError", "InvalidCharacterError", "InvalidModificationError",
    "InvalidNodeTypeError", "InvalidStateError", "NamespaceError", "NetworkError", "NotAllowedError",
    "NotFoundError", "NotReadableError", "NotSupportedError", "OperationError", "QuotaExceededError",
    "SecurityError", "TimeoutError", "TransactionInactiveError", "UnknownError", "VersionError",
    "WrongDocumentError", "ConstraintError", "ReadOnlyError",
})  # fmt: skip
_THROWN_TYPES = frozenset(
    {"string", "number", "bigint", "boolean", "symbol", "undefined", "object", "function", "null"}
)
_JS_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]{0,63}")
_JS_WORD = re.compile(r"[\w$]+")
_QUOTED = re.compile(r"'[^']*(?:'|$)|\"[^\"]*(?:\"|$)|`[^`]*(?:`|$)")
_COMPILE_ERROR = re.compile(r"^(?:[A-Za-z]+\.[A-Za-z_]+: )?SyntaxError: (.*)$")


def compile_error_detail(error: BaseException) -> str | None:
    """The message of a SyntaxError that stopped the evaluate script compiling, else None.

    Exceptions the expression throws while running are caught in the page and come back as
    values, so a ``SyntaxError`` that still surfaces as a Playwright error is a compile error.
    """
    if not isinstance(error, PlaywrightError):
        return None
    text = str(error).strip()
    found = _COMPILE_ERROR.match(text.splitlines()[0]) if text else None
    return found.group(1) if found else None


def describe_js_exception(name: str | None, message: str | None, expression: str) -> str:
    """``<Name>: <detail>``, the safe rendering of an exception ``evaluate``'s expression threw.

    Privacy first: a JavaScript engine's message can quote the expression (``"s3cret".x is not a
    function``, ``Unexpected identifier 'token'``) and page data (``JSON.parse`` quotes its input;
    a page's own message may say anything), so only this is kept: the exception's name (a
    well-formed identifier, else ``Error``) and the first line of its message, with every quoted
    run holding a letter or digit, every word (a run of ``[\\w$]``) that also occurs in the
    expression, and the path/query of every URL cut to ``…``, at most 200 characters. ``name`` None
    means a value that is not an ``Error`` was thrown (``message`` is then its ``typeof``): its
    value is never shown.
    """
    words = set(_JS_WORD.findall(expression))

    def cut_words(text: str) -> str:
        return _JS_WORD.sub(lambda match: "…" if match.group(0) in words else match.group(0), text)

    if name is None:
        kind = message if message in _THROWN_TYPES else "value"
        return f"thrown {kind} (not an Error)"
    shown = name if name in _STANDARD_JS_ERRORS else cut_words(name) if _JS_NAME.fullmatch(name) else "Error"
    lines = (message or "").strip().splitlines()
    detail = _URL.sub(lambda match: reduce_url(match.group(0)), lines[0].strip() if lines else "")
    detail = _QUOTED.sub(lambda match: _cut_quoted(match.group(0)), detail)
    detail = _no_lone_surrogates(cut_words(detail))
    if len(detail) > JS_DETAIL_MAX_CHARS:
        detail = detail[: JS_DETAIL_MAX_CHARS - 1] + "…"
    return f"{shown}: {detail}" if detail else shown


def _cut_quoted(quoted: str) -> str:
    if not any(char.isalnum() for char in quoted):
        return quoted  # a quoted token such as ')' says where, not what
    closing = quoted[0] if len(quoted) > 1 and quoted[-1] == quoted[0] else ""
    return f"{quoted[0]}…{closing}"


def _no_lone_surrogates(text: str) -> str:
    return "".join("\ufffd" if 0xD800 <= ord(char) <= 0xDFFF else char for char in text)
