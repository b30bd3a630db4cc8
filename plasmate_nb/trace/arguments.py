"""Closed-schema argument parsing for the trace tools (docs/contract.md#argument-errors).

``trace_status``, ``trace_export`` and ``trace_clear`` take exactly ``{session_id}``;
``replay_validate`` takes ``{session_id, trace_id, sequence, confirmed?}``. Failures raise
:class:`InvalidArguments` whose ``str()`` is the whole tool error text, in serde's wording
(``Invalid arguments: unknown field `x`, expected `session_id```). Deliberate difference
from serde: a message names fields and JSON kinds, **never argument values** (serde would
print ``integer `5``` or ``string "..."``), and an unknown field name longer than 64 bytes
is cut, so a hostile key cannot make the error large. Entries are checked in the order
they arrive, like serde: the first offending entry wins; missing fields are reported
after all entries, in declaration order.

The message texts are built by the public functions below (``missing_field`` …), which
:mod:`plasmate_nb.errors` re-exports with their trace error class; the tool arguments
checker words its own failures with them too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .compact import clean_text, truncate_utf8, utf8_len
from .constants import MAX_HANDLE_BYTES

INVALID_ARGUMENTS = "Invalid arguments: "
# The serde integer types of the reference's argument structs: the values each holds (usize on the
# 64-bit targets the reference ships for).
SERDE_INTEGERS = {
    "i32": (-(2**31), 2**31 - 1),
    "u32": (0, 2**32 - 1),
    "u64": (0, 2**64 - 1),
    "usize": (0, 2**64 - 1),
}
_HANDLE_FIELDS = ("session_id",)
_REPLAY_FIELDS = ("session_id", "trace_id", "sequence", "confirmed")
_REPLAY_REQUIRED = ("session_id", "trace_id", "sequence")
_EXECUTE_FIELDS = (*_REPLAY_FIELDS, "value")


class InvalidArguments(Exception):
    """A trace tool's arguments did not match its closed schema. ``str()`` is the tool error."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class ReplayRequest:
    """A parsed ``replay_validate`` (or ``replay_execute``) call."""

    session_id: str
    trace_id: str
    sequence: int
    confirmed: bool = False


@dataclass(frozen=True, slots=True)
class ExecuteRequest:
    """A parsed ``replay_execute`` call: the replay request and the caller's ``value``, if any.

    ``value`` goes to the page only; its repr never shows it."""

    replay: ReplayRequest
    value: str | None = field(default=None, repr=False)


def parse_trace_handle(arguments: Any) -> str:
    """The ``session_id`` of a trace_status / trace_export / trace_clear call."""
    fields = _fields(arguments)
    session_id: str | None = None
    for name, value in fields.items():
        if name != "session_id":
            raise InvalidArguments(unknown_field(name, _HANDLE_FIELDS))
        session_id = _string(value)
    if session_id is None:
        raise InvalidArguments(missing_field("session_id"))
    if utf8_len(session_id) > MAX_HANDLE_BYTES:
        raise InvalidArguments(handle_too_long("session_id"))
    return session_id


def parse_replay_request(arguments: Any) -> ReplayRequest:
    """The :class:`ReplayRequest` of a replay_validate call (``sequence`` 0 is accepted)."""
    return _parse_replay(arguments, _REPLAY_FIELDS)[0]


def parse_execute_request(arguments: Any) -> ExecuteRequest:
    """The :class:`ExecuteRequest` of a replay_execute call: replay_validate's fields plus ``value``."""
    request, value = _parse_replay(arguments, _EXECUTE_FIELDS)
    return ExecuteRequest(request, value)


def _parse_replay(arguments: Any, allowed: tuple[str, ...]) -> tuple[ReplayRequest, str | None]:
    fields = _fields(arguments)
    parsed: dict[str, Any] = {}
    value: str | None = None
    for name, given in fields.items():
        if name in ("session_id", "trace_id"):
            parsed[name] = _string(given)
        elif name == "sequence":
            parsed[name] = _u64(given)
        elif name == "confirmed":
            parsed[name] = _boolean(given)
        elif name == "value" and name in allowed:
            value = _string(given)
        else:
            raise InvalidArguments(unknown_field(name, allowed))
    for name in _REPLAY_REQUIRED:
        if name not in parsed:
            raise InvalidArguments(missing_field(name))
    if utf8_len(parsed["session_id"]) > MAX_HANDLE_BYTES or utf8_len(parsed["trace_id"]) > MAX_HANDLE_BYTES:
        raise InvalidArguments(handle_too_long("session_id or trace_id"))
    return ReplayRequest(**parsed), value


def _fields(arguments: Any) -> Mapping[str, Any]:
    if arguments is None:  # params.arguments defaults to {}
        return {}
    if not isinstance(arguments, Mapping):
        raise InvalidArguments(invalid_type(json_kind(arguments), "an object"))
    return arguments


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise _invalid_type(value, "a string")
    return value


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _invalid_type(value, "a boolean")
    return value


def _u64(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _invalid_type(value, "u64")
    low, high = SERDE_INTEGERS["u64"]
    if not low <= value <= high:
        raise InvalidArguments(invalid_value("integer", "u64"))
    return value


def json_kind(value: Any) -> str:
    """serde's name for the JSON kind of ``value`` (without the value serde would also print)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "floating point"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "sequence"
    if isinstance(value, Mapping):
        return "map"
    return "value"


def _invalid_type(value: Any, expected: str) -> InvalidArguments:
    return InvalidArguments(invalid_type(json_kind(value), expected))


# ----- the message texts ---------------------------------------------------------------------


def invalid_type(kind: str, expected: str) -> str:
    return f"{INVALID_ARGUMENTS}invalid type: {kind}, expected {expected}"


def invalid_value(kind: str, expected: str) -> str:
    return f"{INVALID_ARGUMENTS}invalid value: {kind}, expected {expected}"


def missing_field(name: str) -> str:
    return f"{INVALID_ARGUMENTS}missing field `{name}`"


def handle_too_long(fields: str) -> str:
    return f"{INVALID_ARGUMENTS}{fields} exceeds {MAX_HANDLE_BYTES} bytes"


def unknown_field(name: Any, expected: tuple[str, ...]) -> str:
    """Names ``name`` cut to 64 bytes (a hostile key cannot make the error large)."""
    shown = clean_text(name if isinstance(name, str) else str(name))
    cut = truncate_utf8(shown, MAX_HANDLE_BYTES)
    if cut != shown:
        cut += "…"
    if len(expected) == 1:
        wanted = f"`{expected[0]}`"
    elif len(expected) == 2:  # serde's wording for two fields
        wanted = f"`{expected[0]}` or `{expected[1]}`"
    else:
        wanted = "one of " + ", ".join(f"`{field}`" for field in expected)
    return f"{INVALID_ARGUMENTS}unknown field `{cut}`, expected {wanted}"
