"""Answer malformed JSON-RPC frames instead of dropping them.

The SDK validates each frame against its message union and silently drops what fails; worse,
a request whose ``id`` has the wrong type (object, array, float, bool) validates as a
*notification*. A client that sent such a frame would wait forever. Every transport runs
frames through :func:`malformed_frame_error` first and answers with the error it returns.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def malformed_frame_error(frame: str | bytes) -> types.JSONRPCError | None:
    """The JSON-RPC error answering ``frame``, or ``None`` when the SDK can take it as it is."""
    try:
        message = json.loads(frame)
    except (ValueError, UnicodeDecodeError):
        return _error(None, PARSE_ERROR, "Parse error: the frame is not valid JSON")
    if not isinstance(message, dict):
        return _error(None, INVALID_REQUEST, "Invalid Request: a frame must be one JSON-RPC object")
    request_id = message.get("id")
    has_id = "id" in message and request_id is not None
    if has_id and not _is_request_id(request_id):
        return _error(None, INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
    answer_to = request_id if has_id else None
    if message.get("jsonrpc") != "2.0":
        return _error(answer_to, INVALID_REQUEST, "Invalid Request: jsonrpc must be \"2.0\"")
    if "method" in message:
        if not isinstance(message["method"], str):
            return _error(answer_to, INVALID_REQUEST, "Invalid Request: method must be a string")
        if message.get("params") is not None and not isinstance(message["params"], dict):
            return _error(answer_to, INVALID_REQUEST, "Invalid Request: params must be an object")
    try:
        types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValueError:
        return _error(answer_to, INVALID_REQUEST, "Invalid Request: not a JSON-RPC request, notification or response")
    return None


def error_bytes(error: types.JSONRPCError) -> bytes:
    return error.model_dump_json(by_alias=True, exclude_unset=False).encode()


def _is_request_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _error(request_id: Any, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))
