"""The MCP server on stdio: JSON-RPC on stdin/stdout, logs on stderr.

Lines reach the SDK through :class:`AnsweredLines`, which answers malformed frames with a
JSON-RPC error (the SDK alone would drop them and leave the client waiting), and an id-less
``ping`` with an empty result, as the reference does (docs/contract.md#json-rpc-answers).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from io import TextIOWrapper
from typing import Any

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from plasmate_nb.server.app import build_server
from plasmate_nb.server.jsonrpc_guard import idless_ping_answer, malformed_frame_error
from plasmate_nb.tools import Dispatcher


class AnsweredLines:
    """stdin lines for the SDK; malformed frames are answered on the write stream, not passed on."""

    def __init__(self, source: Any) -> None:
        self._source = source
        self._write: Any = None
        self._attached = anyio.Event()

    def answer_with(self, write_stream: Any) -> None:
        self._write = write_stream
        self._attached.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._source:
            if not line.strip():
                continue
            answer = malformed_frame_error(line) or idless_ping_answer(line)
            if answer is None:
                yield line
                continue
            await self._attached.wait()
            await self._write.send(SessionMessage(answer))


async def serve_stdio(dispatcher: Dispatcher) -> None:
    server = build_server(dispatcher)
    stdin = anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    lines = AnsweredLines(stdin)
    async with stdio_server(stdin=lines) as (read, write):  # type: ignore[arg-type]
        lines.answer_with(write)
        await server.run(read, write, server.create_initialization_options())
