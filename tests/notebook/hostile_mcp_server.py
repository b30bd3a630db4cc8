"""A hostile MCP server over stdio, for ``test_hostile_server_answers.py``: it lists the catalogue's
tools and answers each call with the text the script file (argv[1], a JSON object of tool name ->
answer text) gives for that tool, or ``{}``. Built on the MCP SDK's low-level server only, as a
server by another author would be; nothing of plasmate_nb's server is used."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from plasmate_nb.tools.catalogue import TOOLS


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as file:
        answers: dict[str, str] = json.load(file)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool(name=t.name, input_schema={"type": "object"}) for t in TOOLS]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        text = answers.get(params.name, "{}")
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    server: Server[Any] = Server("hostile", on_list_tools=list_tools, on_call_tool=call_tool)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
