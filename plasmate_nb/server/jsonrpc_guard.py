"""Answer malformed JSON-RPC frames instead of dropping them.

The SDK validates each frame against its message union and silently drops what fails; worse,
a request whose ``id`` has the wrong type (object, array, float, bool) validates as a
*notification*. A client that sent such a frame would wait forever. Every transport runs
frames through :func:`malformed_frame_error` first and answers with the error it returns.

The last check is the SDK's own parse (``validate_json``, pydantic's JSON parser), so whatever
the SDK would drop is answered here: frames nested deeper than its recursion limit, and lone
surrogate escapes (``"\\ud800"``), which Python's ``json`` accepts but the SDK refuses. Nesting
too deep for Python's ``json`` raises ``RecursionError``, which must not escape (it killed the
stdio server); the id of such a frame is read from its top level alone.
"""

from __future__ import annotations

import json
import re
from typing import Any

import mcp_types as types
from pydantic import ValidationError

from plasmate_nb.trace.compact import is_text

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
TOO_DEEP = "Parse error: the frame is nested too deeply"
# A JSON string, or one bracket: enough to find a frame's top-level members without recursion.
# Possessive, and an unclosed string runs to the end as one token: each character is read once
# (a pattern that needed the closing quote rescanned to the end from every quote: quadratic, and
# this runs on the event loop).
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*+"?|[\[\]{}]')
UNREADABLE_TEXT = "Parse error: the frame is not valid JSON for the server (for example a lone surrogate escape in a string)"


def malformed_frame_error(frame: str | bytes) -> types.JSONRPCError | None:
    """The JSON-RPC error answering ``frame``, or ``None`` when the SDK can take it as it is."""
    try:
        message = json.loads(frame)
    except RecursionError:
        return _error(_top_level_id(frame), PARSE_ERROR, TOO_DEEP)
    except (ValueError, UnicodeDecodeError):
        return _error(None, PARSE_ERROR, "Parse error: the frame is not valid JSON")
    if not isinstance(message, dict):
        return _error(None, INVALID_REQUEST, "Invalid Request: a frame must be one JSON-RPC object")
    request_id = message.get("id")
    has_id = "id" in message and request_id is not None
    if isinstance(request_id, str) and not is_text(request_id):  # an answer could not carry it
        return _error(None, PARSE_ERROR, UNREADABLE_TEXT)
    if has_id and not _is_request_id(request_id):
        return _error(None, INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
    answer_to = request_id if has_id else None
    if message.get("jsonrpc") != "2.0":
        return _error(answer_to, INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"')
    if "method" in message:
        if not isinstance(message["method"], str):
            return _error(answer_to, INVALID_REQUEST, "Invalid Request: method must be a string")
        if message.get("params") is not None and not isinstance(message["params"], dict):
            return _error(answer_to, INVALID_REQUEST, "Invalid Request: params must be an object")
    try:
        types.jsonrpc_message_adapter.validate_json(frame, by_name=False)
    except ValidationError as exc:
        unreadable = [
            error["msg"] for error in exc.errors(include_input=False) if error["type"] == "json_invalid"
        ]
        if any("recursion limit" in reason for reason in unreadable):
            return _error(answer_to, PARSE_ERROR, TOO_DEEP)
        if unreadable:
            return _error(answer_to, PARSE_ERROR, UNREADABLE_TEXT)
        return _error(
            answer_to, INVALID_REQUEST, "Invalid Request: not a JSON-RPC request, notification or response"
        )
    except RecursionError:
        return _error(answer_to, PARSE_ERROR, TOO_DEEP)
    return None


def idless_ping_answer(frame: str | bytes) -> types.JSONRPCResponse | None:
    """The answer to a well-formed ``ping`` sent without an id (or with ``"id": null``), else ``None``.

    JSON-RPC makes such a frame a notification, which the SDK drops; the reference answers it
    with ``{"jsonrpc":"2.0","result":{}}`` (no id), as it answers every id-less method outside
    ``notifications/`` (docs/contract.md#json-rpc-answers). Only ``ping`` is answered here: it
    has no effect to repeat. Call it on frames :func:`malformed_frame_error` let through.
    """
    if b"ping" not in frame if isinstance(frame, bytes) else "ping" not in frame:
        return None
    try:
        message = json.loads(frame)
    except (ValueError, RecursionError, UnicodeDecodeError):
        return None
    if not isinstance(message, dict) or message.get("method") != "ping" or message.get("id") is not None:
        return None
    return types.JSONRPCResponse.model_construct(jsonrpc="2.0", result={})  # no id: dumped without one


def error_bytes(error: types.JSONRPCError) -> bytes:
    return error.model_dump_json(by_alias=True, exclude_unset=False).encode()


def _top_level_id(frame: str | bytes) -> Any:
    """The ``id`` of a frame too deep to parse, read from its top level only (``None`` if unreadable)."""
    try:
        text = frame.decode() if isinstance(frame, bytes) else frame
    except UnicodeDecodeError:
        return None
    # Replace every nested value by 0: the top level is then shallow enough to parse.
    shallow, depth, start = [], 0, 0
    for token in _TOKEN.finditer(text):
        bracket = token.group()
        if bracket in "[{":
            if depth == 1:
                shallow.append(text[start : token.start()] + "0")
            depth += 1
        elif bracket in "]}":
            depth -= 1
            if depth == 1:
                start = token.end()
            elif depth < 1:
                break
    if depth != 0 or not text.lstrip().startswith("{"):
        return None
    shallow.append(text[start:])
    try:
        request_id = json.loads("".join(shallow)).get("id")
    except (ValueError, AttributeError):
        return None
    return request_id if _is_request_id(request_id) else None


def _is_request_id(value: Any) -> bool:
    return (isinstance(value, str) and is_text(value)) or (
        isinstance(value, int) and not isinstance(value, bool)
    )


def _error(request_id: Any, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))
