"""Fixtures of the notebook-layer tests: a ``transport`` of the tool contract and the site it serves.

Every test here speaks only the tool contract, so the same tests, with the same assertions,
run over every backend: the real dispatcher over the scripted engine (``tests/scripted_engine.py``:
the demo site's pages without a browser, a fresh engine per test), the embedded in-process
engine, our MCP server over a real stdio subprocess, and our MCP server over real streamable
HTTP. All live on the process-wide background loop (where the sync ``Session`` runs) and are
reached from any loop through ``LoopBoundTransport``; all serve the bundled demo site's URLs.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from plasmate_nb._loop import background_loop, run_sync, spawn
from plasmate_nb.browser import Engine, EngineConfig
from plasmate_nb.client import (
    HttpTransport,
    InProcessTransport,
    LoopBoundTransport,
    StdioTransport,
    embedded_transport,
)
from plasmate_nb.client.base import Transport
from plasmate_nb.server import HttpServer
from plasmate_nb.tools import Dispatcher
from tests.scripted_engine import ScriptedEngine

BACKENDS = ["scripted", "embedded", "stdio", "http"]
TOKEN = "notebook-tests-" + "n" * 32


class _RealBackends:
    """Each real backend built once per test session, on the background loop."""

    def __init__(self) -> None:
        self._transports: dict[str, Transport] = {}
        self._server: HttpServer | None = None

    async def _build(self, name: str) -> Transport:
        loop = background_loop()
        if name == "embedded":
            return await embedded_transport()
        if name == "stdio":
            command = [sys.executable, "-m", "plasmate_nb", "serve", "--allow-private-network"]
            return LoopBoundTransport(StdioTransport(command), loop)
        self._server = HttpServer(Dispatcher(Engine(EngineConfig())), port=0, token=TOKEN)
        await self._server.start()
        return LoopBoundTransport(HttpTransport(self._server.url, token=TOKEN), loop)

    def get(self, name: str) -> Transport:
        if name not in self._transports:
            self._transports[name] = run_sync(self._build(name))
        return self._transports[name]

    def close(self) -> None:
        for name, transport in self._transports.items():
            if name != "embedded":  # the embedded engine is the process's own
                run_sync(transport.aclose())
        if self._server is not None:
            run_sync(self._stop_http(self._server))

    @staticmethod
    async def _stop_http(server: HttpServer) -> None:
        await server.stop()
        await server.dispatcher.engine.aclose()


@pytest.fixture(scope="session")
def real_backends() -> Iterator[_RealBackends]:
    backends = _RealBackends()
    try:
        yield backends
    finally:
        backends.close()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest_asyncio.fixture
async def transport(backend: str, real_backends: _RealBackends, demo) -> AsyncIterator[Transport]:
    if backend != "scripted":
        yield real_backends.get(backend)
        return
    engine = ScriptedEngine(demo.base_url)  # the demo site's origin; it is never connected to
    scripted = LoopBoundTransport(InProcessTransport(Dispatcher(engine)), background_loop())
    try:
        yield scripted
    finally:
        await asyncio.wrap_future(spawn(engine.aclose()))


@pytest.fixture
def site_url(demo) -> str:
    """Base URL (no trailing slash) of the site every backend's engine can open: the demo site."""
    return demo.base_url


@pytest.fixture
def login_url(site_url: str) -> str:
    return f"{site_url}/login.html"
