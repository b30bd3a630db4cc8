"""Shared helpers of the reliability tests: run sizes, bounded calls, servers, figures, leak checks.

Sizes live here and nowhere else: every test takes ``sizes`` (``BOUNDED`` for ``make test``,
``SOAK`` for ``make soak``) from :data:`SIZED`. Every call a test makes is bounded by
:func:`bounded`, so a hang fails the test instead of blocking CI. No wall-clock time is
ever asserted.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

import psutil
import pytest

from plasmate_nb.browser import Engine, EngineConfig
from plasmate_nb.client import HttpTransport, ToolError
from plasmate_nb.server import HttpServer
from plasmate_nb.tools import Dispatcher
from plasmate_nb.trace import MAX_BYTES, MAX_EVENT_BYTES, MAX_EVENTS

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "reliability.json"
HOSTILE_PAGES = ROOT / "tests" / "fixtures" / "pages" / "hostile"
TOKEN = "reliability-" + "k" * 40  # a fixed test token: visible ASCII, >= 32 bytes
CALL_BOUND_S = 60.0  # no single call may take longer; a hang fails the test
FAST = EngineConfig(navigation_timeout=3, action_timeout=1.5, evaluate_timeout=1.5, settle_timeout=0.5)
ERROR_CLASSES = frozenset(
    {"not_found", "invalid_input", "policy", "timeout", "execution", "network", "operation"}
)


@dataclass(frozen=True)
class Sizes:
    name: str
    long_run_actions: int
    clients: int
    actions_per_client: int
    privacy_examples: int
    malformed_messages: int  # split between stdio and HTTP


BOUNDED = Sizes(
    "bounded",
    long_run_actions=1000,
    clients=8,
    actions_per_client=20,
    privacy_examples=6,
    malformed_messages=1000,
)
SOAK = Sizes(
    "soak",
    long_run_actions=10_000,
    clients=8,
    actions_per_client=50,
    privacy_examples=60,
    malformed_messages=5000,
)

#: ``@SIZED`` parametrises a test with the bounded run, and the soak run marked ``soak``.
SIZED = pytest.mark.parametrize(
    "sizes", [pytest.param(BOUNDED, id="bounded"), pytest.param(SOAK, id="soak", marks=pytest.mark.soak)]
)


async def bounded(awaitable: Awaitable[T], seconds: float = CALL_BOUND_S, what: str = "call") -> T:
    try:  # asyncio.timeout: on Python 3.11, wait_for waits without end for what it cancelled
        async with asyncio.timeout(seconds):
            return await awaitable
    except TimeoutError:
        pytest.fail(f"{what} did not finish within {seconds} s (a hang)")


# ----- figures ---------------------------------------------------------------------------------


def record_figures(sizes: Sizes, section: str, **figures: Any) -> None:
    """Merge ``figures`` into ``benchmarks/results/reliability.json`` under the run's name."""
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    try:
        document = json.loads(RESULTS.read_text())
    except (OSError, ValueError):
        document = {}
    run = document.setdefault(sizes.name, {"sizes": asdict(sizes)})
    run[section] = {**figures, "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    RESULTS.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")


# ----- trace invariants ------------------------------------------------------------------------


def assert_counters(status: dict[str, Any]) -> None:
    """The counter invariant and the retention bounds of one trace_status/trace_export payload."""
    accounted = status["retained_events"] + status["evicted_events"] + status["oversized_events"]
    assert status["next_sequence"] - 1 == accounted + status["cleared_events"], status
    assert status["retained_events"] <= MAX_EVENTS and status["retained_bytes"] <= MAX_BYTES, status


def event_bytes(event: dict[str, Any]) -> int:
    return len(json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode())


