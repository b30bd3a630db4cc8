"""Backends of the tool contract: ``call(tool, arguments) -> payload | ToolError``.

One interface, several transports (httpx style): the in-process engine, an MCP server over
stdio and an MCP server over streamable HTTP. Each loads on first use (PEP 562): ``ToolError``
and ``Transport`` start no browser and no MCP SDK.
"""

import typing as _typing

from plasmate_nb._lazy import lazy_exports as _lazy_exports

_EXPORTS = {
    "plasmate_nb.client.base": ("ServerAnswerError", "ToolError", "Transport"),
    "plasmate_nb.client.bound": ("LoopBoundTransport",),
    "plasmate_nb.client.embedded": (
        "EmbeddedHttpServer", "close_embedded", "embedded_dispatcher", "embedded_transport", "serve_embedded_http",
    ),
    "plasmate_nb.client.inprocess": ("InProcessTransport",),
    "plasmate_nb.client.mcp": ("HttpTransport", "StdioTransport"),
}  # fmt: skip
__all__, __getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)

if _typing.TYPE_CHECKING:  # the same names for static tools (tests/test_lean_imports.py keeps them equal)
    from plasmate_nb.client.base import ServerAnswerError as ServerAnswerError
    from plasmate_nb.client.base import ToolError as ToolError
    from plasmate_nb.client.base import Transport as Transport
    from plasmate_nb.client.bound import LoopBoundTransport as LoopBoundTransport
    from plasmate_nb.client.embedded import EmbeddedHttpServer as EmbeddedHttpServer
    from plasmate_nb.client.embedded import close_embedded as close_embedded
    from plasmate_nb.client.embedded import embedded_dispatcher as embedded_dispatcher
    from plasmate_nb.client.embedded import embedded_transport as embedded_transport
    from plasmate_nb.client.embedded import serve_embedded_http as serve_embedded_http
    from plasmate_nb.client.inprocess import InProcessTransport as InProcessTransport
    from plasmate_nb.client.mcp import HttpTransport as HttpTransport
    from plasmate_nb.client.mcp import StdioTransport as StdioTransport
