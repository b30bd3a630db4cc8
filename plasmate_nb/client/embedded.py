"""The process-wide embedded engine, living on the background loop.

One engine and one dispatcher per process: every Session (sync or async, on any loop), the
embedded MCP server and every attached observer share it, so an analyst sees exactly the
sessions an external agent drives through the embedded server.
"""

from __future__ import annotations

import threading

from plasmate_nb._loop import background_loop, run_sync
from plasmate_nb.browser import Engine, EngineConfig
from plasmate_nb.client.bound import LoopBoundTransport
from plasmate_nb.client.inprocess import InProcessTransport
from plasmate_nb.tools import Dispatcher

_lock = threading.Lock()
_dispatcher: Dispatcher | None = None


def embedded_dispatcher(config: EngineConfig | None = None) -> Dispatcher:
    """The shared dispatcher (created on first use; its browser starts on the first open).

    Its coroutines must run on the background loop: use :func:`embedded_transport` from
    anywhere else. ``config`` applies only to the call that creates the engine.
    """
    global _dispatcher
    with _lock:
        if _dispatcher is None:
            _dispatcher = Dispatcher(Engine(config or EngineConfig()))
        return _dispatcher


async def embedded_transport(config: EngineConfig | None = None) -> LoopBoundTransport:
    """A transport to the embedded engine, usable from any event loop."""
    return LoopBoundTransport(InProcessTransport(embedded_dispatcher(config)), background_loop())


def close_embedded() -> None:
    """Close the embedded engine (its browser and every session); the next use starts anew."""
    global _dispatcher
    with _lock:
        dispatcher, _dispatcher = _dispatcher, None
    if dispatcher is not None:
        run_sync(dispatcher.engine.aclose())
