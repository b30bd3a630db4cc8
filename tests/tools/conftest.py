"""A real engine + dispatcher on the bundled demo site, shared by the tools tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from plasmate_nb.browser import Engine, EngineConfig
from plasmate_nb.tools import Dispatcher
from tests.support import Caller


@pytest_asyncio.fixture(scope="module")
async def dispatcher() -> AsyncIterator[Dispatcher]:
    engine = Engine(EngineConfig(max_sessions=4, action_timeout=5.0, settle_timeout=1.0))
    try:
        yield Dispatcher(engine)
    finally:
        await engine.aclose()


@pytest.fixture
def call(dispatcher: Dispatcher) -> Caller:
    return Caller(dispatcher)
