"""Fixtures of the reliability tests: the real MCP server in-process (small timeouts) or as a subprocess."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from plasmate_nb.server import HttpServer
from tests.reliability.support import ServerProcess, inprocess_server


@pytest_asyncio.fixture(scope="module")
async def fast_server() -> AsyncIterator[HttpServer]:
    """``HttpServer(Dispatcher(Engine(FAST)))`` on a free loopback port, private network allowed."""
    async with inprocess_server() as server:
        yield server


@pytest.fixture(scope="module")
def server_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """``python -m plasmate_nb serve --transport http ...`` with its stderr in a file."""
    server = ServerProcess(tmp_path_factory.mktemp("server") / "stderr.log")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def hostile(fixture_server: str) -> str:
    """Base URL of ``tests/fixtures/pages/hostile``."""
    return f"{fixture_server}/hostile"
