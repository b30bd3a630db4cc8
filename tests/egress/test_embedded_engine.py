"""The notebook's embedded engine (``Engine(EngineConfig())``: private destinations allowed)
still sends everything through the egress gate, so one code path is tested everywhere; and the
launch switches that close Chromium's other ways out keep Playwright's own feature list.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import pytest_asyncio

from plasmate_nb.browser import Engine, EngineConfig
from plasmate_nb.browser.egress import chromium_args, playwright_disabled_features
from tests.egress.conftest import TIMEOUTS
from tests.egress.harness import ALLOWED_IP, ScriptedResolver, unique


@pytest_asyncio.fixture
async def embedded_like() -> AsyncIterator[tuple[Engine, ScriptedResolver]]:
    """The embedded engine's configuration (``client/embedded.py``), plus a resolver to watch."""
    resolver = ScriptedResolver()
    config = dataclasses.replace(EngineConfig(), endpoint=None, resolver=resolver, **TIMEOUTS)
    async with Engine(config) as running:
        yield running, resolver


async def test_the_embedded_engine_goes_through_the_gate(site, embedded_like) -> None:
    engine, resolver = embedded_like
    assert engine.config.allow_private_network is True  # the notebook's default
    name = unique("embedded-") + ".test"  # only the gate's resolver knows it
    resolver.script(name, [ALLOWED_IP])

    session = await engine.open(f"http://{name}:{site.origin.port}/blank.html")
    assert engine.gate is not None and engine.gate.policy.allow_private_network is True
    # Chromium resolves no name itself: the page loaded only because the gate resolved the name.
    assert resolver.calls_for(name) >= 1
    assert [hit.host for hit in site.origin.hits("/blank.html")][-1] == f"{name}:{site.origin.port}"
    await engine.close_session(session.id)


def test_the_disabled_features_switch_keeps_playwrights_list() -> None:
    """Chromium keeps only the last ``--disable-features``: ours must carry Playwright's too. An
    empty list read from the driver would silently drop them, so it must not be empty."""
    theirs = playwright_disabled_features()
    assert theirs
    switches = [arg for arg in chromium_args() if arg.startswith("--disable-features=")]
    assert len(switches) == 1
    ours = switches[0].removeprefix("--disable-features=").split(",")
    assert set(theirs) <= set(ours) and "WebRtcHideLocalIpsWithMdns" in ours