def assert_export_bounds(export: dict[str, Any]) -> None:
    assert_counters(export)
    sizes = [event_bytes(event) for event in export["events"]]
    assert all(size <= MAX_EVENT_BYTES for size in sizes)
    assert sum(sizes) == export["retained_bytes"] and len(sizes) == export["retained_events"]
    sequences = [event["sequence"] for event in export["events"]]
    assert sequences == sorted(set(sequences)), "retained sequences must be unique and ascending"


def last_event(export: dict[str, Any]) -> dict[str, Any]:
    assert export["events"], "expected a retained event"
    return export["events"][-1]


# ----- leak checks -----------------------------------------------------------------------------


def secret_forms(secret: str) -> tuple[str, str]:
    """The secret and its plain SHA-256 hex digest: neither may appear anywhere it must not."""
    return secret, hashlib.sha256(secret.encode()).hexdigest()


def leaks(secret: str, texts: Iterable[str]) -> list[str]:
    forms = secret_forms(secret)
    return [text[:300] for text in texts if any(form in text for form in forms)]


# ----- tool calls over the SDK client ----------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    ok: bool
    payload: Any  # the parsed payload, or the error text


class Remote:
    """Tool calls over one SDK client (``HttpTransport``), each bounded; errors become values."""

    def __init__(self, url: str, token: str = TOKEN) -> None:
        self.transport = HttpTransport(url, token)

    async def call(self, tool: str, arguments: dict[str, Any], seconds: float = CALL_BOUND_S) -> Outcome:
        try:
            return Outcome(True, await bounded(self.transport.call(tool, arguments), seconds, tool))
        except ToolError as error:
            return Outcome(False, error.message)

    async def ok(self, tool: str, **arguments: Any) -> Any:
        outcome = await self.call(tool, arguments)
        assert outcome.ok, f"{tool} failed: {outcome.payload}"
        return outcome.payload

    async def error(self, tool: str, **arguments: Any) -> str:
        outcome = await self.call(tool, arguments)
        assert not outcome.ok, f"{tool} unexpectedly succeeded"
        return outcome.payload

    async def aclose(self) -> None:
        await bounded(self.transport.aclose(), 30, "closing the client")


@contextlib.asynccontextmanager
async def remote(url: str, token: str = TOKEN) -> AsyncIterator[Remote]:
    client = Remote(url, token)
    try:
        yield client
    finally:
        await client.aclose()


@contextlib.asynccontextmanager
async def inprocess_server(config: EngineConfig = FAST, **server: Any) -> AsyncIterator[HttpServer]:
    """The real HTTP server (same code as ``serve``) in this process, with small timeouts."""
    engine = Engine(config)
    running = await HttpServer(Dispatcher(engine), port=0, token=TOKEN, **server).start()
    try:
        yield running
    finally:
        await running.stop()
        await engine.aclose()


# ----- the server as a subprocess ----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ServerProcess:
    """``python -m plasmate_nb serve --transport http`` with stderr captured to a file."""

    def __init__(self, log_path: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.log_path = log_path
        self.port = free_port()
        command = [
            sys.executable,
            "-m",
            "plasmate_nb",
            "serve",
            "--transport",
            "http",
            "--port",
            str(self.port),
            "--token",
            TOKEN,
            "--allow-private-network",
            *extra,
        ]
        env = {k: v for k, v in os.environ.items() if k != "PLASMATE_NB_BROWSER_ENDPOINT"} | (env or {})
        self._log = log_path.open("wb")
        self.process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log, env=env
        )
        deadline = time.monotonic() + 60
        while "MCP HTTP endpoint" not in self.stderr():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"server did not start: {self.stderr()[-2000:]}")
            time.sleep(0.05)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def psutil(self) -> psutil.Process:
        return psutil.Process(self.process.pid)

    def browser_pids(self) -> list[int]:
        """Top-level Chromium processes under the server (those whose parent is not a Chromium)."""
        found = []
        for child in self.psutil.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if "chrom" in child.name().lower() and "chrom" not in child.parent().name().lower():
                    found.append(child.pid)
        return found

    def stderr(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(15)
        self._log.close()
