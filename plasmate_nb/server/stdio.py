"""The MCP server on stdio: JSON-RPC on stdin/stdout, logs on stderr."""

from __future__ import annotations

from mcp.server.stdio import stdio_server

from plasmate_nb.server.app import build_server
from plasmate_nb.tools import Dispatcher


async def serve_stdio(dispatcher: Dispatcher) -> None:
    server = build_server(dispatcher)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
