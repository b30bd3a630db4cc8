"""StdinLines reads what ``sys.stdin`` would: the same lines, however the bytes arrive.

The stdio server reads stdin with ``os.read`` in a daemon thread (so a Ctrl-C ends it even while
the client is silent); the lines it hands over must be exactly those a ``TextIOWrapper`` over the
same bytes gives (UTF-8 with undecodable bytes replaced, CRLF and CR translated), whatever the
chunks the bytes come in, split inside a character or between CR and LF included.
"""

from __future__ import annotations

import io
import os
import threading

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from plasmate_nb.server.stdio import StdinLines

PIECES = st.sampled_from(
    [
        b"\n",
        b"\r",
        b"\r\n",
        b"{",
        b'"a":1}',
        b"\xc3\xa9",
        b"\xe2\x80\xa8",
        b"\xf0\x9f\x98\x80",
        b"\xff",
        b"x" * 70000,
    ]
)


def lines_of(data: bytes, cuts: list[int]) -> list[str]:
    read_end, write_end = os.pipe()

    def write() -> None:
        with os.fdopen(write_end, "wb", buffering=0) as pipe:
            start = 0
            for cut in [*sorted({c % (len(data) + 1) for c in cuts}), len(data)]:
                pipe.write(data[start:cut])
                start = cut

    async def read() -> list[str]:
        return [line async for line in StdinLines(read_end)]

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        return anyio.run(read)
    finally:
        writer.join(10)
        os.close(read_end)


@settings(max_examples=60, deadline=None)
@given(st.lists(PIECES, max_size=12).map(b"".join), st.lists(st.integers(min_value=0), max_size=6))
def test_the_lines_are_those_sys_stdin_would_read(data: bytes, cuts: list[int]) -> None:
    expected = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace").readlines()
    assert lines_of(data, cuts) == expected
