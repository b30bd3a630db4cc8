"""The MCP server (the ``mcp`` SDK): stdio and streamable HTTP over one dispatcher.

Names load on first use (PEP 562), so importing this package starts neither the SDK nor uvicorn.
"""

import typing as _typing

from plasmate_nb._lazy import lazy_exports as _lazy_exports

_EXPORTS = {
    "plasmate_nb.server.app": ("INSTRUCTIONS", "SERVER_NAME", "build_server"),
    "plasmate_nb.server.http": ("HttpServer", "ServerConfigError"),
    "plasmate_nb.server.stdio": ("serve_stdio",),
}
__all__, __getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)

if _typing.TYPE_CHECKING:  # the same names for static tools (tests/test_lean_imports.py keeps them equal)
    from plasmate_nb.server.app import INSTRUCTIONS as INSTRUCTIONS
    from plasmate_nb.server.app import SERVER_NAME as SERVER_NAME
    from plasmate_nb.server.app import build_server as build_server
    from plasmate_nb.server.http import HttpServer as HttpServer
    from plasmate_nb.server.http import ServerConfigError as ServerConfigError
    from plasmate_nb.server.stdio import serve_stdio as serve_stdio
