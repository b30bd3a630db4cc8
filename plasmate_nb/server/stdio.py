"""The MCP server on stdio: JSON-RPC on stdin/stdout, logs on stderr.

Lines reach the SDK through :class:`AnsweredLines`, which answers malformed frames with a
JSON-RPC error (the SDK alone would drop them and leave the client waiting), and an id-less
``ping`` with an empty result, as the reference does (docs/contract.md#json-rpc-answers).
They are read by :class:`StdinLines`, so that one Ctrl-C ends the server even while its client
says nothing.
"""

from __future__ import annotations

import asyncio
import codecs
import concurrent.futures
import contextlib
import io
import os
import sys
import threading
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from plasmate_nb.server.app import build_server
from plasmate_nb.server.jsonrpc_guard import idless_ping_answer, malformed_frame_error
from plasmate_nb.tools import Dispatcher

# A hand-over to a loop that has ended, is ending (the hand-over cancelled) or closed under it.
_NOBODY_LEFT = (
    anyio.RunFinishedError,
    asyncio.CancelledError,
    concurrent.futures.CancelledError,
    RuntimeError,
)


class StdinLines:
    """The lines of file descriptor ``fd`` as text (UTF-8, undecodable bytes replaced, newlines
    translated as ``sys.stdin`` does), read by a daemon thread.

    Why not a worker thread per line (the SDK's own stdin): a blocked read in a worker cannot be
    cancelled, and exiting waits for it, so a Ctrl-C while the client was silent did nothing and a
    second one skipped closing the browser. Here a cancelled wait returns at once and the process
    never waits for the reader. The reader uses ``os.read``, never ``sys.stdin``: exiting takes
    the lock of ``sys.stdin``'s buffer, which a blocked ``readline`` would hold. One line is handed
    over at a time.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        send, receive = anyio.create_memory_object_stream[str](0)
        token = anyio.lowlevel.current_token()
        threading.Thread(target=self._read, args=(send, token), name="stdin lines", daemon=True).start()
        async with receive:
            async for line in receive:
                yield line

    def _read(self, send: MemoryObjectSendStream[str], token: Any) -> None:
        decoder = io.IncrementalNewlineDecoder(
            codecs.getincrementaldecoder("utf-8")("replace"), translate=True
        )
        started: list[str] = []  # the pieces of a line whose newline has not come yet
        # Whatever fails here means nobody is left to hand lines to: the loop, the session or stdin ended.
        with contextlib.suppress(*_NOBODY_LEFT, anyio.BrokenResourceError, OSError):
            while data := os.read(self._fd, 65536):
                for line in _complete_lines(decoder.decode(data), started):
                    anyio.from_thread.run(send.send, line, token=token)
            for line in _complete_lines(decoder.decode(b"", final=True), started):
                anyio.from_thread.run(send.send, line, token=token)
            if started:  # a last line without its newline
                anyio.from_thread.run(send.send, "".join(started), token=token)
        with contextlib.suppress(*_NOBODY_LEFT):
            anyio.from_thread.run_sync(send.close, token=token)  # stdin ended: so does the session


def _complete_lines(text: str, started: list[str]) -> list[str]:
    """The lines ``text`` completes (each with its newline); what follows the last newline is kept
    in ``started``. Each piece is joined once, so a line read in many parts costs its length."""
    *ends, rest = text.split("\n")
    lines = []
    for end in ends:
        started.append(end)
        lines.append("".join(started) + "\n")
        started.clear()
    if rest:
        started.append(rest)
    return lines


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
    lines = AnsweredLines(StdinLines(sys.stdin.fileno()))
    async with stdio_server(stdin=lines) as (read, write):  # type: ignore[arg-type]
        lines.answer_with(write)
        await server.run(read, write, server.create_initialization_options())
