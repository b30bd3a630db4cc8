"""127.0.0.1 itself as the blocked host: the one address Chromium may still resolve on its own
(``--host-resolver-rules … EXCLUDE 127.0.0.1``, so it can reach the gate), and the address the
other egress tests must allow for their pages. Here the pages come from an allowed *name* on
127.0.0.1 and the address itself is blocked, so anything that reaches a listener on 127.0.0.1
went around the gate.

Loopback goes through a proxy only because Playwright adds ``<-loopback>`` to Chromium's bypass
list, and it leaves that out when ``PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK`` is set
in the environment: a page then reached 127.0.0.1 straight, never seen by the gate.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from plasmate_nb.browser import Engine, EngineConfig
from tests.egress.conftest import TIMEOUTS, Refusals
from tests.egress.harness import ALLOWED_IP, LEAK_ANSWER, ScriptedResolver, TcpListener, unique

LOOPBACK_SWITCH = "PLAYWRIGHT_DISABLE_FORCED_CHROMIUM_PROXIED_LOOPBACK"


@pytest.fixture
def victim() -> Iterator[TcpListener]:
    """A service on 127.0.0.1 that must never be reached."""
    listener = TcpListener("victim-127.0.0.1", ALLOWED_IP, answer=LEAK_ANSWER)
    try:
        yield listener
    finally:
        listener.close()


@pytest_asyncio.fixture(params=["default environment", LOOPBACK_SWITCH])
async def strict(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, resolver: ScriptedResolver
) -> AsyncIterator[tuple[Engine, str]]:
    """An engine that blocks every private address, 127.0.0.1 included, and allows one name on
    127.0.0.1 (the page's origin). Launched with or without the loopback switch set."""
    if request.param == LOOPBACK_SWITCH:
        monkeypatch.setenv(LOOPBACK_SWITCH, "1")  # the driver Playwright starts inherits it
    name = unique("strict-") + ".test"
    resolver.script(name, [ALLOWED_IP])
    config = EngineConfig(
        allow_private_network=False, allowed_hosts=(name,), resolver=resolver, max_sessions=1, **TIMEOUTS
    )
    async with Engine(config) as engine:
        yield engine, name


async def test_a_page_never_reaches_127_0_0_1_around_the_gate(site, strict, victim) -> None:
    engine, name = strict
    refusals = Refusals(engine)
    session = await engine.open(f"http://{name}:{site.origin.port}/blank.html")
    target = f"http://{ALLOWED_IP}:{victim.port}"
    outcomes = await session.evaluate(
        "Promise.all(["
        f"fetch('{target}/fetch', {{mode: 'no-cors'}}).then(() => 'answered', () => 'failed'),"
        f"new Promise(done => {{ const i = new Image(); i.onload = i.onerror = () => done('settled'); "
        f"i.src = '{target}/img'; }}),"
        "])"
    )
    assert victim.since(0) == [], f"127.0.0.1 was reached around the gate ({outcomes})"
    await refusals.wait(ALLOWED_IP, victim.port, count=2)  # both went to the gate, which refused them
    await engine.close_session(session.id)
