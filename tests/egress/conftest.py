"""Fixtures for the egress-gate attack tests (SPEC: every byte Chromium sends passes the gate).

One recording site for the whole run (:mod:`tests.egress.harness`), one scripted resolver (the
gate's only DNS, so no test ever asks a real resolver), and per module one strict engine that
allows ``127.0.0.1/32`` and nothing else private: 127.0.0.2 is the blocked host every attack
aims at. Each test gets a :class:`BlockedSide` marking what the blocked listeners had seen
when it started.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator

import pytest
import pytest_asyncio

from plasmate_nb.browser import BrowserSession, Engine, EngineConfig
from plasmate_nb.tools import Dispatcher
from tests.egress.harness import ALLOWED_IP, BLOCKED_IP, BlockedSide, ScriptedResolver, Site
from tests.support import Caller, wait_until

TIMEOUTS = {"navigation_timeout": 5.0, "action_timeout": 3.0, "evaluate_timeout": 5.0, "settle_timeout": 1.0}


@pytest.fixture(scope="session")
def site() -> Iterator[Site]:
    running = Site()
    try:
        yield running
    finally:
        running.close()


@pytest.fixture(scope="session")
def resolver() -> ScriptedResolver:
    return ScriptedResolver(
        {
            "blocked.test": [[BLOCKED_IP]],
            "allowed.test": [[ALLOWED_IP]],
        }
    )


@pytest_asyncio.fixture(scope="module")
async def engine(resolver: ScriptedResolver) -> AsyncIterator[Engine]:
    config = EngineConfig(
        allow_private_network=False,
        allowed_networks=(f"{ALLOWED_IP}/32",),
        resolver=resolver,
        max_sessions=4,
        **TIMEOUTS,
    )
    async with Engine(config) as running:
        yield running


@pytest.fixture
def blocked(site: Site) -> BlockedSide:
    return BlockedSide(site.blocked)


@pytest.fixture
def call(engine: Engine) -> Caller:
    """Tool calls on the module's engine, as an MCP client makes them (traced)."""
    return Caller(Dispatcher(engine))


@pytest_asyncio.fixture
async def open_session(engine: Engine) -> AsyncIterator[Callable[..., object]]:
    """``await open_session(url)``: a session closed when the test ends."""
    opened: list[BrowserSession] = []

    async def opener(url: str) -> BrowserSession:
        session = await engine.open(url)
        opened.append(session)
        return session

    yield opener
    for session in opened:
        if session in engine.sessions():
            await engine.close_session(session.id)


class Refusals:
    """The gate's refusals after a point in time, to wait on (``engine.gate.refusals()``)."""

    def __init__(self, engine: Engine) -> None:
        assert engine.gate is not None, "the engine has no egress gate"
        self._gate = engine.gate
        self._since = max((refusal.serial for refusal in self._gate.refusals()), default=0)

    def of(self, host: str, port: int) -> list[object]:
        return [
            refusal
            for refusal in self._gate.refusals()
            if refusal.serial > self._since and (refusal.host, refusal.port) == (host, port)
        ]

    async def wait(self, host: str, port: int, count: int = 1, timeout: float = 10.0) -> list[object]:
        """Until the gate has refused ``host:port`` at least ``count`` times; returns them."""

        def enough() -> list[object]:
            found = self.of(host, port)
            return found if len(found) >= count else []

        return await wait_until(enough, timeout, f"the gate to refuse {host}:{port} {count} time(s)")


@pytest_asyncio.fixture
async def refusals(engine: Engine) -> Refusals:
    await engine.start()
    return Refusals(engine)
