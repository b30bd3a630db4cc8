"""The process-wide embedded engine: one engine and dispatcher per event loop.

The notebook runs everything on one background loop, so in practice there is one engine per
process, shared by every Session, the embedded MCP server and any attached observer.
"""

from __future__ import annotations

import asyncio

from plasmate_nb.browser import Engine, EngineConfig
from plasmate_nb.client.inprocess import InProcessTransport
from plasmate_nb.tools import Dispatcher

_DISPATCHERS: dict[asyncio.AbstractEventLoop, Dispatcher] = {}


def embedded_dispatcher(config: EngineConfig | None = None) -> Dispatcher:
    """The dispatcher over this loop's embedded engine (created on first use, browser started lazily)."""
    loop = asyncio.get_running_loop()
    dispatcher = _DISPATCHERS.get(loop)
    if dispatcher is None:
        dispatcher = _DISPATCHERS[loop] = Dispatcher(Engine(config or EngineConfig()))
    return dispatcher


async def embedded_transport(config: EngineConfig | None = None) -> InProcessTransport:
    return InProcessTransport(embedded_dispatcher(config))


async def close_embedded() -> None:
    """Close this loop's embedded engine (its browser and every session)."""
    dispatcher = _DISPATCHERS.pop(asyncio.get_running_loop(), None)
    if dispatcher is not None:
        await dispatcher.engine.aclose()
