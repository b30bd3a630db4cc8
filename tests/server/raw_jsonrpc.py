"""Raw newline-delimited JSON-RPC with ``python -m plasmate_nb mcp`` on stdio (and one HTTP helper).

Nothing here goes through an SDK: the tests see exactly the bytes the server writes. Every read
is bounded, so a server that never answers fails the test instead of hanging it.
"""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import sys
import tempfile
import threading
from typing import Any

import httpx2

COMMAND = [sys.executable, "-m", "plasmate_nb", "mcp", "--allow-private-network"]
LEGACY = "2024-11-05"
STABLE = "2025-11-25"
MODERN = "2026-07-28"
ANSWER_BOUND_S = 90.0  # the first browser call starts Chromium
QUIET_S = 1.0  # how long "no answer" is waited for


def initialize_params(version: str) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "raw-test", "version": "1"},
    }


def modern_meta() -> dict[str, Any]:
    """The 2026-07-28 per-request envelope (``params._meta``): needs no ``initialize``."""
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }


class RawStdio:
    """One server process; :meth:`request` sends a frame and returns the answer with its id."""

    def __init__(self, *extra: str, command: list[str] | None = None) -> None:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        self.process = subprocess.Popen(
            [*(command or COMMAND), *extra],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._ids = itertools.count(1)
        self.unmatched: list[dict[str, Any]] = []  # answers read while waiting for another id
        self.version: str | None = None  # negotiated by initialize()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    def __enter__(self) -> RawStdio:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, frame: dict[str, Any] | str | bytes) -> None:
        if isinstance(frame, dict):
            frame = json.dumps(frame)
        data = frame.encode() if isinstance(frame, str) else frame
        assert self.process.stdin is not None
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def read_line(self, timeout: float = ANSWER_BOUND_S) -> str | None:
        """The next line the server wrote (``None`` if none came within ``timeout``)."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            return None
        assert line, f"the server exited: {self.stderr()[-2000:]}"
        return line.decode()

    def read(self, timeout: float = ANSWER_BOUND_S) -> dict[str, Any] | None:
        line = self.read_line(timeout)
        return None if line is None else json.loads(line)

    def answer_to(self, request_id: Any, timeout: float = ANSWER_BOUND_S) -> dict[str, Any]:
        while True:
            message = self.read(timeout)
            assert message is not None, f"no answer to {request_id!r} within {timeout} s"
            if "id" in message and message["id"] == request_id:
                return message
            self.unmatched.append(message)

    def request(self, method: str, params: dict[str, Any] | None = None, **frame: Any) -> dict[str, Any]:
        """Send a request (a fresh id unless ``id=`` is given) and return its whole answer."""
        request_id = frame.pop("id") if "id" in frame else f"r{next(self._ids)}"
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method, **frame}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.answer_to(request_id)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {})})

    def initialize(self, version: str = STABLE) -> dict[str, Any]:
        """``initialize`` then ``notifications/initialized``; returns the initialize result."""
        answer = self.request("initialize", initialize_params(version))
        assert "result" in answer, answer
        self.version = answer["result"]["protocolVersion"]
        self.notify("notifications/initialized")
        return answer["result"]

    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """A ``tools/call``'s result (asserts it is not a JSON-RPC error)."""
        answer = self.request("tools/call", {"name": tool, "arguments": arguments or {}})
        assert "result" in answer, answer
        return answer["result"]

    def payload(self, tool: str, arguments: dict[str, Any] | None = None) -> Any:
        """A successful call's parsed text payload."""
        result = self.call(tool, arguments)
        assert not result.get("isError"), result
        return json.loads(result["content"][0]["text"])

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def close(self) -> None:
        if self.process.stdin is not None and not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._stderr.close()


class RawHttp:
    """Raw JSON-RPC POSTs to a running HTTP server's ``/mcp`` (one MCP session)."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.headers = {
            "authorization": f"Bearer {token}",
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        }
        self.client = httpx2.AsyncClient(timeout=ANSWER_BOUND_S)
        self._ids = itertools.count(1)

    async def post(self, message: dict[str, Any]) -> httpx2.Response:
        return await self.client.post(self.url, json=message, headers=self.headers)

    async def initialize(self, version: str = STABLE) -> dict[str, Any]:
        started = await self.post(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize_params(version)}
        )
        assert started.status_code == 200, started.text
        self.headers = {
            **self.headers,
            "mcp-session-id": started.headers["mcp-session-id"],
            "mcp-protocol-version": version,
        }
        done = await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert done.status_code == 202, done.text
        return started.json()["result"]

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        if params is not None:
            message["params"] = params
        answer = await self.post(message)
        assert answer.status_code == 200, answer.text
        return answer.json()

    async def aclose(self) -> None:
        await self.client.aclose()


def sorted_everywhere(value: Any) -> bool:
    """Whether every object in ``value`` (a JSON text parsed keeping key order) has sorted keys."""
    if isinstance(value, dict):
        return list(value) == sorted(value) and all(sorted_everywhere(item) for item in value.values())
    if isinstance(value, list):
        return all(sorted_everywhere(item) for item in value)
    return True
