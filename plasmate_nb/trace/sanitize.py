"""What of a tool call's arguments a trace keeps (docs/contract.md#sanitisation) and the error classes (docs/contract.md#the-classifier).

``sanitize_parameters`` works from the *raw* arguments, before the handler runs and even
when they are invalid: missing keys, wrong types and non-object ``arguments`` all give a
well-formed result. No value, digest or fragment of a secret is kept: typed text and
selected values become ``{"byte_length": N, "redacted": true}``, URLs become the origin
plus a keyed fingerprint, JavaScript and cookies become counts or flags.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

from .compact import clean_text, truncate_utf8, utf8_len
from .constants import MAX_STRING_BYTES, REDACTED_FIELDS_BY_ACTION
from .fingerprint import TraceKey
from .origin import origin

_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1
_DEFAULT_SCROLL_DIRECTION = "down"
_DEFAULT_SCROLL_PIXELS = 300

# Lower-cased substrings scanned in this order; the first hit wins (docs/contract.md#the-classifier).
_ERROR_RULES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("not found",), "not_found"),
    (("invalid argument",), "invalid_input"),
    (("policy", "blocked"), "policy"),
    (("timeout",), "timeout"),
    (("javascript", "execution"), "execution"),
    (("fetch", "navigation"), "network"),
)
_DEFAULT_ERROR_CLASS = "operation"


class PendingUrlParameters(dict[str, Any]):
    """open_page / navigate_to parameters whose ``url_fingerprint`` awaits a session key.

    Returned by ``sanitize_parameters`` when no key is given: the dict itself holds
    ``origin`` and ``url_fingerprint: None``; the raw URL is kept privately (never in the
    dict, its repr, or any serialisation) until ``TraceLog.record`` replaces the ``None``
    with the fingerprint under the recording log's own key. Refuses pickle and copy.
    """

    __slots__ = ("__url",)

    def __init__(self, origin_: str | None, url: str) -> None:
        super().__init__(origin=origin_, url_fingerprint=None)
        self.__url = url

    def resolve(self, key: TraceKey) -> dict[str, Any]:
        """A plain dict of these parameters with the URL fingerprinted under ``key``."""
        resolved = dict(self)
        if resolved.get("url_fingerprint") is None:
            resolved["url_fingerprint"] = key.url_fingerprint(self.__url)
        return resolved

    def __reduce_ex__(self, protocol: object) -> NoReturn:
        raise TypeError("pending URL parameters hold a raw URL and cannot be pickled or copied")

    def __copy__(self) -> NoReturn:
        raise TypeError("pending URL parameters hold a raw URL and cannot be pickled or copied")

    def __deepcopy__(self, memo: object) -> NoReturn:
        raise TypeError("pending URL parameters hold a raw URL and cannot be pickled or copied")


def sanitize_parameters(action: str, arguments: Any, key: TraceKey | None = None) -> dict[str, Any]:
    """The event ``parameters`` of ``action`` called with ``arguments`` (keys sorted).

    ``key`` (the session's :class:`TraceKey`, ``TraceLog.key``) is used only for the
    ``url_fingerprint`` of ``open_page`` / ``navigate_to``. Without it those two return a
    :class:`PendingUrlParameters` that ``TraceLog.record`` completes with its own key, so
    ``sanitize_parameters(action, arguments)`` followed by ``log.record(...)`` is enough.
    Actions without retained parameters, and untraced actions, give ``{}``.
    """
    args: Mapping[str, Any] = arguments if isinstance(arguments, Mapping) else {}
    if action in ("open_page", "navigate_to"):
        url = args.get("url")
        if not isinstance(url, str):
            return {"origin": None, "url_fingerprint": None}
        if key is None:
            return PendingUrlParameters(origin(url), url)
        return {"origin": origin(url), "url_fingerprint": key.url_fingerprint(url)}
    if action == "type_text":
        append = args.get("append")
        return {"append": append if isinstance(append, bool) else False, "value": _redacted(args.get("text"))}
    if action == "select_option":
        return {"value": _redacted(args.get("value"))}
    if action == "scroll":
        direction = args.get("direction")
        if not isinstance(direction, str):
            direction = _DEFAULT_SCROLL_DIRECTION
        pixels = args.get("pixels")
        if not _is_i64(pixels):
            pixels = _DEFAULT_SCROLL_PIXELS
        return {
            "direction": truncate_utf8(clean_text(direction), MAX_STRING_BYTES),
            "pixels": pixels,
            "targeted": "element_id" in args,
        }
    if action == "set_cookies":
        cookies = args.get("cookies")
        return {"cookie_count": len(cookies) if isinstance(cookies, list | tuple) else 0}
    if action == "clear_cookies":
        return {"filter_present": any(name in args for name in ("name", "domain", "url"))}
    return {}


def redacted_fields(action: str) -> list[str]:
    """The argument names whose values an ``action`` event omits (a fresh list)."""
    return list(REDACTED_FIELDS_BY_ACTION.get(action, ()))


def classify_error(message: object) -> str:
    """The coarse class of a tool error message. Only the class is ever stored."""
    text = (message if isinstance(message, str) else str(message)).lower()
    for needles, error_class in _ERROR_RULES:
        if any(needle in text for needle in needles):
            return error_class
    return _DEFAULT_ERROR_CLASS


def _redacted(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, str):
        return None
    return {"byte_length": utf8_len(value), "redacted": True}


def _is_i64(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and _I64_MIN <= value <= _I64_MAX
