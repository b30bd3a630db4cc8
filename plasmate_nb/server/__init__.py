"""The MCP server (the ``mcp`` SDK): stdio and streamable HTTP over one dispatcher."""

from plasmate_nb.server.app import INSTRUCTIONS, SERVER_NAME, build_server
from plasmate_nb.server.http import HttpServer, ServerConfigError
from plasmate_nb.server.stdio import serve_stdio

__all__ = ["INSTRUCTIONS", "SERVER_NAME", "HttpServer", "ServerConfigError", "build_server", "serve_stdio"]
