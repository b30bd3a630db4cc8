"""The process-wide embedded engine, living on the background loop.

One engine and one dispatcher per process: every Session (sync or async, on any loop), the
embedded MCP server and every attached observer share it, so an analyst sees exactly the
sessions an external agent drives through the embedded server.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from plasmate_nb import errors
from plasmate_nb._loop import background_loop, run_sync
from plasmate_nb.browser import Engine, EngineConfig
from plasmate_nb.browser.config import EnvironmentSettingError
from plasmate_nb.client.bound import LoopBoundTransport
from plasmate_nb.client.inprocess import InProcessTransport
from plasmate_nb.tools import Dispatcher

if TYPE_CHECKING:
    from plasmate_nb.server.http import HttpServer

PORT_IN_USE_HINT = (
    "if this notebook served on that port before (a cell run twice), call stop() on that server first"
)
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
            _dispatcher = Dispatcher(Engine(config or _config_from_env()))
        return _dispatcher


def _config_from_env() -> EngineConfig:
    """The default settings, read from the environment now: at the engine's first use only."""
    try:
        return EngineConfig()
    except EnvironmentSettingError as error:  # in a notebook: say when the setting is read
        error.with_hint(errors.RENDERER_MEMORY_SETTING_HINT)
        raise


async def embedded_transport(
    config: EngineConfig | None = None, *, replay_execution: bool = False
) -> LoopBoundTransport:
    """A transport to the embedded engine, usable from any event loop.

    ``replay_execution=True`` is the operator's opt-in to ``replay_execute`` for the whole
    embedded engine (every session and embedded server of this process); it is never turned
    off again before ``close_embedded()``.
    """
    dispatcher = embedded_dispatcher(config)
    if replay_execution:
        dispatcher.replay_execution = True
    return LoopBoundTransport(InProcessTransport(dispatcher), background_loop())


def close_embedded() -> None:
    """Close the embedded engine (its browser and every session); the next use starts anew."""
    global _dispatcher
    with _lock:
        dispatcher, _dispatcher = _dispatcher, None
    if dispatcher is not None:
        run_sync(dispatcher.engine.aclose())


class EmbeddedHttpServer:
    """The MCP server over streamable HTTP on the embedded engine: what an agent connects to.

    Made by :func:`serve_embedded_http`; ``url`` and ``token`` are what an agent needs, and
    ``stop()`` (a coroutine for the background loop) shuts it down. The token never shows in
    a repr.
    """

    def __init__(self, server: HttpServer) -> None:
        self._server = server

    @property
    def url(self) -> str:
        """The endpoint, e.g. ``http://127.0.0.1:<port>/mcp``."""
        return self._server.url

    @property
    def token(self) -> str:
        """The bearer token an agent must send (a credential: keep it out of logs)."""
        assert self._server.token is not None
        return self._server.token

    async def stop(self) -> None:
        """Stop serving (the engine and its sessions stay: they are the process's own)."""
        await self._server.stop()

    def __repr__(self) -> str:
        return f"EmbeddedHttpServer(url={self.url!r})"


async def serve_embedded_http(
    *, host: str = "127.0.0.1", port: int = 0, token: str | None = None, allowed_origins: tuple[str, ...] = ()
) -> EmbeddedHttpServer:
    """Start the MCP server over streamable HTTP on the embedded engine; await it on the background loop.

    ``port=0`` picks a free port; without ``token`` one is generated. Binds loopback only.

    >>> server = run_sync(serve_embedded_http())
    """
    from plasmate_nb.server.http import HttpServer, ServerConfigError  # lazy: uvicorn only when serving

    server = HttpServer(
        embedded_dispatcher(), host=host, port=port, token=token, allowed_origins=allowed_origins
    )
    try:
        await server.start()
    except ServerConfigError as error:
        if error.port_in_use:  # in a notebook, most often a serve cell run a second time
            error.with_hint(PORT_IN_USE_HINT)
        raise
    return EmbeddedHttpServer(server)
