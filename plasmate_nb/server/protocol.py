"""The reference's JSON-RPC answers where the SDK's differ (docs/contract.md#json-rpc-answers).

One :class:`ReferenceAnswers` middleware (the SDK's ``Server.middleware`` hook, which sees every
inbound request before the SDK validates or routes it) gives:

- ``initialize`` params checked in the reference's order, with its ``-32602`` texts; a
  ``2024-11-05`` client gets ``serverInfo`` of ``name`` and ``version`` only;
- the lifecycle on ``tools/list`` and ``tools/call``: ``-32600`` before ``initialize``, and
  ``-32600`` after it until ``notifications/initialized`` arrives (a new ``initialize`` starts
  over); requests carrying the 2026-07-28 per-request envelope need neither;
- ``notifications/initialized`` sent *with* an id: ``{}`` (``-32600`` before ``initialize``);
- ``tools/call``: ``-32602`` ``Missing params``, ``Missing tool name``, ``Unknown tool: <name>``;
- ``-32601`` ``Method not found: <method>`` wherever the SDK answers ``-32601``.

The SDK keeps whether ``notifications/initialized`` arrived on its private ``Connection``;
:class:`Handshakes` records it through the public notification hook instead, per ``initialize``
(the ``client_params`` object each one commits), so it needs no private attribute and forgets a
connection with it. An id-less ``ping`` is answered on stdio (``stdio.py``), before the SDK.
"""

from __future__ import annotations

import weakref
from collections.abc import Collection, Mapping
from typing import Any

from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from plasmate_nb.errors import unknown_tool
from plasmate_nb.server.envelope import is_legacy

INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

NOT_INITIALIZED = "MCP connection is not initialized; call initialize or use modern per-request metadata"
AWAITING_INITIALIZED = "MCP connection is awaiting notifications/initialized"
INITIALIZED_TOO_EARLY = "initialize must be called before notifications/initialized"
MISSING_INITIALIZE_PARAMS = "Missing initialize params object"
MISSING_PROTOCOL_VERSION = "Missing protocolVersion"
MISSING_CAPABILITIES = "Missing client capabilities object"
MISSING_CLIENT_INFO = "Missing clientInfo object"
BAD_CLIENT_INFO = "clientInfo must contain string name and version fields"
MISSING_PARAMS = "Missing params"
MISSING_TOOL_NAME = "Missing tool name"
INITIALIZED = "notifications/initialized"
LIFECYCLE_METHODS = frozenset({"tools/list", "tools/call"})


def method_not_found(method: str) -> str:
    return f"Method not found: {method}"


class Handshakes:
    """Which ``initialize`` calls have been followed by ``notifications/initialized``."""

    def __init__(self) -> None:
        self._completed: dict[int, weakref.ref[Any]] = {}

    def complete(self, client_params: Any) -> None:
        key = id(client_params)
        self._completed[key] = weakref.ref(client_params, lambda _: self._completed.pop(key, None))

    def completed(self, client_params: Any) -> bool:
        ref = self._completed.get(id(client_params))
        return ref is not None and ref() is client_params


class ReferenceAnswers:
    """``Server.middleware`` giving the reference's JSON-RPC answers (module docstring)."""

    def __init__(self, tool_names: Collection[str], handshakes: Handshakes) -> None:
        self.tool_names = frozenset(tool_names)
        self.handshakes = handshakes

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        method, params = ctx.method, ctx.params
        if ctx.request_id is None:  # a notification: the SDK's (it answers none)
            return await call_next(ctx)
        if method == "initialize":
            _check_initialize(params)
            return _legacy_server_info(await call_next(ctx))
        if method == INITIALIZED:
            if ctx.session.client_params is None:
                raise MCPError(INVALID_REQUEST, INITIALIZED_TOO_EARLY)
            self.handshakes.complete(ctx.session.client_params)
            return {}
        if method in LIFECYCLE_METHODS and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self._check_lifecycle(ctx)
        if method == "tools/call":
            self._check_tool_call(params)
        try:
            return await call_next(ctx)
        except MCPError as exc:
            if exc.code == METHOD_NOT_FOUND:
                raise MCPError(METHOD_NOT_FOUND, method_not_found(method)) from None
            raise

    def _check_lifecycle(self, ctx: ServerRequestContext[Any, Any]) -> None:
        client_params = ctx.session.client_params
        if client_params is None:
            raise MCPError(INVALID_REQUEST, NOT_INITIALIZED)
        if not self.handshakes.completed(client_params):
            raise MCPError(INVALID_REQUEST, AWAITING_INITIALIZED)

    def _check_tool_call(self, params: Mapping[str, Any] | None) -> None:
        if params is None:
            raise MCPError(INVALID_PARAMS, MISSING_PARAMS)
        name = params.get("name")
        if not isinstance(name, str):
            raise MCPError(INVALID_PARAMS, MISSING_TOOL_NAME)
        if name not in self.tool_names:
            raise MCPError(INVALID_PARAMS, unknown_tool(name))


def _check_initialize(params: Mapping[str, Any] | None) -> None:
    """The reference's checks, in its order (the SDK's own validation follows, with its own text)."""
    if not isinstance(params, Mapping):
        raise MCPError(INVALID_PARAMS, MISSING_INITIALIZE_PARAMS)
    if not isinstance(params.get("protocolVersion"), str):
        raise MCPError(INVALID_PARAMS, MISSING_PROTOCOL_VERSION)
    if not isinstance(params.get("capabilities"), Mapping):
        raise MCPError(INVALID_PARAMS, MISSING_CAPABILITIES)
    client_info = params.get("clientInfo")
    if not isinstance(client_info, Mapping):
        raise MCPError(INVALID_PARAMS, MISSING_CLIENT_INFO)
    if not (isinstance(client_info.get("name"), str) and isinstance(client_info.get("version"), str)):
        raise MCPError(INVALID_PARAMS, BAD_CLIENT_INFO)


def _legacy_server_info(result: HandlerResult) -> HandlerResult:
    """A 2024-11-05 ``initialize`` result names the server by ``name`` and ``version`` only."""
    if isinstance(result, dict) and is_legacy(str(result.get("protocolVersion"))):
        info = result.get("serverInfo")
        if isinstance(info, dict):
            result = {**result, "serverInfo": {key: info[key] for key in ("name", "version") if key in info}}
    return result


def install(server: Server[Any], tool_names: Collection[str]) -> None:
    """Give ``server`` the reference's answers: the middleware, and the handshake's end recorded."""
    handshakes = Handshakes()

    async def initialized(ctx: ServerRequestContext[Any, Any], params: types.NotificationParams) -> None:
        if ctx.session.client_params is not None:
            handshakes.complete(ctx.session.client_params)

    server.add_notification_handler(INITIALIZED, types.NotificationParams, initialized)
    server.middleware.append(ReferenceAnswers(tool_names, handshakes))
